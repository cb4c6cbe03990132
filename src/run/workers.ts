// Replay across worker threads (`strata run --workers N`): N data planes with
// the same tables, one on the main thread and N − 1 in worker threads
// (./worker.ts), each a ChunkRunner (./chunk-runner.ts). Every data plane
// reads and merges the inputs itself, as a one-thread replay does, so every
// one sees the same packets with the same numbers. The packets are cut into
// chunks of CHUNK_PACKETS, and each chunk runs whole on one data plane: the
// first one to each, then the first data plane to reach a chunk claims it
// (ChunkClaims), so the one with less to do takes more. Nothing in a replay carries from one packet to the next but the
// counters (the tables do not change while it runs: a replay with --updates
// runs on one thread), so a chunk's records and trace lines are what a
// one-thread replay writes for those packets, in its order: the main thread
// appends them to the files chunk after chunk, and every output is the same,
// byte for byte; the counters are summed.
//
// The main thread never waits on its event loop: it blocks in Atomics.wait on
// a counter the workers bump after each message and takes messages with
// receiveMessageOnPort, so a replay stays one synchronous call. A worker runs
// a whole replay in one call too, and before it reuses a slot waits until the
// main thread has written the chunk that was in it. Both spin briefly before
// they sleep (SPINS): on a quiet 2-vCPU VM waking a sleeping thread cost the
// waker about a millisecond, but on a busy one a long spin takes the CPU the
// other data plane needs.

import { availableParallelism } from "node:os";
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from "node:worker_threads";
import type { CompiledSpec } from "../control/compiled.js";
import type { ResolvedEndpoint } from "../control/endpoints.js";
import {
  ChunkClaims,
  type ChunkDone,
  type ChunkLines,
  ChunkRunner,
  type RunnerSetup,
  SLOTS,
  type SlotRecords,
} from "./chunk-runner.js";
import type { Inputs } from "./inputs.js";
import type { RecordingFiles } from "../engine/recordings.js";
import { addCounters, type Counters } from "../engine/summary.js";
import type { TraceFile } from "../engine/trace-file.js";
import type { PacketRanges } from "../wasm/runner.js";
import { WORKERS_MAX } from "./workers-max.js";
import { threadModule } from "../thread-module.js";

/**
 * Bytes of captures per data plane at least, when --workers is not given: less does not pay
 * for starting a thread (its data plane compiled and installed, its code cold). Measured with
 * `strata run` on the bench's switch (2-vCPU EPYC VM): 1 M 64-byte frames (80 MB), 0.71 s on one
 * thread and 0.73 on two; 4 M (320 MB), about 1.35 s and 1.1.
 */
export const BYTES_PER_PLANE = 64 << 20;

/**
 * How many data planes a replay gets when --workers is not given: one per
 * core, and one per BYTES_PER_PLANE of captures at most (at least one).
 */
export function defaultWorkers(totalBytes: number, cores = availableParallelism()): number {
  return Math.max(1, Math.min(cores, WORKERS_MAX, Math.floor(totalBytes / BYTES_PER_PLANE)));
}

/**
 * How many data planes a replay runs on: `asked` (--workers), or defaultWorkers(); one when the
 * replay has updates (they cut one data plane's batches), or when an input can be read only once
 * (each data plane reads every input itself) — then `note` says why, if more were asked for or due.
 */
export function replayWorkers(
  asked: number | undefined,
  inputs: { readonly totalBytes: number; readonly readOnce: readonly string[] },
  updates: boolean,
  cores = availableParallelism(),
): { workers: number; note?: string } {
  const wanted = asked ?? defaultWorkers(inputs.totalBytes, cores);
  if (updates || wanted === 1) return { workers: 1 };
  const once = inputs.readOnce[0];
  if (once === undefined) return { workers: wanted };
  const why =
    asked === undefined
      ? `${wanted} data planes were due for ${Math.round(inputs.totalBytes / (1 << 20))} MiB of captures`
      : `--workers ${asked}`;
  return {
    workers: 1,
    note:
      `${why}, but ${once} is not a regular file (a pipe or a device) and every data plane reads each input ` +
      `itself: it can be read only once, so the replay runs on one thread`,
  };
}

