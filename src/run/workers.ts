// Replay across worker threads (`strata run --workers N`): N data planes with
// the same tables, one on the main thread and N − 1 in worker threads
// (./worker.ts), each a ChunkRunner (./chunk-runner.ts). Every data plane
// reads and merges the inputs itself, as a one-thread replay does, so every
// one sees the same packets with the same numbers; a flow hash (./flow.ts)
// gives every packet a data plane, which runs it while the others skip it, so
// a flow's packets run on one, in order. The main thread, which also merges
// and writes, takes a small share of the flows. For each chunk of packets
// every data plane hands back every capture record and trace line with its
// input packet's number. The main thread merges them in packet order — the
// order of a one-thread replay, where each packet and its copies run to the
// end before the next — and appends them to the files, so every output is the
// same, byte for byte; the counters are summed.
//
// The main thread never waits on its event loop: it blocks in Atomics.wait on
// a counter the workers bump after each message and takes messages with
// receiveMessageOnPort, so a replay stays one synchronous call. A worker runs
// a whole replay in one call too, and waits (Atomics.wait) before it reuses a
// result area until the main thread has merged the chunk that was in it.

import { closeSync, openSync, writeSync } from "node:fs";
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from "node:worker_threads";
import type { CompiledSpec } from "../control/compiled.js";
import type { ResolvedEndpoint } from "../control/endpoints.js";
import { CHUNK_PACKETS, ChunkRunner } from "./chunk-runner.js";
import type { Inputs } from "./inputs.js";
import type { CaptureOutputs } from "./outputs.js";
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

/** Chunks run and not yet merged: each has a result area of its own in every data plane. */
const IN_FLIGHT = 3;

/** Loads of the shared counter before a thread sleeps on it (a few milliseconds). */
const SPINS = 1 << 22;

/** The shared Int32 words: messages the workers sent, chunks the main thread merged, and whether the run was abandoned. */
const SENT = 0;
const MERGED = 1;
const ABORTED = 2;

/** What a ChunkRunner needs: its data plane's index of how many, the description, the inputs and the run's options. */
export interface RunnerSetup {
  readonly index: number;
  readonly planes: number;
  readonly compiled: CompiledSpec;
  /** The --in endpoints as written, in order: injection k is endpoints[k]. */
  readonly endpoints: readonly string[];
  /** The --in files, in the same order. */
  readonly files: readonly string[];
  readonly trace: boolean;
  readonly hopLimit: number;
  readonly copyLimit: number;
}

export interface WorkerSetup extends RunnerSetup {
  /** Int32 words SENT, MERGED and ABORTED. */
  readonly signal: SharedArrayBuffer;
  readonly port: MessagePort;
  /** Result areas per data plane (chunks in flight). */
  readonly slots: number;
}

export type ToWorker = { readonly kind: "start" };

/**
 * Where a data plane puts its records of a chunk, per result slot, on shared
 * memory: the main thread reads them before the slot takes another chunk.
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
  /** The data plane's new result area for this chunk's slot (it grew), or none: the one before. */
  readonly area?: ResultArea;
  /** Trace lines, each with its packet's number, in order. */
  readonly lines: { readonly packets: number[]; readonly texts: string[] };
}

export type FromWorker =
  | ChunkResult
  | { readonly kind: "done"; readonly counters: Counters; readonly packets: number }
  | { readonly kind: "error"; readonly message: string };

/** Waits until the main thread has merged chunk `id` − slots, whose result area chunk `id` takes; throws when the run was abandoned. */
export function awaitSlot(signal: Int32Array, id: number, slots: number): void {
  for (;;) {
    if (Atomics.load(signal, ABORTED) !== 0) throw new Error("the replay was abandoned");
    const merged = Atomics.load(signal, MERGED);
    if (merged > id - slots) return;
    Atomics.wait(signal, MERGED, merged, 1000);
  }
}

