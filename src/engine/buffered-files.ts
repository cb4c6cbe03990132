// The files a run's recordings are written to, in memory and descriptors that
// follow the packets, not the number of files: a description of 20,000
// recorded links may give 20,000 files packets. A file is created on its first
// bytes, and keeps what it is given in a buffer of its own (small at first,
// growing to `fileBuffer`), written out when full. When the buffers together
// take `bufferedMax` bytes, every one is written and let go; close() writes
// the rest. At most `openMax` files are open at once: writing to another
// closes the one written to least recently, opened again, to append, when
// its turn comes. Files are made and opened through a FilePlace (--out's OutDir: never through a
// link), and each keeps the CRC-32 of what it was given, in order, for summary.json. Once the files
// have taken `threadAfter` bytes, the write calls and the CRC-32 of what they write are the file
// writer's (./file-writer.ts: a thread beside the data plane's); this thread only copies into its ring.

import { closeSync, writeSync } from "node:fs";
import { describeIoError, InputError } from "../errors.js";
import { RunningCrc } from "./checksum.js";
import { type FileWriter, fileWriter } from "./file-writer.js";
import { tunedBytes } from "../tuning.js";
import type { FilePlace } from "../out-dir.js";

export interface FileLimits {
  /** Files open at once, at most. */
  readonly openMax: number;
  /** Bytes a file buffers, at most; a write of a quarter of it or more goes to the file at once. */
  readonly fileBuffer: number;
  /** Bytes of buffers all files may take together before every one is written and let go. */
  readonly bufferedMax: number;
  /** Bytes given to all files together after which the file writer's thread writes them (Infinity: never). */
  readonly threadAfter: number;
}

/**
 * threadAfter: a thread costs about 10 ms of CPU to start, the write calls and CRC-32 of 8 MiB of recordings about as
 * much (2-vCPU EPYC VM).
 */
export const FILE_LIMITS: FileLimits = {
  openMax: 128,
  fileBuffer: 256 << 10,
  bufferedMax: 64 << 20,
  threadAfter: 8 << 20,
};

/** FILE_LIMITS, threadAfter as STRATA_WRITER_THREAD_AFTER sets it (src/tuning.ts: for the tests, and tuning). */
export function fileLimits(): FileLimits {
  return { ...FILE_LIMITS, threadAfter: tunedBytes("STRATA_WRITER_THREAD_AFTER", FILE_LIMITS.threadAfter) };
}

/** A buffer's first size: a file with few records keeps little. */
const FIRST_BUFFER_LEN = 512;

/** One file: its name, its descriptor while open, the bytes not written yet and the digest of those written. */
export interface BufferedFile {
  readonly name: string;
  /** Where it is, for a person. */
  readonly path: string;
  fd: number;
  /** Whether the file exists: it is created new the first time it is opened, and appended to after. */
  created: boolean;
  buffer: Uint8Array | undefined;
  buffered: number;
  /** The CRC-32 of the bytes written so far, in the file's order (with the file writer: final after close()). */
  readonly check: RunningCrc;
  /** Its id with the file writer, once it has one. */
  writerId: number;
}

/** The recording files of one run, sharing a budget of descriptors and buffer bytes. */
export class BufferedFiles {
  readonly #place: FilePlace;
  readonly #limits: FileLimits;
  /** The open files, least recently written first. */
  readonly #open = new Set<BufferedFile>();
  /** The files that hold a buffer, and the bytes the buffers take. */
  readonly #holding = new Set<BufferedFile>();
  #held = 0;
  /** Bytes given so far, to all files; the file writer once they reach threadAfter. */
  #given = 0;
  #writer: FileWriter | undefined;
  /** Every file made, for the file writer's CRC-32s at close(). */
  readonly #files: BufferedFile[] = [];
  /** Write calls made on this thread (the tests count them). */
  writeCalls = 0;

  constructor(place: FilePlace, limits: FileLimits = fileLimits()) {
    this.#place = place;
    this.#limits = limits;
  }

  /** Files open now (never more than openMax). */
  get openCount(): number {
    return this.#open.size;
  }

  /** Bytes the buffers take now (about bufferedMax at most). */
  get held(): number {
    return this.#held;
  }

  /** A file `name` in the place, created now (it exists from its first bytes), which starts with `header`. */
  file(name: string, header: Uint8Array): BufferedFile {
    const f: BufferedFile = {
      name,
      path: this.#place.path(name),
      fd: -1,
      created: false,
      buffer: undefined,
      buffered: 0,
      check: new RunningCrc(),
      writerId: -1,
    };
    this.#files.push(f);
    this.#use(f);
    this.append(f, header, 0, header.length);
    return f;
  }