/**
 * Loads of a shared counter before a thread sleeps on it (microseconds). A few milliseconds' spin
 * (4 M loads) burnt CPU the other data plane needed on a busy machine: a 2-way router-layered
 * replay took 197–292 ms of process CPU with it, 162–192 with this (EPYC, 2 vCPU, load ~20).
 */
const SPINS = 1 << 12;

/** The shared Int32 words: messages the workers sent, chunks the main thread wrote, and whether the run was abandoned.
 * */
const SENT = 0;
const WRITTEN = 1;
const ABORTED = 2;

export interface WorkerSetup extends RunnerSetup {
  /** Int32 words SENT, WRITTEN and ABORTED. */
  readonly signal: SharedArrayBuffer;
  readonly port: MessagePort;
}

export type ToWorker = { readonly kind: "start" };

/**
 * A worker's chunk: the recordings with records in its slot, the bytes of each and their CRC-32, worked
 * out in the worker (recording, bytes, CRC: three numbers each), the buffers made since the last
 * message, its trace lines.
 */
export interface ChunkMessage {
  readonly kind: "chunk";
  readonly id: number;
  readonly slot: number;
  readonly used: number[];
  readonly fresh: { recording: number; bytes: Uint8Array }[];
  readonly lines: ChunkLines;
}

export type FromWorker =
  | ChunkMessage
  | { readonly kind: "done"; readonly counters: Counters; readonly ran: number }
  | { readonly kind: "error"; readonly message: string };

/** Waits until `word` of `signal` is not `seen`: spins a while, then sleeps. */
function waitChange(signal: Int32Array, word: number, seen: number): void {
  for (let spin = 0; spin < SPINS; spin++) if (Atomics.load(signal, word) !== seen) return;
  Atomics.wait(signal, word, seen, 1000);
}

/** Waits until the main thread has written chunk `id` (−1: at once); throws when the run was abandoned. */
export function awaitWritten(signal: Int32Array, id: number): void {
  for (;;) {
    if (Atomics.load(signal, ABORTED) !== 0) throw new Error("the replay was abandoned");
    const written = Atomics.load(signal, WRITTEN);
    if (written > id) return;
    waitChange(signal, WRITTEN, written);
  }
}

/** Tells the main thread a message was sent. */
export function noteSent(signal: Int32Array): void {
  Atomics.add(signal, SENT, 1);
  Atomics.notify(signal, SENT);
}

/** A chunk's message, from what the runner did. */
export function chunkMessage(chunk: ChunkDone): ChunkMessage {
  const r = chunk.records;
  const fresh = r.fresh;
  r.fresh = [];
  return {
    kind: "chunk",
    id: chunk.id,
    slot: chunk.slot,
    used: usedOf(r),
    fresh,
    lines: chunk.lines,
  };
}

interface Thread {
  readonly worker: Worker;
  readonly port: MessagePort;
}

export interface PoolOptions {
  readonly trace: boolean;
  readonly tracePackets?: PacketRanges;
  readonly hopLimit: number;
  readonly copyLimit: number;
  readonly chunkPackets: number;
}

/**
 * `size` data planes: one on the main thread (index 0), the others in worker
 * threads (index k in thread k − 1).
 */
export class WorkerPool {
  readonly size: number;
  readonly #chunkPackets: number;
  readonly #local: ChunkRunner;
  readonly #threads: Thread[] = [];
  /** Per worker thread, per slot, by recording: its records buffer as the main thread holds it. */
  readonly #buffers: Map<number, Uint8Array>[][];
  readonly #signal = new Int32Array(new SharedArrayBuffer(3 * 4));
  readonly #claims: ChunkClaims;
  /** Per worker thread, its "done" message when it came while the main thread was only looking for a chunk. */
  readonly #early: (FromWorker | undefined)[] = [];

