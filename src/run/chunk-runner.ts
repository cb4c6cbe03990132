// Running a part of a replay's packets on a data plane of its own: each worker
// thread has one (./worker.ts), and so does the main thread (./workers.ts has
// the model). It runs its packets of each chunk and hands back every capture
// record with the number of the input packet it came from, and its trace lines.
//
// The data plane writes capture records itself (assembly/pipeline/capture.ts)
// and they name no packet; so each packet enters with its index in the chunk
// in place of its timestamp's nanoseconds, which every record of it (copies
// too) carries in the record header. Reading the records back puts the real
// nanoseconds in and keeps the index: the packet's number.

import type { CompiledSpec } from "../control/compiled.js";
import { resolveEndpoint } from "../control/endpoints.js";
import { install } from "../control/install.js";
import { MAX_CAP_LEN_DEFAULT } from "../pcap/index.js";
import { R_CAP_LEN, R_TS_FRAC, RECORD_HEADER_LEN } from "../pcap/pcap-layout.js";
import { DataPlane } from "../wasm/module.js";
import { type CaptureTargets, DEFAULT_RUNNER, type InputBatch, Runner } from "../wasm/runner.js";
import { assignCaptures } from "./outputs.js";
import { type Counters, readCounters } from "./summary.js";
import { TraceWriter } from "./trace.js";
import type { ChunkArrays, ChunkMessage, ChunkResult, PartInfo, ResultArea, RunnerSetup } from "./workers.js";

/** One capture's records of the chunk being run; the buffers are kept from chunk to chunk. */
interface Collected {
  bytes: Uint8Array;
  used: number;
  packets: Uint32Array;
  ends: Uint32Array;
  records: number;
}

class Records implements CaptureTargets {
  readonly count: number;
  /** The chunk being run: record tags index its packets. */
  chunk: { readonly first: number; readonly tsNsec: Uint32Array } | undefined;
  readonly #collected: (Collected | undefined)[] = [];

  constructor(count: number) {
    this.count = count;
  }

  write(c: number, data: Uint8Array, start: number, len: number): void {
    const chunk = this.chunk;
    if (chunk === undefined) throw new Error("capture records outside a chunk");
    let p = this.#collected[c];
    if (p === undefined) {
      p = { bytes: new Uint8Array(Math.max(1 << 16, 2 * len)), used: 0, packets: new Uint32Array(1024), ends: new Uint32Array(1024), records: 0 };
      this.#collected[c] = p;
    }
    if (p.used + len > p.bytes.length) p.bytes = grown(p.bytes, p.used + len, p.used);
    const bytes = p.bytes;
    bytes.set(data.subarray(start, start + len), p.used);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const nsec = chunk.tsNsec;
    const first = chunk.first;
    const end = p.used + len;
    let packets = p.packets;
    let ends = p.ends;
    let k = p.records;
    for (let r = p.used; r < end; ) {
      const tag = view.getUint32(r + R_TS_FRAC, true);
      view.setUint32(r + R_TS_FRAC, nsec[tag] ?? 0, true);
      r += RECORD_HEADER_LEN + view.getUint32(r + R_CAP_LEN, true);
      if (k === packets.length) {
        packets = p.packets = grown(packets, 2 * k, k);
        ends = p.ends = grown(ends, 2 * k, k);
      }
      packets[k] = first + tag;
      ends[k] = r;
      k++;
    }
    p.records = k;
    p.used = end;
  }

  /**
   * Copies the chunk's records into `area` (one capture after another) and
   * empties the buffers; returns where each capture's are, and the area, made
   * larger when they did not fit.
   */
  take(area: ResultArea | undefined): { parts: PartInfo[]; area: ResultArea; grew: boolean } {
    let bytes = 0;
    let records = 0;
    for (const p of this.#collected) {
      bytes += p?.used ?? 0;
      records += p?.records ?? 0;
    }
    let a = area;
    const grew = a === undefined || a.bytes.length < bytes || a.packets.length < records;
    if (a === undefined || grew) {
      const b = Math.max(bytes, 2 * (a?.bytes.length ?? 1 << 18));
      const n = Math.max(records, 2 * (a?.packets.length ?? 4096));
      a = { bytes: new Uint8Array(new SharedArrayBuffer(b)), packets: new Uint32Array(new SharedArrayBuffer(4 * n)), ends: new Uint32Array(new SharedArrayBuffer(4 * n)) };
    }
    const parts: PartInfo[] = [];
    let at = 0;
    let first = 0;
    this.#collected.forEach((p, capture) => {
      if (p === undefined || p.records === 0) return;
      a.bytes.set(p.bytes.subarray(0, p.used), at);
      a.packets.set(p.packets.subarray(0, p.records), first);
      a.ends.set(p.ends.subarray(0, p.records), first);
      parts.push({ capture, at, used: p.used, first, records: p.records });
      at += p.used;
      first += p.records;
      p.used = 0;
      p.records = 0;
    });
    return { parts, area: a, grew };
  }
}

/** A copy of `a` with room for `length` elements, keeping the first `keep`. */
function grown<T extends Uint8Array | Uint32Array>(a: T, length: number, keep: number): T {
  const b = new (a.constructor as new (n: number) => T)(Math.max(length, 2 * a.length));
  b.set(a.subarray(0, keep));
  return b;
}

