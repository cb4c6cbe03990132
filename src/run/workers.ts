// Replay across worker threads (`strata run --workers N`): N data planes with
// the same tables, one on the main thread and N − 1 in worker threads
// (./worker.ts), each a ChunkRunner (./chunk-runner.ts). The main thread reads
// and merges the inputs as a one-thread replay does, and cuts the packet
// stream into chunks of whole batches in shared memory; a flow hash
// (./flow.ts) gives every packet a data plane, so a flow's packets run on one,
// in order. The main thread, which also reads, merges and writes, takes a small
// share of the flows. Each data plane runs its packets of each chunk and hands
// back every capture record and trace line with its input packet's number. The
// main thread merges them in packet order — the order of a one-thread replay,
// where each packet and its copies run to the end before the next — and
// appends them to the files, so every output is the same, byte for byte; the
// counters are summed.
//
// The main thread never waits on its event loop: it blocks in Atomics.wait on
// a counter the workers bump after each message and takes messages with
// receiveMessageOnPort, so a replay stays one synchronous call.

import { closeSync, openSync, writeSync } from "node:fs";
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from "node:worker_threads";
import type { CompiledSpec } from "../control/compiled.js";
import type { ResolvedEndpoint } from "../control/endpoints.js";
import type { InputBatch } from "../wasm/runner.js";
import { type FlowBytes, flowBytes, flowHash } from "./flow.js";
import type { Inputs } from "./inputs.js";
import type { CaptureOutputs } from "./outputs.js";
import { ChunkRunner } from "./chunk-runner.js";
import { addCounters, type Counters } from "./summary.js";

/** The most worker threads `--workers` takes. */
export const WORKERS_MAX = 64;
/**
 * How many data planes a replay gets when --workers is not given: one. Measured with the bench's
 * replay-file scenarios (AMD EPYC, 2 vCPUs), 2 threads ran at 5.49 Mpps against 6.62 on one:
 * the main thread still reads, hands out, merges and writes every packet, so more threads pay
 * only where the data plane's share is large. Asked for, they give the same bytes.
 */
export function defaultWorkers(_totalBytes: number): number {
  return 1;
}

/** Packets per chunk: many batches per message, few enough that reading, running and writing overlap. */
const CHUNK_PACKETS = 8192;
const CHUNK_BYTES = 1 << 20;
/** Hash buckets per worker thread; the main thread's data plane takes one bucket in all (see owner()). */
const BUCKETS_PER_THREAD = 8;
/** Chunks sent and not yet merged: each has a slot of its own. */
const IN_FLIGHT = 3;

/** What a ChunkRunner needs: its data plane's index, the chunk slots as it sees them, the description and the run's options. */
export interface RunnerSetup {
  readonly index: number;
  readonly slots: readonly ChunkArrays[];
  readonly compiled: CompiledSpec;
  /** The --in endpoints as written, in order: injection k is endpoints[k]. */
  readonly endpoints: readonly string[];
  readonly trace: boolean;
  readonly hopLimit: number;
  readonly copyLimit: number;
}

export interface WorkerSetup extends RunnerSetup {
  /** Int32 bumped after every message a worker sends. */
  readonly signal: SharedArrayBuffer;
  readonly port: MessagePort;
}

/** A chunk slot's arrays, on shared memory: packet i is data[offset[i] .. + capLen[i]). */
export interface ChunkArrays {
  readonly data: Uint8Array;
  readonly offset: Uint32Array;
  readonly capLen: Uint32Array;
  readonly origLen: Uint32Array;
  readonly tsSec: Float64Array;
  readonly tsNsec: Uint32Array;
  readonly endpoint: Uint32Array;
  /** The indices of the worker's own packets. */
  readonly mine: Uint32Array;
}

/**
 * A chunk in a slot, packet i of it packet first+i of the replay; the worker's
 * own are mine[0 .. count) (with the slot's new data buffer when it grew).
 */
export interface ChunkMessage {
  readonly kind: "chunk";
  readonly slot: number;
  readonly id: number;
  readonly first: number;
  readonly count: number;
  readonly data?: Uint8Array;
}

