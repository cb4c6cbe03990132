// Writes beside the run: the write calls of a run's recording files, and the CRC-32 of what they write, in a thread of
// their own (./file-writer-thread.ts), so that the thread running the data plane only copies each write into a shared
// ring and goes on. BufferedFiles (./buffered-files.ts) hands its writes here once a run's files have taken
// FileLimits.threadAfter bytes: a small run never starts the thread. One thread serves the process, started on first
// use and kept (unref'd: it never holds the process up); each write names its file's descriptor (descriptors are the
// process's) and an id, under which the thread keeps the file's CRC-32 until finish() asks for it. The writes run in
// the order they were given; a descriptor is closed only after drain(). No event loop on the calling thread: it waits
// in Atomics.wait on a counter the thread bumps after each message, and reads its answers with receiveMessageOnPort.
// A write from a lent memory (lend(): the data plane's linear memory, shared, whose grouped records stay as they are
// until settle()) is not copied: the thread is given the memory's buffer and writes the bytes where they lie.

import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from "node:worker_threads";
import { InputError } from "../errors.js";
import { type RingThreadData, threadModule } from "../thread-module.js";

/** Bytes of the shared ring: writes wait for room when the thread is this far behind. */
export const RING_BYTES = 8 << 20;

/** A wait for the thread this long without a write done is a thread gone: an error, not a hang. */
const STALL_MS = 60_000;

/** The counters the thread bumps: messages done, and whether a write failed. */
export const DONE = 0;
export const FAILED = 1;

/** A write of ring[start .. start+len) (or of lent[start .. start+len), a lent memory's buffer) to `fd`, file `id`;
 * `crc` its CRC-32 when known, else −1. */
export type ToWriter =
  | {
      readonly kind: "write";
      readonly fd: number;
      readonly id: number;
      readonly path: string;
      readonly start: number;
      readonly len: number;
      readonly crc: number;
      readonly lent?: SharedArrayBuffer;
    }
  | { readonly kind: "finish"; readonly ids: readonly number[] };

type FromWriter =
  | { readonly kind: "failed"; readonly path: string; readonly problem: string }
  | { readonly kind: "written"; readonly files: readonly { crc: number; len: number }[] };

export class FileWriter {
  readonly #ring: Uint8Array;
  /** Bytes of one write at most: a longer one is cut (and its CRC worked out by the thread). */
  readonly #piece: number;
  readonly #counters = new Int32Array(new SharedArrayBuffer(8));
  readonly #port: MessagePort;
  /** Messages posted, and the ring spans of the writes not done yet (start, end), oldest first. */
  #posted = 0;
  readonly #spans: { readonly message: number; readonly start: number; readonly end: number }[] = [];
  /** Where the next write goes in the ring. */
  #head = 0;
  #ids = 0;
  /** Per lent memory, the messages posted when its last write by reference was (settle() waits for it). */
  readonly #fromLent = new Map<WebAssembly.Memory, number>();
  readonly #worker: Worker;
  /** Writes taken where they lie, from a lent memory, and writes copied into the ring (the tests count them). */
  lentWrites = 0;
  copiedWrites = 0;