/** Tells the main thread a message was sent. */
export function noteSent(signal: Int32Array): void {
  Atomics.add(signal, SENT, 1);
  Atomics.notify(signal, SENT);
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
  /** Per data plane, its result area per slot. */
  readonly #areas: (ResultArea | undefined)[][];
  readonly #signal = new Int32Array(new SharedArrayBuffer(3 * 4));

  /** `endpoints`: the --in endpoints, and `files` their captures, in order. */
  constructor(size: number, compiled: CompiledSpec, endpoints: readonly ResolvedEndpoint[], files: readonly string[], options: PoolOptions) {
    this.size = size;
    this.#areas = Array.from({ length: size }, () => []);
    const texts = endpoints.map((e) => e.text);
    const setup = (index: number): RunnerSetup => ({ index, planes: size, compiled, endpoints: texts, files, ...options });
    this.#local = new ChunkRunner(setup(0));
    try {
      for (let index = 1; index < size; index++) {
        const { port1, port2 } = new MessageChannel();
        const data: WorkerSetup = { ...setup(index), signal: this.#signal.buffer as SharedArrayBuffer, port: port2, slots: IN_FLIGHT };
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
    Atomics.store(this.#signal, ABORTED, 1);
    Atomics.notify(this.#signal, MERGED);
    for (const t of this.#threads) {
      t.port.close();
      void t.worker.terminate();
    }
    this.#threads.length = 0;
  }

  /** The next message from thread `t`, waiting for it; a worker's failure is thrown here. */
  #receive(t: Thread, index: number): FromWorker {
    for (;;) {
      const seen = Atomics.load(this.#signal, SENT);
      const got = receiveMessageOnPort(t.port);
      if (got !== undefined) {
        const message = got.message as FromWorker;
        if (message.kind === "error") throw new Error(`replay worker thread ${index}: ${message.message}`);
        return message;
      }
      // Spin a while before sleeping: waking a sleeping thread costs the waker about a millisecond on a VM (measured).
      for (let spin = 0; spin < SPINS && Atomics.load(this.#signal, SENT) === seen; spin++);
      if (Atomics.load(this.#signal, SENT) === seen) Atomics.wait(this.#signal, SENT, seen, 1000);
    }
  }

  /**
   * Replays every batch of `inputs` across the data planes (each worker
   * thread reads the same files), writing captures to `outputs` and trace
   * lines to `tracePath`; returns the summed counters and the packets each
   * data plane ran.
   */
  replay(
    inputs: Inputs,
    outputs: CaptureOutputs,
    tracePath: string | undefined,
    progress?: (done: number, total: number, packets: number) => void,
  ): { counters: Counters; packets: number[] } {
    const threads = this.#threads;
    Atomics.store(this.#signal, MERGED, 0);
    for (const t of threads) t.worker.postMessage({ kind: "start" } satisfies ToWorker);
    const fd = tracePath === undefined ? undefined : openSync(tracePath, "w");
    try {
      const merge = (mine: ChunkResult): void => {
        const id = mine.id;
        const slot = id % IN_FLIGHT;
        const results = [
          mine,
          ...threads.map((t, k) => {
            const r = this.#receive(t, k + 1);
            if (r.kind !== "chunk" || r.id !== id) throw new Error(`replay worker thread ${k + 1}: expected chunk ${id}, got ${r.kind}`);
            return r;
          }),
        ];
        const parts = results.flatMap((r, k) => {
          const areas = this.#areas[k];
          if (areas === undefined) return [];
          if (r.area !== undefined) areas[slot] = r.area;
          const a = areas[slot];
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
        Atomics.add(this.#signal, MERGED, 1);
        Atomics.notify(this.#signal, MERGED);
        const read = inputs.stats.reduce((n, s) => n + s.packets, 0);
        progress?.(inputs.bytesRead, inputs.totalBytes, Math.min(read, (id + 1) * CHUNK_PACKETS));
      };
      const packets = [this.#local.replay(inputs, IN_FLIGHT, () => {}, merge)];
      const sum = this.#local.counters();
      threads.forEach((t, k) => {
        const r = this.#receive(t, k + 1);
        if (r.kind !== "done") throw new Error(`replay worker thread ${k + 1}: expected its counters, got ${r.kind}`);
        addCounters(sum, r.counters);
        packets.push(r.packets);
      });
      return { counters: sum, packets };
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