/** Runs its packets of each chunk on a data plane of its own: in a worker thread, or on the main thread. */
export class ChunkRunner {
  readonly #setup: RunnerSetup;
  readonly #compiled: CompiledSpec;
  readonly #dp: DataPlane;
  readonly #installed: ReturnType<typeof install>;
  readonly #records: Records;
  readonly #slots: ChunkArrays[];
  /** Per chunk slot: where this worker's records of the chunk in it go, on memory the main thread reads. */
  readonly #areas: (ResultArea | undefined)[] = [];
  #runner: Runner | undefined;
  #trace: TraceWriter | undefined;
  #lines: { packets: number[]; texts: string[] } = { packets: [], texts: [] };
  // One sub-batch of this worker's packets, with the tags in place of nanoseconds.
  readonly #batch: { offset: Uint32Array; capLen: Uint32Array; origLen: Uint32Array; tsSec: Float64Array; tsNsec: Uint32Array; tag: Uint32Array; endpoint: Uint32Array; numbers: Uint32Array };

  constructor(setup: RunnerSetup) {
    this.#setup = setup;
    this.#compiled = setup.compiled;
    this.#dp = DataPlane.load();
    const endpoints = setup.endpoints.map((e) => resolveEndpoint(this.#compiled, e));
    this.#installed = install(this.#dp, this.#compiled, endpoints);
    this.#slots = [...setup.slots];
    this.#records = new Records(assignCaptures(this.#compiled, this.#dp).length);
    const n = DEFAULT_RUNNER.batchPackets;
    this.#batch = {
      offset: new Uint32Array(n),
      capLen: new Uint32Array(n),
      origLen: new Uint32Array(n),
      tsSec: new Float64Array(n),
      tsNsec: new Uint32Array(n),
      tag: new Uint32Array(n),
      endpoint: new Uint32Array(n),
      numbers: new Uint32Array(n),
    };
  }

  /** Before the first chunk of a run: counters from zero. */
  start(): void {
    const s = this.#setup;
    this.#dp.exports.countersReset();
    this.#runner = new Runner(
      this.#dp,
      { trace: s.trace, maxFanout: this.#compiled.maxFanout, hopLimit: s.hopLimit, copyLimit: s.copyLimit, slotLenMax: MAX_CAP_LEN_DEFAULT + DEFAULT_RUNNER.headroom },
      this.#records,
    );
    this.#trace = s.trace ? new TraceWriter({ line: (packet, text) => (this.#lines.packets.push(packet), this.#lines.texts.push(text)) }, this.#compiled, this.#installed.entries) : undefined;
  }

  /** Runs this data plane's packets of a chunk; returns their records and trace lines. */
  chunk(message: ChunkMessage): ChunkResult {
    const runner = this.#runner;
    const slot = this.#slots[message.slot];
    if (runner === undefined || slot === undefined) throw new Error("chunk before start, or in no slot");
    const chunk = message.data === undefined ? slot : (this.#slots[message.slot] = { ...slot, data: message.data });
    const first = message.first;
    this.#records.chunk = { first, tsNsec: chunk.tsNsec };
    const b = this.#batch;
    const max = b.offset.length;
    const trace = this.#trace;
    const sink = trace === undefined ? null : { packet: () => {}, event: trace.event.bind(trace) };
    const names = this.#setup.endpoints;
    let n = 0;
    const run = (): void => {
      const staged: InputBatch = { data: chunk.data, count: n, offset: b.offset, capLen: b.capLen, origLen: b.origLen, tsSec: b.tsSec, tsNsec: b.tag, endpoint: b.endpoint };
      trace?.startBatch(0, { ...staged, tsNsec: b.tsNsec }, names, b.numbers);
      runner.run(staged, 0, sink);
      trace?.endLine(); // the next sub-batch numbers its packets from 0 again
      n = 0;
    };
    const { offset, capLen, origLen, tsSec, tsNsec, endpoint, mine } = chunk;
    for (let k = 0; k < message.count; k++) {
      const i = mine[k] ?? 0;
      b.offset[n] = offset[i] ?? 0;
      b.capLen[n] = capLen[i] ?? 0;
      b.origLen[n] = origLen[i] ?? 0;
      b.tsSec[n] = tsSec[i] ?? 0;
      b.tsNsec[n] = tsNsec[i] ?? 0;
      b.tag[n] = i;
      b.endpoint[n] = endpoint[i] ?? 0;
      b.numbers[n] = first + i;
      if (++n === max) run();
    }
    if (n > 0) run();
    runner.flushCaptures();
    this.#records.chunk = undefined;
    const { parts, area, grew } = this.#records.take(this.#areas[message.slot]);
    this.#areas[message.slot] = area;
    const lines = this.#lines;
    this.#lines = { packets: [], texts: [] };
    return { kind: "chunk", id: message.id, parts, ...(grew ? { area } : {}), lines };
  }

  /** The counters since start(). */
  counters(): Counters {
    return readCounters(this.#dp, this.#installed);
  }
}