export type ToWorker = { readonly kind: "start" } | ChunkMessage | { readonly kind: "finish" };

/**
 * Where a worker puts its records of a chunk, per chunk slot, on shared memory:
 * the main thread reads them before the slot takes another chunk.
 */
export interface ResultArea {
  readonly bytes: Uint8Array;
  readonly packets: Uint32Array;
  readonly ends: Uint32Array;
}

/** One capture's records in a result area: bytes at .. at+used, records first .. first+records−1. */
export interface PartInfo {
  readonly capture: number;
  readonly at: number;
  readonly used: number;
  readonly first: number;
  readonly records: number;
}

/** One capture's records from one worker's part of a chunk: record k is bytes[ends[k−1] .. ends[k]) of packet packets[k]. */
interface RecordPart {
  readonly capture: number;
  readonly bytes: Uint8Array;
  readonly used: number;
  readonly packets: Uint32Array;
  readonly ends: Uint32Array;
  readonly records: number;
}

export interface ChunkResult {
  readonly kind: "chunk";
  readonly id: number;
  readonly parts: PartInfo[];
  /** The worker's new result area for this chunk's slot (it grew), or none: the one before. */
  readonly area?: ResultArea;
  /** Trace lines, each with its packet's number, in order. */
  readonly lines: { readonly packets: number[]; readonly texts: string[] };
}

export type FromWorker = ChunkResult | { readonly kind: "counters"; readonly counters: Counters } | { readonly kind: "error"; readonly message: string };

/**
 * A chunk slot: the packets of one chunk, on shared memory that every worker
 * holds from the start; a chunk message names the slot (and brings the data
 * buffer only when it grew).
 */
class Chunk {
  id = 0;
  first = 0;
  count = 0;
  used = 0;
  bytesRead = 0;
  /** The data buffer was replaced since the workers last saw it. */
  grown = false;
  readonly slot: number;
  data: Uint8Array;
  readonly offset = shared(Uint32Array, CHUNK_PACKETS);
  readonly capLen = shared(Uint32Array, CHUNK_PACKETS);
  readonly origLen = shared(Uint32Array, CHUNK_PACKETS);
  readonly tsSec = shared(Float64Array, CHUNK_PACKETS);
  readonly tsNsec = shared(Uint32Array, CHUNK_PACKETS);
  readonly endpoint = shared(Uint32Array, CHUNK_PACKETS);
  /** Per worker, the chunk indices of its packets, in order, and how many. */
  readonly mine: Uint32Array[];
  readonly counts: number[];

  constructor(slot: number, workers: number) {
    this.slot = slot;
    this.data = shared(Uint8Array, CHUNK_BYTES);
    this.mine = Array.from({ length: workers }, () => shared(Uint32Array, CHUNK_PACKETS));
    this.counts = this.mine.map(() => 0);
  }

  /** Empty, for packets first.. of the replay. */
  reset(id: number, first: number): void {
    this.id = id;
    this.first = first;
    this.count = 0;
    this.used = 0;
    this.counts.fill(0);
  }

  /** Adds a whole batch, giving each packet to a worker by its flow; false when it does not fit (a chunk with nothing in it grows to fit it). */
  add(b: InputBatch, flow: readonly (FlowBytes | undefined)[]): boolean {
    const n = b.count;
    if (n === 0) return true;
    let base = b.offset[0] ?? 0;
    let end = base;
    for (let i = 0; i < n; i++) {
      const at = b.offset[i] ?? 0;
      if (at < base) base = at;
      if (at + (b.capLen[i] ?? 0) > end) end = at + (b.capLen[i] ?? 0);
    }
    const span = end - base;
    if (this.count + n > CHUNK_PACKETS || this.used + span > this.data.length) {
      if (this.count > 0) return false;
      if (span > this.data.length) {
        this.data = shared(Uint8Array, span);
        this.grown = true;
      }
    }
    const at0 = this.count;
    this.data.set(b.data.subarray(base, end), this.used);
    this.capLen.set(b.capLen.subarray(0, n), at0);
    this.origLen.set(b.origLen.subarray(0, n), at0);
    this.tsSec.set(b.tsSec.subarray(0, n), at0);
    this.tsNsec.set(b.tsNsec.subarray(0, n), at0);
    if (typeof b.endpoint === "number") this.endpoint.fill(b.endpoint, at0, at0 + n);
    else this.endpoint.set(b.endpoint.subarray(0, n), at0);
    const shift = this.used - base;
    const data = b.data;
    for (let i = 0; i < n; i++) {
      const at = b.offset[i] ?? 0;
      const k = at0 + i;
      this.offset[k] = at + shift;
      const ep = this.endpoint[k] ?? 0;
      const w = owner(flowHash(data, at, b.capLen[i] ?? 0, ep, flow[ep]), this.mine.length);
      const c = this.counts[w] ?? 0;
      const list = this.mine[w];
      if (list !== undefined) list[c] = k;
      this.counts[w] = c + 1;
    }
    this.count += n;
    this.used += span;
    return true;
  }

