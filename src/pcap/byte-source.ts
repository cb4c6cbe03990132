// Where a reader's bytes come from, and the one reused buffer it parses them in.
//
// ChunkBuffer keeps a window [pos, end) of unparsed file bytes in `buf`. fill(n)
// moves the unparsed tail to the front and reads more, so memory stays at one chunk
// however large the file; it grows only when a single record is larger than a chunk.

import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { describeIoError, InputError } from "../errors.js";
import type { AheadFile } from "./read-ahead.js";

export interface ByteSource {
  /** Size in bytes, when known (regular files, memory); else -1. */
  readonly size: number;
  /** Reads up to len bytes at `position` into buf[at …]; returns how many (0 at the end). */
  read(buf: Uint8Array, at: number, len: number, position: number): number;
  close(): void;
  /** A regular file's descriptor and name, for a thread that reads it ahead (./read-ahead.ts). */
  readonly file?: AheadFile;
}

/** Opens a file for reading; throws InputError (one line, no stack) when it cannot. */
export function fileSource(path: string, name = path): ByteSource {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (err) {
    throw new InputError(name, "", `cannot open: ${describeIoError(err)}`);
  }
  const stat = fstatSync(fd);
  if (stat.isDirectory()) {
    closeSync(fd);
    throw new InputError(name, "", "cannot read: it is a directory", "give a capture file");
  }
  // Pipes and character devices are read in order; only regular files take positions.
  const seekable = stat.isFile();
  let open = true;
  return {
    size: seekable ? stat.size : -1,
    ...(seekable ? { file: { fd, name } } : {}),
    read(buf, at, len, position) {
      try {
        return readSync(fd, buf, at, len, seekable ? position : null);
      } catch (err) {
        throw new InputError(name, `byte ${position}`, `cannot read: ${describeIoError(err)}`);
      }
    },
    close() {
      if (open) closeSync(fd);
      open = false;
    },
  };
}

/** A source over bytes already in memory (tests, embedded captures). */
export function memorySource(bytes: Uint8Array): ByteSource {
  return {
    size: bytes.length,
    read(buf, at, len, position) {
      const n = Math.max(0, Math.min(len, bytes.length - position));
      buf.set(bytes.subarray(position, position + n), at);
      return n;
    },
    close() {},
  };
}

export const DEFAULT_CHUNK_LEN = 1 << 20;

export class ChunkBuffer {
  buf: Uint8Array;
  view: DataView;
  /** First unparsed byte in buf. */
  pos = 0;
  /** End of the valid bytes in buf. */
  end = 0;
  /** File offset of buf[0]. */
  base = 0;
  readonly #source: ByteSource;
  readonly #chunkLen: number;
  #eof = false;

  constructor(source: ByteSource, chunkLen = DEFAULT_CHUNK_LEN) {
    this.#source = source;
    this.#chunkLen = Math.max(16, chunkLen);
    this.buf = new Uint8Array(this.#chunkLen);
    this.view = new DataView(this.buf.buffer);
  }

  /** File offset of the first unparsed byte. */
  get offset(): number {
    return this.base + this.pos;
  }

  get available(): number {
    return this.end - this.pos;
  }

  /**
   * Makes at least `need` bytes available at pos (which may move to 0, invalidating
   * offsets into buf). Returns false when the file ends first; what there is stays.
   */
  fill(need: number): boolean {
    if (this.end - this.pos >= need) return true;
    if (this.pos > 0) {
      this.buf.copyWithin(0, this.pos, this.end);
      this.base += this.pos;
      this.end -= this.pos;
      this.pos = 0;
    }
    // Grow for a big record, but never past the end of a file of known size: a damaged
    // length must not cost a huge allocation before the reader can say it is damaged.
    const size = this.#source.size;
    const room = size >= 0 ? Math.min(need, size - this.base) : need;
    if (room > this.buf.length) {
      const grown = new Uint8Array(Math.ceil(room / this.#chunkLen) * this.#chunkLen);
      grown.set(this.buf.subarray(0, this.end));
      this.buf = grown;
      this.view = new DataView(grown.buffer);
    }
    while (this.end < need && this.end < this.buf.length && !this.#eof) {
      const n = this.#source.read(this.buf, this.end, this.buf.length - this.end, this.base + this.end);
      if (n === 0) this.#eof = true;
      this.end += n;
    }
    return this.end >= need;
  }

  /**
   * Reads up to `len` bytes of the file at `position` into buf[at …], past the window (a caller
   * that reads blocks elsewhere, then seek()s to where it stopped); returns how many, 0 at the end.
   */
  readAt(buf: Uint8Array, at: number, len: number, position: number): number {
    return this.#source.read(buf, at, len, position);
  }

  /** The source's file, when it is a regular file (ByteSource.file). */
  get file(): AheadFile | undefined {
    return this.#source.file;
  }

  /** Empties the window, to go on reading at file offset `offset` (a regular file's). */
  seek(offset: number): void {
    this.base = offset;
    this.pos = 0;
    this.end = 0;
    this.#eof = false;
  }

  close(): void {
    this.#source.close();
  }
}
