// A capture read ahead in a thread of its own (./read-ahead-thread.ts), so that the thread running the data plane
// finds the next block already read: it copies it out of shared memory (~3 ns a 64-byte packet) instead of making the
// read call itself (~16 ns, most of it in the kernel). The thread reads the file in order, a slot (SLOT_BYTES) at a
// time, into a ring of SLOTS slots, and waits when they are all full; the caller's reads (ReadAhead.read, a
// PcapBlocks.read) take the bytes in the same order and give each slot back when they are past it. A read elsewhere
// than where the last one stopped starts the stream again there. One thread serves the process, started on first use
// and kept (unref'd): it reads one stream at a time, and stop() waits until it has let go of the file's descriptor.
// No event loop on the calling thread: it waits in Atomics.wait on counters the thread bumps. A read that fails in the
// thread is thrown by the read that reaches it, with the words the capture reader's own read would use.

import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from "node:worker_threads";
import { InputError } from "../errors.js";
import { type RingThreadData, threadModule } from "../thread-module.js";

/** Bytes of a slot: one read call's. */
export const SLOT_BYTES = 1 << 20;
/** Slots of the ring: the thread reads this far ahead at most. */
export const SLOTS = 4;

/** A wait for the thread this long without a slot read is a thread gone: an error, not a hang. */
const STALL_MS = 60_000;

/** The shared counters: slots read and given back (this stream), the stream asked for and the one the thread left. */
export const FILLED = 0;
export const TAKEN = 1;
export const STREAM = 2;
export const LEFT = 3;
/** Then each slot's bytes (fewer than SLOT_BYTES: the end of the file; −1: the read failed). */
export const LENS = 4;

/** Read `fd` in order from `position`, as stream `stream`. */
export interface ToReader {
  readonly fd: number;
  readonly position: number;
  readonly stream: number;
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
  readonly ring = new Uint8Array(new SharedArrayBuffer(SLOTS * SLOT_BYTES));
  readonly control = new Int32Array(new SharedArrayBuffer((LENS + SLOTS) * 4));
  readonly port: MessagePort;
  readonly #worker: Worker;
  /** Whether a ReadAhead holds the thread. */
  busy = false;

  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    const data: RingThreadData = {
      ring: this.ring.buffer as SharedArrayBuffer,
      control: this.control.buffer,
      port: port2,
    };
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

/** A file's bytes in order, read ahead by the process's reader thread; stop() before the descriptor is closed. */
export class ReadAhead {
  readonly #file: AheadFile;
  readonly #t: ReaderThread;
  /** The file offset the next read takes, when it goes on in order. */
  #position = 0;
  /** The slot being taken (its number in the stream; −1 before the first), its bytes and how many are taken. */
  #slot = -1;
  #slotLen = 0;
  #slotPos = 0;
  #running = false;
  #stopped = false;

  /** Reads `file` ahead from `position`, or undefined while another ReadAhead holds the process's thread. */
  static open(file: AheadFile, position: number): ReadAhead | undefined {
    shared ??= new ReaderThread();
    return shared.busy ? undefined : new ReadAhead(shared, file, position);
  }

  private constructor(t: ReaderThread, file: AheadFile, position: number) {
    t.busy = true;
    this.#t = t;
    this.#file = file;
    this.#start(position);
  }

  /** Up to `len` bytes at file offset `position` into buf[at …]: how many, fewer only at the end (0 there). */
  read(buf: Uint8Array, at: number, len: number, position: number): number {
    if (this.#stopped) throw new Error("read after stop()");
    if (position !== this.#position) {
      this.#halt();
      this.#start(position);
    }
    let done = 0;
    while (done < len) {
      if (this.#slotPos === this.#slotLen && !this.#next()) break;
      const n = Math.min(len - done, this.#slotLen - this.#slotPos);
      const from = (this.#slot % SLOTS) * SLOT_BYTES + this.#slotPos;
      buf.set(this.#t.ring.subarray(from, from + n), at + done);
      this.#slotPos += n;
      done += n;
    }
    this.#position += done;
    return done;
  }

  /** Ends the stream, once the thread has let go of the descriptor; the thread is free for another. */
  stop(): void {
    if (this.#stopped) return;
    this.#halt();
    this.#stopped = true;
    this.#t.busy = false;
  }

  #start(position: number): void {
    const c = this.#t.control;
    const stream = Atomics.load(c, STREAM) + 1;
    Atomics.store(c, FILLED, 0);
    Atomics.store(c, TAKEN, 0);
    Atomics.store(c, STREAM, stream);
    this.#t.port.postMessage({ fd: this.#file.fd, position, stream } satisfies ToReader);
    this.#position = position;
    this.#slot = -1;
    this.#slotLen = this.#slotPos = 0;
    this.#running = true;
  }

  /** Asks the thread to stop reading and waits until it has. */
  #halt(): void {
    if (!this.#running) return;
    const c = this.#t.control;
    const stream = Atomics.load(c, STREAM);
    Atomics.store(c, STREAM, stream + 1); // not a stream asked for: the thread stops at its next look
    Atomics.add(c, TAKEN, SLOTS); // and wakes if it waits for room
    Atomics.notify(c, TAKEN);
    for (let left = Atomics.load(c, LEFT); left < stream; left = Atomics.load(c, LEFT)) this.#t.wait(LEFT, left);
    Atomics.store(c, STREAM, stream);
    this.#running = false;
  }

  /** Gives the slot taken back and takes the next: false at the end of the file. */
  #next(): boolean {
    const c = this.#t.control;
    // A slot not full was the end of the file.
    if (this.#slot >= 0 && this.#slotLen < SLOT_BYTES) return false;
    if (this.#slot >= 0) {
      Atomics.add(c, TAKEN, 1);
      Atomics.notify(c, TAKEN);
    }
    const slot = this.#slot + 1;
    for (let filled = Atomics.load(c, FILLED); filled <= slot; filled = Atomics.load(c, FILLED))
      this.#t.wait(FILLED, filled);
    const len = Atomics.load(c, LENS + (slot % SLOTS));
    if (len < 0) this.#failed();
    this.#slot = slot;
    this.#slotLen = len;
    this.#slotPos = 0;
    return len > 0;
  }

  /** Throws the thread's failed read as the capture reader's would be. */
  #failed(): never {
    const m = receiveMessageOnPort(this.#t.port)?.message as FromReader | undefined;
    this.stop();
    throw new InputError(this.#file.name, `byte ${m?.position ?? this.#position}`, `cannot read: ${m?.problem}`);
  }
}