  /**
   * Appends data[start .. start+len) to `f`: a quarter of a full buffer or more goes to the file without a copy.
   * `crc`: the bytes' CRC-32, when it is known (worked out in the thread that made them).
   */
  append(f: BufferedFile, data: Uint8Array, start: number, len: number, crc?: number): void {
    this.#given += len;
    if (this.#writer === undefined && this.#given >= this.#limits.threadAfter) {
      // What was given so far written first, and in its files' CRC-32s: the thread's follow on from them.
      this.flush();
      this.#writer = fileWriter();
    }
    if (this.#writer === undefined) {
      if (crc === undefined) f.check.update(data.subarray(start, start + len));
      else f.check.append(crc, len);
    }
    const max = this.#limits.fileBuffer;
    if (4 * len >= max || f.buffered + len > max) {
      this.#write(f);
      if (4 * len >= max) {
        this.#writeOut(f, data.subarray(start, start + len), crc);
        return;
      }
    }
    let buffer = f.buffer;
    if (buffer === undefined || f.buffered + len > buffer.length) {
      const grown = new Uint8Array(
        Math.min(max, Math.max(FIRST_BUFFER_LEN, 2 * (buffer?.length ?? 0), f.buffered + len)),
      );
      if (buffer !== undefined) grown.set(buffer.subarray(0, f.buffered));
      this.#held += grown.length - (buffer?.length ?? 0);
      f.buffer = buffer = grown;
      this.#holding.add(f);
    }
    buffer.set(data.subarray(start, start + len), f.buffered);
    f.buffered += len;
    if (this.#held >= this.#limits.bufferedMax) this.flush();
  }

  /** Writes every file's buffered bytes, and lets the buffers go. */
  flush(): void {
    for (const f of this.#holding) {
      this.#write(f);
      this.#held -= f.buffer?.length ?? 0;
      f.buffer = undefined;
    }
    this.#holding.clear();
  }

  /** Writes everything and closes every file. */
  close(): void {
    const writer = this.#writer;
    try {
      this.flush();
      writer?.drain();
    } finally {
      // Every write given is done before a descriptor is closed, failed or not.
      if (writer !== undefined) {
        const mine = this.#files.filter((f) => f.writerId >= 0);
        this.#writer = undefined;
        writer.finish(mine.map((f) => f.writerId)).forEach((w, k) => mine[k]?.check.append(w.crc, w.len));
      }
      for (const f of this.#open) this.#close(f);
    }
  }

  /** Opens `f` if it is not open (created the first time, appended to after), closing the least recently written file
   * if too many are; `f` is then the most recent. */
  #use(f: BufferedFile): void {
    if (f.fd >= 0) {
      this.#open.delete(f);
      this.#open.add(f);
      return;
    }
    if (this.#open.size >= this.#limits.openMax) {
      const least = this.#open.values().next().value;
      if (least !== undefined) this.#close(least);
    }
    try {
      // Made new; opened again only to append to the file it is, never through a link.
      f.fd = f.created ? this.#place.append(f.name) : this.#place.create(f.name);
    } catch (err) {
      if (err instanceof InputError) throw err;
      throw new InputError(f.path, "", `cannot ${f.created ? "write" : "create"}: ${describeIoError(err)}`);
    }
    f.created = true;
    this.#open.add(f);
  }

  #close(f: BufferedFile): void {
    this.#writer?.drain();
    this.#open.delete(f);
    const fd = f.fd;
    f.fd = -1;
    if (fd >= 0) closeSync(fd);
  }

  /** Writes `f`'s buffered bytes; its buffer stays for what comes next. */
  #write(f: BufferedFile): void {
    if (f.buffered === 0 || f.buffer === undefined) return;
    this.#writeOut(f, f.buffer.subarray(0, f.buffered));
    f.buffered = 0;
  }

  /** `crc`: the bytes' CRC-32, when known (the file writer combines it rather than reading them). */
  #writeOut(f: BufferedFile, bytes: Uint8Array, crc?: number): void {
    this.#use(f);
    const writer = this.#writer;
    if (writer !== undefined) {
      if (f.writerId < 0) f.writerId = writer.id();
      writer.write(f.fd, f.writerId, f.path, bytes, 0, bytes.length, crc);
      return;
    }
    this.writeCalls++;
    try {
      for (let done = 0; done < bytes.length;) done += writeSync(f.fd, bytes, done, bytes.length - done);
    } catch (err) {
      throw new InputError(f.path, "", `cannot write: ${describeIoError(err)}`);
    }
  }
}
