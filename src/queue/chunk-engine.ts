// A queue worker's engine for one run (./worker.ts): the description of the run's setup compiled and installed on a
// data plane of its own, as every worker thread's is (src/run/chunk-runner.ts), and a chunk's parts run through it
// as that runner runs them (each part one batch, numbered from the chunk's first packet). What the engine writes is
// kept: each recording's records, the trace lines, the counters of the chunk alone.

import { compile } from "../control/compile.js";
import { parseSpec } from "../description/load.js";
import { Engine } from "../engine/engine.js";
import type { TraceLines } from "../engine/trace-file.js";
import type { InputBatch } from "../wasm/runner.js";
import type { ChunkOutputs } from "./chunk-codec.js";
import type { RunSetup } from "./protocol.js";

/** Records of a chunk, by recording, in the order of their first record: copied off linear memory as they come. */
class Records {
  readonly #parts = new Map<number, Uint8Array[]>();

  write(c: number, data: Uint8Array, start: number, len: number): void {
    let list = this.#parts.get(c);
    if (list === undefined) this.#parts.set(c, (list = []));
    list.push(data.slice(start, start + len));
  }

  take(): ChunkOutputs["records"] {
    const out = [...this.#parts].map(([recording, parts]) => ({ recording, bytes: Buffer.concat(parts) }));
    this.#parts.clear();
    return out;
  }
}

export class ChunkEngine {
  readonly #engine: Engine;
  readonly #setup: RunSetup;

  /** Compiles and installs the setup's description: SpecError (its lines) if it does not. */
  constructor(setup: RunSetup) {
    this.#setup = setup;
    this.#engine = Engine.open({
      compiled: compile(parseSpec(setup.description, setup.spec)),
      endpoints: setup.endpoints,
      hopLimit: setup.hopLimit,
      copyLimit: setup.copyLimit,
    });
  }

  /** Runs `parts`, their packets numbered from `first`; what the engine wrote for them. */
  run(parts: readonly InputBatch[], first: number): ChunkOutputs {
    const s = this.#setup;
    const engine = this.#engine;
    const records = new Records();
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
      let number = first;
      for (const part of parts) {
        engine.run(part, number);
        number += part.count;
      }
      engine.settle();
      return { records: records.take(), lines: { text: text.join(""), packets, bytes }, counters: engine.counters() };
    } finally {
      engine.disconnect();
    }
  }
}