  /** The slot's arrays, as worker `w` sees them. */
  arrays(w: number): ChunkArrays {
    const { data, offset, capLen, origLen, tsSec, tsNsec, endpoint } = this;
    return { data, offset, capLen, origLen, tsSec, tsNsec, endpoint, mine: this.mine[w] ?? new Uint32Array(0) };
  }

  /** The message for the chunk (each data plane's count goes in), with the data buffer if it grew since the last. */
  message(): ChunkMessage {
    const m: ChunkMessage = { kind: "chunk", slot: this.slot, id: this.id, first: this.first, count: 0, ...(this.grown ? { data: this.data } : {}) };
    this.grown = false;
    return m;
  }
}

/**
 * The data plane a flow hash runs on. The main thread's (0) takes one bucket of
 * BUCKETS_PER_THREAD × threads + 1, for it also reads, merges and writes; the
 * worker threads (1 ..) share the others.
 */
function owner(hash: number, planes: number): number {
  if (planes === 1) return 0;
  const threads = planes - 1;
  // The top 16 bits scaled to the bucket count: integer arithmetic (a % on a 32-bit unsigned hash is a float remainder).
  const bucket = ((hash >>> 16) * (BUCKETS_PER_THREAD * threads + 1)) >>> 16;
  return bucket === 0 ? 0 : 1 + ((bucket - 1) % threads);
}

function shared<T>(Kind: { new (buffer: SharedArrayBuffer): T; readonly BYTES_PER_ELEMENT: number }, length: number): T {
  return new Kind(new SharedArrayBuffer(length * Kind.BYTES_PER_ELEMENT));
}

interface Thread {
  readonly worker: Worker;
  readonly port: MessagePort;
}

/** Under vitest this module is the TypeScript source; the thread runs the built file (npm run build). */
function workerUrl(): URL {
  return import.meta.url.endsWith(".ts") ? new URL("../../dist/src/run/worker.js", import.meta.url) : new URL("./worker.js", import.meta.url);
}

export interface PoolOptions {
  readonly trace: boolean;
  readonly hopLimit: number;
  readonly copyLimit: number;
}

/**
 * `size` data planes: one on the main thread (index 0), the others in worker
 * threads (index k in thread k − 1).
 */
export class WorkerPool {
  readonly size: number;
  readonly #local: ChunkRunner;
  readonly #threads: Thread[] = [];
  /** Per data plane, its result area per chunk slot. */
  readonly #areas: (ResultArea | undefined)[][];
  readonly #signal = new Int32Array(new SharedArrayBuffer(4));
  readonly #free: Chunk[] = [];
  readonly #flow: (FlowBytes | undefined)[];