  /** `ringBytes`: the shared ring's size (the tests give small ones). */
  constructor(ringBytes = RING_BYTES) {
    this.#ring = new Uint8Array(new SharedArrayBuffer(ringBytes));
    this.#piece = Math.max(1, ringBytes >>> 2);
    const { port1, port2 } = new MessageChannel();
    this.#port = port1;
    const data: RingThreadData = {
      ring: this.#ring.buffer as SharedArrayBuffer,
      control: this.#counters.buffer,
      port: port2,
    };
    this.#worker = new Worker(threadModule("engine/file-writer-thread.js"), {
      workerData: data,
      transferList: [port2],
    });
    this.#worker.unref();
    port1.unref();
  }

  /** Ends the thread (what was given and not drained may be lost). */
  close(): void {
    void this.#worker.terminate();
  }

  /** An id for a file, under which the thread keeps its CRC-32. */
  id(): number {
    return this.#ids++;
  }

  /** Copies data[start .. start+len) into the ring, to be written to `fd` (file `id`, at `path`); `crc`: its CRC-32. */
  write(fd: number, id: number, path: string, data: Uint8Array, start: number, len: number, crc?: number): void {
    this.#check();
    const memory = data.buffer instanceof SharedArrayBuffer ? lent.get(data.buffer) : undefined;
    if (memory !== undefined) {
      const at = data.byteOffset + start;
      this.#post({
        kind: "write",
        fd,
        id,
        path,
        start: at,
        len,
        crc: crc ?? -1,
        lent: data.buffer as SharedArrayBuffer,
      });
      this.#fromLent.set(memory, this.#posted);
      this.lentWrites++;
      return;
    }
    this.copiedWrites++;
    const piece = this.#piece;
    const whole = len <= piece;
    for (let at = start; at < start + len; at += piece) {
      const n = Math.min(piece, start + len - at);
      const to = this.#room(n);
      this.#ring.set(data.subarray(at, at + n), to);
      this.#post({ kind: "write", fd, id, path, start: to, len: n, crc: whole && crc !== undefined ? crc : -1 });
      this.#spans.push({ message: this.#posted, start: to, end: to + n });
      this.#head = to + n;
    }
  }

  /** Waits until the writes given from `memory`'s bytes where they lie are done. */
  settle(memory: WebAssembly.Memory): void {
    const last = this.#fromLent.get(memory);
    if (last === undefined) return;
    this.#wait(last);
    this.#fromLent.delete(memory);
  }

  /** Waits until every write given is done; throws the first that failed (InputError, its path). */
  drain(): void {
    this.#wait(this.#posted);
    this.#check();
  }

  /** After every write given: the CRC-32 and length of what was written to each of `ids` (then forgotten). */
  finish(ids: readonly number[]): { crc: number; len: number }[] {
    this.#post({ kind: "finish", ids });
    this.#wait(this.#posted);
    for (let m = receiveMessageOnPort(this.#port); m !== undefined; m = receiveMessageOnPort(this.#port)) {
      const answer = m.message as FromWriter;
      if (answer.kind === "written") return [...answer.files];
    }
    throw new Error("the file writer did not answer");
  }

  #post(m: ToWriter): void {
    this.#port.postMessage(m);
    this.#posted++;
  }

  /** Waits until `message` messages are done. */
  #wait(message: number): void {
    for (let done = Atomics.load(this.#counters, DONE); done < message; done = Atomics.load(this.#counters, DONE))
      this.#sleep(done);
  }

  /** Where `len` bytes go in the ring, once there is room for them there (waiting for the thread if not). */
  #room(len: number): number {
    for (;;) {
      const done = Atomics.load(this.#counters, DONE);
      while (this.#spans.length > 0 && (this.#spans[0]?.message ?? 0) <= done) this.#spans.shift();
      const tail = this.#spans[0]?.start;
      if (tail === undefined) return (this.#head = 0);
      // The writes waiting lie in [tail, head), or wrap around (then head ≤ tail: equal when the ring is full).
      if (this.#head > tail) {
        if (this.#head + len <= this.#ring.length) return this.#head;
        if (len <= tail) return 0;
      } else if (this.#head + len <= tail) return this.#head;
      this.#sleep(done);
    }
  }

  /** Sleeps until the thread finishes a message after `done`; throws if it finishes none for STALL_MS (a thread that
   * never started, or a write that never returns). */
  #sleep(done: number): void {
    if (Atomics.wait(this.#counters, DONE, done, STALL_MS) === "timed-out")
      throw new Error(`the file writer's thread wrote nothing for ${STALL_MS / 1000} s`);
  }

  /** Throws the write that failed, if one did (what was given after it for that file is not written). */
  #check(): void {
    if (Atomics.load(this.#counters, FAILED) === 0) return;
    Atomics.store(this.#counters, FAILED, 0);
    for (let m = receiveMessageOnPort(this.#port); m !== undefined; m = receiveMessageOnPort(this.#port)) {
      const answer = m.message as FromWriter;
      if (answer.kind === "failed") throw new InputError(answer.path, "", `cannot write: ${answer.problem}`);
    }
  }
}

let shared: FileWriter | undefined;

/** The buffers of lent memories (by the buffer they had when lent: one grown since is not lent). */
const lent = new WeakMap<SharedArrayBuffer, WebAssembly.Memory>();
const lentAs = new WeakMap<WebAssembly.Memory, SharedArrayBuffer>();

/**
 * Lends a shared memory's bytes: until unlend(), a write given from a view on its buffer is not copied into the ring
 * but written where it lies, by the thread; the caller keeps those bytes as they are until settle(memory).
 */
export function lend(memory: WebAssembly.Memory): void {
  const buffer = memory.buffer;
  if (!(buffer instanceof SharedArrayBuffer)) return;
  lent.set(buffer, memory);
  lentAs.set(memory, buffer);
}

/** Writes given from now on are copied again. */
export function unlend(memory: WebAssembly.Memory): void {
  const buffer = lentAs.get(memory);
  if (buffer !== undefined) lent.delete(buffer);
  lentAs.delete(memory);
}

/** Waits until the writes given from `memory` where it lies are done: its bytes may change from then on. */
export function settle(memory: WebAssembly.Memory): void {
  shared?.settle(memory);
}

/** The process's file writer, started on first use. */
export function fileWriter(): FileWriter {
  shared ??= new FileWriter();
  return shared;
}
