// A capture read ahead in a thread of its own (./read-ahead-thread.ts), straight into slots of shared memory the caller
// names (the data plane's input area, in its shared linear memory: src/run/blocks.ts), so that the thread running the
// data plane finds the next block already in place while it runs this one: no read call, no copy. The thread reads the
// file in order, a slot (its `bytes`) at a time, into the slots in turn, and waits when they are all full; the caller
// takes them in the same order (next()), giving the one it took before back as it does. One thread serves the process,
// started on first use and kept (unref'd): it reads one stream at a time, and stop() waits until it has let go of the
// file's descriptor and of the slots. No event loop on the calling thread: it waits in Atomics.wait on counters the
// thread bumps. A read that fails in the thread is thrown by the next() that reaches it, with the words the capture
// reader's own read would use.

import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from "node:worker_threads";
import { InputError } from "../errors.js";
import { type ThreadData, threadModule } from "../thread-module.js";

/** Slots a stream may have, at most. */
export const MAX_SLOTS = 4;

/** A wait for the thread this long without a slot read is a thread gone: an error, not a hang. */
const STALL_MS = 60_000;

/** The shared counters: slots read and given back (this stream), the stream asked for and the one the thread left. */
export const FILLED = 0;
export const TAKEN = 1;
export const STREAM = 2;
export const LEFT = 3;
/** Then each slot's bytes (fewer than a slot's: the end of the file; −1: the read failed). */
export const LENS = 4;

/** Where the thread reads to: `at.length` slots of `bytes` bytes each, at these byte offsets of `buffer`. */
export interface AheadSlots {
  readonly buffer: SharedArrayBuffer;
  readonly at: readonly number[];
  readonly bytes: number;
}

/** Read `fd` in order from `position`, as stream `stream`, into `slots`. */
export interface ToReader {
  readonly fd: number;
  readonly position: number;
  readonly stream: number;
  readonly slots: AheadSlots;
}

/** A read that failed: at which byte, and why (describeIoError's words). */
export interface FromReader {
  readonly position: number;
  readonly problem: string;
}

/** A regular file to read ahead: its descriptor (the process's), its name for messages. */
export interface AheadFile {
  readonly fd: number;
  readonly name: string;
}

class ReaderThread {
  readonly control = new Int32Array(new SharedArrayBuffer((LENS + MAX_SLOTS) * 4));
  readonly port: MessagePort;
  readonly #worker: Worker;
  /** Whether a ReadAhead holds the thread. */
  busy = false;

  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    // No ring of its own: it reads into the slots each stream names.
    const data: ThreadData = { control: this.control.buffer, port: port2 };
    this.#worker = new Worker(threadModule("pcap/read-ahead-thread.js"), { workerData: data, transferList: [port2] });
    this.#worker.unref();
    port1.unref();
  }

  /** Waits while control[at] is `value`; throws after STALL_MS of it. */
  wait(at: number, value: number): void {
    if (Atomics.wait(this.control, at, value, STALL_MS) === "timed-out")
      throw new Error(`the capture reader's thread read nothing for ${STALL_MS / 1000} s`);
  }
}

let shared: ReaderThread | undefined;

/** A file's bytes in order from a position, read ahead into the caller's slots; stop() before the descriptor is closed
 * or the slots are used for anything else. */
export class ReadAhead {
  readonly #file: AheadFile;
  readonly #t: ReaderThread;
  readonly #slots: AheadSlots;
  /** The file offset the slot taken starts at. */
  #position: number;
  /** The slot taken (its number in the stream; −1 before the first) and its bytes. */
  #k = -1;
  #len = 0;
  #stopped = false;

  /** Reads `file` ahead from `position` into `slots` (2 to MAX_SLOTS of them), or undefined while another ReadAhead
   * holds the process's thread. */
  static open(file: AheadFile, position: number, slots: AheadSlots): ReadAhead | undefined {
    if (slots.at.length < 2 || slots.at.length > MAX_SLOTS) throw new RangeError(`${slots.at.length} slots`);
    shared ??= new ReaderThread();
    return shared.busy ? undefined : new ReadAhead(shared, file, position, slots);
  }

  private constructor(t: ReaderThread, file: AheadFile, position: number, slots: AheadSlots) {
    t.busy = true;
    this.#t = t;
    this.#file = file;
    this.#slots = slots;
    this.#position = position;
    const c = t.control;
    const stream = Atomics.load(c, STREAM) + 1;
    Atomics.store(c, FILLED, 0);
    Atomics.store(c, TAKEN, 0);
    Atomics.store(c, STREAM, stream);
    t.port.postMessage({ fd: file.fd, position, stream, slots } satisfies ToReader);
  }

  /** The slot next() took last: its index in the slots' `at`. */
  get slot(): number {
    return this.#k % this.#slots.at.length;
  }

  /**
   * Gives the slot taken back (the thread may read into it from now on) and takes the next, once read: its bytes, at
   * `at[slot]`; fewer than a slot's at the end of the file, 0 after it.
   */
  next(): number {
    if (this.#stopped) throw new Error("next() after stop()");
    const c = this.#t.control;
    const k = this.#k + 1;
    this.#position += this.#len;
    this.#k = k;
    // A slot not full was the end of the file: the thread reads no more.
    if (k > 0 && this.#len < this.#slots.bytes) return (this.#len = 0);
    if (k > 0) {
      Atomics.add(c, TAKEN, 1);
      Atomics.notify(c, TAKEN);
    }
    for (let filled = Atomics.load(c, FILLED); filled <= k; filled = Atomics.load(c, FILLED))
      this.#t.wait(FILLED, filled);
    const len = Atomics.load(c, LENS + (k % MAX_SLOTS));
    if (len < 0) this.#failed();
    return (this.#len = len);
  }

  /** Ends the stream, once the thread has let go of the descriptor and the slots; the thread is free for another. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    const c = this.#t.control;
    const stream = Atomics.load(c, STREAM);
    Atomics.store(c, STREAM, stream + 1); // not a stream asked for: the thread stops at its next look
    Atomics.add(c, TAKEN, MAX_SLOTS); // and wakes if it waits for room
    Atomics.notify(c, TAKEN);
    for (let left = Atomics.load(c, LEFT); left < stream; left = Atomics.load(c, LEFT)) this.#t.wait(LEFT, left);
    Atomics.store(c, STREAM, stream);
    this.#t.busy = false;
  }

  /** Throws the thread's failed read as the capture reader's would be. */
  #failed(): never {
    const m = receiveMessageOnPort(this.#t.port)?.message as FromReader | undefined;
    this.stop();
    throw new InputError(this.#file.name, `byte ${m?.position ?? this.#position}`, `cannot read: ${m?.problem}`);
  }
}
