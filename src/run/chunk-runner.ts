// Running a part of a replay's packets on a data plane of its own: each worker
// thread has one (./worker.ts), and so does the main thread (./workers.ts has
// the model). It reads the inputs itself, as every data plane does, and runs
// the packets whose flow hash names it; for each chunk of the replay's packets
// it hands back every capture record with the number of the input packet it
// came from, and its trace lines.
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
import { type FlowBytes, flowBytes, flowHash, planeOf } from "./flow.js";
import { type Inputs, openInputs } from "./inputs.js";
import { assignCaptures } from "./outputs.js";
import { type Counters, readCounters } from "./summary.js";
import { TraceWriter } from "./trace.js";
import type { ChunkResult, PartInfo, ResultArea, RunnerSetup } from "./workers.js";

/** Packets per chunk: many sub-batches per message, few enough that running and writing overlap. */
export const CHUNK_PACKETS = 8192;

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
  readonly #endpoints: ReturnType<typeof resolveEndpoint>[];
  readonly #flow: (FlowBytes | undefined)[];
  readonly #records: Records;
  /** Per chunk slot: where this data plane's records of the chunk in it go, on memory the main thread reads. */
  readonly #areas: (ResultArea | undefined)[] = [];
  /** Packets #select() put in the sub-batch. */
  #selected = 0;
  // One sub-batch of this data plane's packets, with the tags in place of nanoseconds.
  readonly #batch: { offset: Uint32Array; capLen: Uint32Array; origLen: Uint32Array; tsSec: Float64Array; tsNsec: Uint32Array; tag: Uint32Array; endpoint: Uint32Array; numbers: Uint32Array };

  constructor(setup: RunnerSetup) {
    this.#setup = setup;
    this.#compiled = setup.compiled;
    this.#dp = DataPlane.load();
    this.#endpoints = setup.endpoints.map((e) => resolveEndpoint(this.#compiled, e));
    this.#flow = this.#endpoints.map((e) => flowBytes(e.network.spec.design, e.kind === "session"));
    this.#installed = install(this.#dp, this.#compiled, this.#endpoints);
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

  /** The replay's inputs, opened as the main thread opens them: every data plane reads the same batches. */
  openInputs(): Inputs {
    return openInputs(this.#endpoints, this.#setup.files, DEFAULT_RUNNER.batchPackets);
  }

  /**
   * Reads `inputs` to the end and runs this data plane's packets (counters
   * from zero). After each chunk of CHUNK_PACKETS packets (the last may be
   * shorter), `ready(id)` is called before its records go to the result area
   * of slot id % slots, then `done` with them. Returns the packets it ran.
   */
  replay(inputs: Inputs, slots: number, ready: (id: number) => void, done: (result: ChunkResult) => void): number {
    const s = this.#setup;
    const dp = this.#dp;
    dp.exports.countersReset();
    const runner = new Runner(
      dp,
      { trace: s.trace, maxFanout: this.#compiled.maxFanout, hopLimit: s.hopLimit, copyLimit: s.copyLimit, slotLenMax: MAX_CAP_LEN_DEFAULT + DEFAULT_RUNNER.headroom },
      this.#records,
    );
    let lines: { packets: number[]; texts: string[] } = { packets: [], texts: [] };
    const trace = s.trace ? new TraceWriter({ line: (packet, text) => (lines.packets.push(packet), lines.texts.push(text)) }, this.#compiled, this.#installed.entries) : undefined;
    const sink = trace === undefined ? null : { packet: () => {}, event: trace.event.bind(trace) };
    const names = s.endpoints;
    const b = this.#batch;
    /** The real nanoseconds of the chunk's packets, by index in the chunk. */
    const nsec = new Uint32Array(CHUNK_PACKETS);
    const records = this.#records;
    records.chunk = { first: 0, tsNsec: nsec };
    let id = 0;
    let first = 0;
    let ran = 0;
    const run = (data: Uint8Array, n: number): void => {
      const staged: InputBatch = { data, count: n, offset: b.offset, capLen: b.capLen, origLen: b.origLen, tsSec: b.tsSec, tsNsec: b.tag, endpoint: b.endpoint };
      trace?.startBatch(0, { ...staged, tsNsec: b.tsNsec }, names, b.numbers);
      runner.run(staged, 0, sink);
      trace?.endLine(); // the next sub-batch numbers its packets from 0 again
      ran += n;
    };
    const endChunk = (): void => {
      runner.flushCaptures();
      ready(id);
      const slot = id % slots;
      const { parts, area, grew } = records.take(this.#areas[slot]);
      this.#areas[slot] = area;
      done({ kind: "chunk", id, parts, ...(grew ? { area } : {}), lines });
      lines = { packets: [], texts: [] };
      id++;
      first += CHUNK_PACKETS;
      records.chunk = { first, tsNsec: nsec };
    };
    /** The replay's number of the batch's first packet. */
    let number = 0;
    for (const batch of inputs.batches()) {
      const count = batch.count;
      for (let i = 0; i < count; ) {
        if (number + i - first === CHUNK_PACKETS) endChunk();
        i = this.#select(batch, i, Math.min(count, first + CHUNK_PACKETS - number), number, first, nsec);
        if (this.#selected > 0) run(batch.data, this.#selected);
      }
      number += count;
    }
    if (number > first) endChunk();
    records.chunk = undefined;
    return ran;
  }

  /**
   * Puts this data plane's packets of batch[from .. end) in the sub-batch, up
   * to its size (#selected of them), tagged by their index in the chunk from
   * `first`; `number` is the replay's number of the batch's packet 0. Returns
   * where it stopped. Their real nanoseconds go to nsec[tag].
   */
  #select(batch: InputBatch, from: number, end: number, number: number, first: number, nsec: Uint32Array): number {
    const { data, offset, capLen, origLen, tsSec, tsNsec, endpoint } = batch;
    const b = this.#batch;
    const me = this.#setup.index;
    const planes = this.#setup.planes;
    const flow = this.#flow;
    const one = typeof endpoint === "number" ? endpoint : -1;
    const oneFlow = one >= 0 ? flow[one] : undefined;
    const max = b.offset.length;
    let n = 0;
    let i = from;
    for (; i < end && n < max; i++) {
      const ep = one >= 0 ? one : ((endpoint as Uint32Array)[i] as number);
      const at = offset[i] as number;
      const len = capLen[i] as number;
      if (planeOf(flowHash(data, at, len, ep, one >= 0 ? oneFlow : flow[ep]), planes) !== me) continue;
      const tag = number + i - first;
      const ns = tsNsec[i] as number;
      nsec[tag] = ns;
      b.offset[n] = at;
      b.capLen[n] = len;
      b.origLen[n] = origLen[i] as number;
      b.tsSec[n] = tsSec[i] as number;
      b.tsNsec[n] = ns;
      b.tag[n] = tag;
      b.endpoint[n] = ep;
      b.numbers[n] = number + i;
      n++;
    }
    this.#selected = n;
    return i;
  }

  /** The counters since the last replay() began. */
  counters(): Counters {
    return readCounters(this.#dp, this.#installed);
  }
}
