// Where a writer's bytes go, and the large reused buffer that batches small writes.

import { closeSync, openSync, writeSync } from "node:fs";
import { describeIoError, InputError } from "../errors.js";

export interface ByteSink {
  write(bytes: Uint8Array): void;
  close(): void;
}

export function fileSink(path: string): ByteSink {
  let fd: number;
  try {
    fd = openSync(path, "w");
  } catch (err) {
    throw new InputError(path, "", `cannot create: ${describeIoError(err)}`);
  }
  let open = true;
  return {
    write(bytes) {
      try {
        for (let done = 0; done < bytes.length;) done += writeSync(fd, bytes, done, bytes.length - done);
      } catch (err) {
        throw new InputError(path, "", `cannot write: ${describeIoError(err)}`);
      }
    },
    close() {
      if (open) closeSync(fd);
      open = false;
    },
  };
}

/** Keeps everything written; bytes() gives it as one array. */
export class MemoryByteSink implements ByteSink {
  readonly #chunks: Uint8Array[] = [];
  write(bytes: Uint8Array): void {
    this.#chunks.push(bytes.slice());
  }
  close(): void {}
  bytes(): Uint8Array {
    const total = this.#chunks.reduce((sum, c) => sum + c.length, 0);
    const out = new Uint8Array(total);
    let at = 0;
    for (const c of this.#chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }
}

export const DEFAULT_WRITE_BUFFER_LEN = 1 << 20;

/** A write buffer: reserve(n) then fill buf/view at pos; flushes to the sink when full. */
export class OutputBuffer {
  buf: Uint8Array;
  view: DataView;
  pos = 0;
  #flushed = 0;
  readonly #sink: ByteSink;

  constructor(target: string | ByteSink, size = DEFAULT_WRITE_BUFFER_LEN) {
    this.#sink = typeof target === "string" ? fileSink(target) : target;
    this.buf = new Uint8Array(Math.max(64, size));
    this.view = new DataView(this.buf.buffer);
  }

  get bytesWritten(): number {
    return this.#flushed + this.pos;
  }

  /** Makes room for n more bytes at pos. */
  reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    this.flush();
    if (n > this.buf.length) {
      this.buf = new Uint8Array(n);
      this.view = new DataView(this.buf.buffer);
    }
  }

  /**
   * Writes `bytes` after what is buffered, without copying them when they are
   * large (a quarter of the buffer or more: one write call each is cheap then).
   */
  append(bytes: Uint8Array): void {
    if (bytes.length <= this.buf.length - this.pos && 4 * bytes.length < this.buf.length) {
      this.buf.set(bytes, this.pos);
      this.pos += bytes.length;
      return;
    }
    this.flush();
    this.#sink.write(bytes);
    this.#flushed += bytes.length;
  }

  flush(): void {
    if (this.pos === 0) return;
    this.#sink.write(this.buf.subarray(0, this.pos));
    this.#flushed += this.pos;
    this.pos = 0;
  }

  close(): void {
    this.flush();
    this.#sink.close();
  }
}

/** Throws RangeError unless data[start .. start+len) exists: a caller's mistake, not bad input. */
/**
 * Copies src[start .. start+len) to dst at `at`. Small packets byte by byte: a
 * subarray() for set() is an object per packet, and the garbage shows at
 * millions of packets per second.
 */
export function copyInto(dst: Uint8Array, at: number, src: Uint8Array, start: number, len: number): void {
  if (len <= 128) {
    for (let i = 0; i < len; i++) dst[at + i] = src[start + i] ?? 0;
  } else {
    dst.set(src.subarray(start, start + len), at);
  }
}

export function checkSpan(data: Uint8Array, start: number, len: number, origLen: number): void {
  if (!(start >= 0 && len >= 0 && start + len <= data.length)) {
    throw new RangeError(`packet bytes ${start}..${start + len} are outside data of ${data.length} bytes`);
  }
  if (!(origLen >= 0 && origLen <= 0xffffffff))
    throw new RangeError(`original length ${origLen} does not fit in 32 bits`);
}
