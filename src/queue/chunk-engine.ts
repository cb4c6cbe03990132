// A queue worker's engine for one run (./worker.ts): the description of the run's setup compiled and installed on a
// data plane of its own, as every worker thread's is (src/run/chunk-runner.ts), and a chunk's parts run through it
// as that runner runs them (each part one batch, or packets put in the engine's input area, numbered from the chunk's
// first packet). What the engine writes is kept: each recording's records, the trace lines, the counters of the chunk
// alone. With --updates, the engine is first brought to the tables a one-thread replay had before the chunk's first
// packet (the updates before it applied in order; an engine that is past them, having run a later chunk, opened
// afresh), and the chunk's parts are cut at the updates' times as that replay cut them (src/run/updates.ts): the same
// updates come due at the same packets, for the decision is the packets' timestamps against the updates still to come.

import { crc32 } from "node:zlib";
import { compile } from "../control/compile.js";
import type { CompiledSpec } from "../control/compiled.js";
import { parseSpec } from "../description/load.js";
import { Engine } from "../engine/engine.js";
import type { TraceLines } from "../engine/trace-file.js";
import { PreparedUpdates, UpdateSchedule } from "../run/updates.js";
import type { InputBatch } from "../wasm/runner.js";
import type { ChunkOutputs } from "./chunk-codec.js";
import type { RunSetup } from "./protocol.js";

/** A recording's first buffer: grown, by doubling, to what the chunk writes. */
const FIRST_BYTES = 1 << 16;

/**
 * Records of a chunk, by recording, in the order of their first: one growing buffer each, copied once. The buffers
 * serve chunk after chunk (grown to the largest: no new pages to fault in, no growing again), so what take() returns is
 * valid until the next chunk's first write.
 */
class Records {
  readonly #bytes = new Map<number, { buf: Uint8Array; used: number }>();
  /** The recordings this chunk wrote, in the order of their first record. */
  #order: number[] = [];

  write(c: number, data: Uint8Array, start: number, len: number): void {
    let r = this.#bytes.get(c);
    if (r === undefined) this.#bytes.set(c, (r = { buf: new Uint8Array(Math.max(FIRST_BYTES, len)), used: 0 }));
    if (r.used === 0) this.#order.push(c);
    if (r.used + len > r.buf.length) {
      const grown = new Uint8Array(Math.max(2 * r.buf.length, r.used + len));
      grown.set(r.buf.subarray(0, r.used));
      r.buf = grown;
    }
    r.buf.set(data.subarray(start, start + len), r.used);
    r.used += len;
  }

  /** Forgets what a chunk that failed part-way wrote. */
  clear(): void {
    for (const r of this.#bytes.values()) r.used = 0;
    this.#order = [];
  }

  take(): ChunkOutputs["records"] {
    const out = this.#order.flatMap((recording) => {
      const r = this.#bytes.get(recording);
      if (r === undefined) return [];
      const bytes = r.buf.subarray(0, r.used);
      r.used = 0;
      return [{ recording, bytes, crc: crc32(bytes) }];
    });
    this.#order = [];
    return out;
  }
}

/**
 * A chunk's packets as the engine takes them, in order: batches, or a count of packets just put in its input area
 * (run before the next is taken: a generator's order).
 */
export type ChunkParts = (engine: Engine) => Iterable<InputBatch | number>;

export class ChunkEngine {
  #engine: Engine;
  readonly #setup: RunSetup;
  readonly #compiled: CompiledSpec;
  /** The run's updates, and how many of them the engine has applied. */
  readonly #updates: PreparedUpdates | undefined;
  #applied = 0;
  readonly #records = new Records();

  /** Compiles and installs the setup's description: SpecError (its lines) if it does not. */
  constructor(setup: RunSetup) {
    this.#setup = setup;
    this.#compiled = compile(parseSpec(setup.description, setup.spec));
    this.#engine = this.#open();
    const u = setup.updates;
    if (u !== undefined) this.#updates = new PreparedUpdates(u.list, new Map(u.descriptions));
  }

  #open(): Engine {
    const s = this.#setup;
    return Engine.open({
      compiled: this.#compiled,
      endpoints: s.endpoints,
      hopLimit: s.hopLimit,
      copyLimit: s.copyLimit,
    });
  }

  /** The updates' schedule for a chunk after `before` of them, on an engine that is not past them. */
  #schedule(before: number): UpdateSchedule | undefined {
    if (this.#updates === undefined) return undefined;
    if (this.#applied > before) [this.#engine, this.#applied] = [this.#open(), 0];
    return new UpdateSchedule(this.#updates, this.#engine, this.#applied);
  }

  /**
   * Runs `parts`, their packets numbered from `first`, after `updatesBefore` of the run's updates; what the engine
   * wrote for them (its records views valid until the next run), and the packets run.
   */
  run(parts: ChunkParts, first: number, updatesBefore = 0): ChunkOutputs & { readonly packets: number } {
    const s = this.#setup;
    const schedule = this.#schedule(updatesBefore);
    const engine = this.#engine;
    const records = this.#records;
    records.clear();
    const text: string[] = [];
    const packets: number[] = [];
    const bytes: number[] = [];
    const lines: TraceLines = {
      line: (packet, line, len) => {
        text.push(line);
        packets.push(packet);
        bytes.push(len);
      },
    };
    engine.connect({
      recordings: records,
      ...(s.trace ? { trace: { lines, ...(s.tracePackets !== undefined ? { packets: s.tracePackets } : {}) } } : {}),
    });
    try {
      schedule?.applyNext(updatesBefore - this.#applied, first);
      let number = first;
      for (const part of parts(engine)) {
        // A count of packets in the input area is a --shared range: never sent with updates.
        for (const cut of schedule === undefined || typeof part === "number" ? [part] : schedule.cut(part, number)) {
          engine.run(cut, number);
          number += typeof cut === "number" ? cut : cut.count;
        }
      }
      engine.settle();
      return {
        records: records.take(),
        lines: { text: text.join(""), packets, bytes },
        counters: engine.counters(),
        packets: number - first,
      };
    } finally {
      engine.disconnect();
      // The schedule started at the updates applied before it.
      this.#applied += schedule?.appliedCount ?? 0;
    }
  }
}