  /** `endpoints`: the --in endpoints, and `files` their captures, in order. */
  constructor(
    size: number,
    compiled: CompiledSpec,
    endpoints: readonly ResolvedEndpoint[],
    files: readonly string[],
    options: PoolOptions,
  ) {
    this.size = size;
    this.#chunkPackets = options.chunkPackets;
    this.#buffers = Array.from({ length: size - 1 }, () =>
      Array.from({ length: SLOTS }, () => new Map<number, Uint8Array>()),
    );
    const texts = endpoints.map((e) => e.text);
    const claims = new SharedArrayBuffer(ChunkClaims.BYTES);
    this.#claims = new ChunkClaims(claims, size);
    const setup = (index: number): RunnerSetup => ({
      index,
      planes: size,
      compiled,
      endpoints: texts,
      files,
      claims,
      ...options,
    });
    this.#local = new ChunkRunner(setup(0), false);
    try {
      for (let index = 1; index < size; index++) {
        const { port1, port2 } = new MessageChannel();
        const data: WorkerSetup = { ...setup(index), signal: this.#signal.buffer as SharedArrayBuffer, port: port2 };
        const worker = new Worker(threadModule("run/worker.js"), { workerData: data, transferList: [port2] });
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
    Atomics.notify(this.#signal, WRITTEN);
    for (const t of this.#threads) {
      t.port.close();
      void t.worker.terminate();
    }
    this.#threads.length = 0;
  }

  /** The next message from worker thread `index` (data plane index), waiting for it when `wait`; a worker's failure is
   * thrown here. */
  #receive(index: number, wait: boolean): FromWorker | undefined {
    const t = this.#threads[index - 1];
    if (t === undefined) throw new Error(`no worker thread ${index}`);
    const early = this.#early[index - 1];
    if (early !== undefined) {
      if (!wait) return undefined;
      this.#early[index - 1] = undefined;
      return early;
    }
    for (;;) {
      const seen = Atomics.load(this.#signal, SENT);
      const got = receiveMessageOnPort(t.port);
      if (got !== undefined) {
        const message = got.message as FromWorker;
        if (message.kind === "error") throw new Error(`replay worker thread ${index}: ${message.message}`);
        // Looking for a next chunk that is not there (the main thread does not know yet where the inputs end): keep the
        // worker's last word.
        if (message.kind === "done" && !wait) {
          this.#early[index - 1] = message;
          return undefined;
        }
        return message;
      }
      if (!wait) return undefined;
      waitChange(this.#signal, SENT, seen);
    }
  }

  /** The data plane that runs chunk `id`; when `wait`, waits until one has claimed it (else −1 if none has). */
  #owner(id: number, wait: boolean): number {
    for (;;) {
      const seen = Atomics.load(this.#signal, SENT);
      const plane = this.#claims.owner(id);
      if (plane >= 0 || !wait) return plane;
      // A worker claims a chunk before it sends it.
      waitChange(this.#signal, SENT, seen);
    }
  }

  /** The records buffers of a worker's chunk, by recording: the slot's, brought up to the chunk's. */
  #chunkBuffers(plane: number, m: ChunkMessage): Map<number, Uint8Array> {
    const buffers = this.#buffers[plane - 1]?.[m.slot];
    if (buffers === undefined) throw new Error(`replay worker thread ${plane}: no slot ${m.slot}`);
    // The worker keeps only the buffers of the recordings in this chunk: so does this thread.
    const inChunk = new Set(m.used.filter((_, k) => k % 3 === 0));
    for (const c of buffers.keys()) if (!inChunk.has(c)) buffers.delete(c);
    for (const f of m.fresh) buffers.set(f.recording, f.bytes);
    return buffers;
  }

  /**
   * Replays every batch of `inputs` across the data planes (each worker
   * thread reads the same files), writing recordings to `outputs` and trace
   * lines to `trace`; returns the summed counters and the packets each
   * data plane ran.
   */
  replay(
    inputs: Inputs,
    outputs: RecordingFiles,
    trace: TraceFile | undefined,
    progress?: (done: number, total: number, packets: number) => void,
  ): { counters: Counters; packets: number[] } {
    const threads = this.#threads;
    const signal = this.#signal;
    const chunkPackets = this.#chunkPackets;
    Atomics.store(signal, WRITTEN, 0);
    this.#claims.reset();
    this.#early.length = 0;
    for (const t of threads) t.worker.postMessage({ kind: "start" } satisfies ToWorker);
    /** The main thread's chunks run and not yet written, by id. */
    const local = new Map<number, ChunkDone>();
    let written = 0;
    /** Writes the next chunk if it is there (waiting for a worker's when `wait`); whether it did. */
    const writeNext = (wait: boolean): boolean => {
      const id = written;
      const plane = this.#owner(id, wait);
      if (plane < 0) return false;
      if (plane === 0) {
        const mine = local.get(id);
        if (mine === undefined) return false;
        local.delete(id);
        const r = mine.records;
        writeChunk(outputs, trace, r.bytes, usedOf(r), mine.lines);
      } else {
        const m = this.#receive(plane, wait);
        if (m === undefined) return false;
        if (m.kind !== "chunk" || m.id !== id)
          throw new Error(`replay worker thread ${plane}: expected chunk ${id}, got ${m.kind}`);
        writeChunk(outputs, trace, this.#chunkBuffers(plane, m), m.used, m.lines);
      }
      written = id + 1;
      Atomics.store(signal, WRITTEN, written);
      Atomics.notify(signal, WRITTEN);
      const read = inputs.stats.reduce((n, s) => n + s.packets, 0);
      progress?.(inputs.bytesRead, inputs.totalBytes, Math.min(read, written * chunkPackets));
      return true;
    };
    const { ran, packets } = this.#local.replay(
      inputs,
      (previous) => {
        while (written <= previous) writeNext(true);
      },
      (chunk) => {
        local.set(chunk.id, chunk);
        while (writeNext(false));
      },
    );
    const chunks = Math.ceil(packets / chunkPackets);
    while (written < chunks) writeNext(true);
    progress?.(inputs.bytesRead, inputs.totalBytes, packets);
    const perPlane = [ran];
    const sum = this.#local.counters();
    threads.forEach((_, k) => {
      const r = this.#receive(k + 1, true);
      if (r?.kind !== "done") throw new Error(`replay worker thread ${k + 1}: expected its counters, got ${r?.kind}`);
      addCounters(sum, r.counters);
      perPlane.push(r.ran);
    });
    return { counters: sum, packets: perPlane };
  }
}

/** A slot's recordings with records, each with its bytes and their CRC-32: three numbers each. */
function usedOf(r: SlotRecords): number[] {
  return r.active.flatMap((c) => [c, r.used.get(c) ?? 0, r.crcs.get(c) ?? 0]);
}

/** Writes a chunk's records (`used` lists its recordings, their bytes and CRC-32s, three numbers each) and trace
 * lines. */
function writeChunk(
  outputs: RecordingFiles,
  trace: TraceFile | undefined,
  bytes: ReadonlyMap<number, Uint8Array>,
  used: readonly number[],
  lines: ChunkLines,
): void {
  for (let k = 0; k + 2 < used.length; k += 3) {
    const c = used[k] ?? 0;
    const b = bytes.get(c);
    if (b === undefined) throw new Error(`replay: no records buffer for recording ${c}`);
    outputs.write(c, b, 0, used[k + 1] ?? 0, used[k + 2] ?? 0);
  }
  if (lines.packets.length > 0) trace?.append(lines.text, lines.packets, lines.bytes);
}