  /** `endpoints`: the --in endpoints as written, in order. */
  constructor(size: number, compiled: CompiledSpec, endpoints: readonly ResolvedEndpoint[], options: PoolOptions) {
    this.size = size;
    this.#flow = endpoints.map((e) => flowBytes(e.network.spec.design, e.kind === "session"));
    for (let slot = 0; slot < IN_FLIGHT; slot++) this.#free.push(new Chunk(slot, size));
    this.#areas = Array.from({ length: size }, () => []);
    const texts = endpoints.map((e) => e.text);
    const setup = (index: number): RunnerSetup => ({ index, slots: this.#free.map((c) => c.arrays(index)), compiled, endpoints: texts, ...options });
    this.#local = new ChunkRunner(setup(0));
    try {
      for (let index = 1; index < size; index++) {
        const { port1, port2 } = new MessageChannel();
        const data: WorkerSetup = { ...setup(index), signal: this.#signal.buffer as SharedArrayBuffer, port: port2 };
        const worker = new Worker(workerUrl(), { workerData: data, transferList: [port2] });
        worker.unref();
        this.#threads.push({ worker, port: port1 });
      }
    } catch (err) {
      this.close();
      throw err;
    }
  }

  close(): void {
    for (const t of this.#threads) {
      t.port.close();
      void t.worker.terminate();
    }
    this.#threads.length = 0;
  }

  /** The next message from thread `t`, waiting for it; a worker's failure is thrown here. */
  #receive(t: Thread, index: number): FromWorker {
    for (;;) {
      const seen = Atomics.load(this.#signal, 0);
      const got = receiveMessageOnPort(t.port);
      if (got !== undefined) {
        const message = got.message as FromWorker;
        if (message.kind === "error") throw new Error(`replay worker thread ${index}: ${message.message}`);
        return message;
      }
      Atomics.wait(this.#signal, 0, seen, 1000);
    }
  }

  /**
   * Replays every batch of `inputs` across the workers, writing captures to
   * `outputs` and trace lines to `tracePath`; returns the summed counters.
   */
  replay(
    inputs: Inputs,
    outputs: CaptureOutputs,
    tracePath: string | undefined,
    progress?: (done: number, total: number, packets: number) => void,
  ): { counters: Counters; packets: number[] } {
    const threads = this.#threads;
    for (const t of threads) t.worker.postMessage({ kind: "start" } satisfies ToWorker);
    this.#local.start();
    /** The main thread's results, by chunk id. */
    const local = new Map<number, ChunkResult>();
    const fd = tracePath === undefined ? undefined : openSync(tracePath, "w");
    try {
      const inFlight: Chunk[] = [];
      let next = 0;
      let packets = 0;
      const perPlane = Array<number>(this.size).fill(0);
      const take = (): Chunk => {
        const c = this.#free.pop();
        if (c === undefined) throw new Error("no free chunk slot");
        c.reset(next++, packets);
        return c;
      };
      const send = (c: Chunk): void => {
        c.bytesRead = inputs.bytesRead;
        const message = c.message();
        threads.forEach((t, k) => t.worker.postMessage({ ...message, count: c.counts[k + 1] ?? 0 }));
        c.counts.forEach((n, k) => (perPlane[k] = (perPlane[k] ?? 0) + n));
        local.set(c.id, this.#local.chunk({ ...message, count: c.counts[0] ?? 0 }));
        inFlight.push(c);
        if (this.#free.length === 0) collect();
      };
      const collect = (): void => {
        const c = inFlight.shift();
        if (c === undefined) return;
        const mine = local.get(c.id);
        if (mine === undefined) throw new Error(`no results of chunk ${c.id}`);
        local.delete(c.id);
        const results = [
          mine,
          ...threads.map((t, k) => {
            const r = this.#receive(t, k + 1);
            if (r.kind !== "chunk" || r.id !== c.id) throw new Error(`replay worker thread ${k + 1}: expected chunk ${c.id}, got ${r.kind}`);
            return r;
          }),
        ];
        const parts = results.flatMap((r, k) => {
          const areas = this.#areas[k];
          if (areas === undefined) return [];
          if (r.area !== undefined) areas[c.slot] = r.area;
          const a = areas[c.slot];
          if (a === undefined) return [];
          return r.parts.map((p) => ({
            capture: p.capture,
            bytes: a.bytes.subarray(p.at, p.at + p.used),
            used: p.used,
            packets: a.packets.subarray(p.first, p.first + p.records),
            ends: a.ends.subarray(p.first, p.first + p.records),
            records: p.records,
          }));
        });
        writeRecords(parts, outputs);
        if (fd !== undefined) writeLines(results, fd);
        this.#free.push(c);
        progress?.(c.bytesRead, inputs.totalBytes, c.first + c.count);
      };
      let chunk = take();
      for (const batch of inputs.batches()) {
        if (!chunk.add(batch, this.#flow)) {
          send(chunk);
          chunk = take();
          chunk.add(batch, this.#flow);
        }
        packets += batch.count;
      }
      if (chunk.count > 0) send(chunk);
      else this.#free.push(chunk);
      while (inFlight.length > 0) collect();
      for (const t of threads) t.worker.postMessage({ kind: "finish" } satisfies ToWorker);
      const sum = this.#local.counters();
      threads.forEach((t, k) => {
        const r = this.#receive(t, k + 1);
        if (r.kind !== "counters") throw new Error(`replay worker thread ${k + 1}: expected counters, got ${r.kind}`);
        addCounters(sum, r.counters);
      });
      return { counters: sum, packets: perPlane };
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
}

/** Where the merge copies: every part's bytes, then the merged records (copyWithin, no view per record). */
let work = new Uint8Array(1 << 20);

/** Appends each capture's records of one chunk from every worker, in packet order. */
function writeRecords(all: readonly RecordPart[], outputs: CaptureOutputs): void {
  const byCapture = new Map<number, RecordPart[]>();
  for (const p of all) {
    const list = byCapture.get(p.capture);
    if (list === undefined) byCapture.set(p.capture, [p]);
    else list.push(p);
  }
  for (const [c, parts] of byCapture) {
    const only = parts.length === 1 ? parts[0] : undefined;
    if (only !== undefined) {
      outputs.write(c, only.bytes, 0, only.used);
      continue;
    }
    let total = 0;
    for (const p of parts) total += p.used;
    if (2 * total > work.length) work = new Uint8Array(4 * total);
    const at: number[] = [];
    for (const p of parts) {
      at.push(at.length === 0 ? 0 : (at[at.length - 1] ?? 0) + (parts[at.length - 1]?.used ?? 0));
      work.set(p.bytes.subarray(0, p.used), at[at.length - 1]);
    }
    const out = mergeRecords(parts, at, total);
    outputs.write(c, work, total, out - total);
  }
}

/** Merges the parts' records (in `work` at `at[k]`) by packet number into `work` from `to`; returns where it ended. */
function mergeRecords(parts: readonly RecordPart[], at: readonly number[], to: number): number {
  const next = parts.map(() => 0);
  let out = to;
  for (;;) {
    // The part holding the lowest packet number runs until another part's next record comes first.
    let best = -1;
    let lowest = Infinity;
    let bound = Infinity;
    for (let k = 0; k < parts.length; k++) {
      const p = parts[k] as RecordPart;
      const i = next[k] as number;
      if (i >= p.records) continue;
      const packet = p.packets[i] as number;
      if (packet < lowest) {
        bound = lowest;
        lowest = packet;
        best = k;
      } else if (packet < bound) bound = packet;
    }
    if (best < 0) return out;
    const p = parts[best] as RecordPart;
    const packets = p.packets;
    const records = p.records;
    const from = next[best] as number;
    let i = from + 1;
    while (i < records && (packets[i] as number) < bound) i++;
    const base = at[best] as number;
    const start = from === 0 ? 0 : (p.ends[from - 1] as number);
    const end = p.ends[i - 1] as number;
    work.copyWithin(out, base + start, base + end);
    out += end - start;
    next[best] = i;
  }
}

/** Appends the trace lines of one chunk from every worker, in packet order. */
function writeLines(results: readonly ChunkResult[], fd: number): void {
  const lines = results.map((r) => r.lines);
  const next = lines.map(() => 0);
  const out: string[] = [];
  for (;;) {
    let best = -1;
    let lowest = Infinity;
    lines.forEach((l, k) => {
      const packet = l.packets[next[k] ?? 0];
      if (packet !== undefined && packet < lowest) {
        lowest = packet;
        best = k;
      }
    });
    const l = lines[best];
    if (l === undefined) break;
    const i = next[best] ?? 0;
    out.push(l.texts[i] ?? "");
    next[best] = i + 1;
  }
  if (out.length > 0) writeSync(fd, out.join(""));
}
