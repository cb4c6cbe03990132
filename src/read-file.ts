// Every file strata reads whole — descriptions, target profiles, fleets, updates files, TLS
// files, a run's summary.json — is read through here, up to a limit of its kind: /dev/zero, a
// pipe or a huge file costs at most the limit, and past it the file is refused in one line
// (`--tls-cert /dev/zero` grew to 14.5 GB before). Files read as streams (captures, traces)
// are bounded by their records and lines instead.

import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { describeIoError, InputError } from "./errors.js";

/** The largest summary.json strata view reads: one line per link, member and table row of a description of at most
 * 16 MiB. */
export const MAX_SUMMARY_BYTES = 256 * 1024 * 1024;

/** How a file of one kind is named in the lines that refuse it. */
export interface FileWords {
  /** In "cannot read WHAT: …": "file", "the --tls-cert file". */
  readonly what: string;
  /** In "the most a NOUN may be": "description", "--tls-cert file". */
  readonly noun: string;
  /** What to give instead of a file that cannot be read. */
  readonly fix: string;
  /** What to give instead of one too large (default: `fix`). */
  readonly tooLarge?: string;
}

/** The bytes of a file read up to a limit: all of them, or, when there are more, the first ones and `over`. */
export interface Head {
  readonly bytes: Buffer;
  /** The file holds more than the limit: `bytes` is its start only (enough to tell what kind of file it is). */
  readonly over: boolean;
}

/** Bytes kept of a file over its limit whose size is known: enough for any magic number. */
const HEAD_LEN = 64;

/**
 * Bytes read into each buffer after the first. A stream read to its limit is kept in buffers of this size, never
 * copied into a larger one: one buffer grown by doubling took 3.9 s of CPU to read the 256 MiB + 1 of /dev/zero that
 * refuses it as a summary.json (AMD EPYC, load 20), these 1.3 s.
 */
const CHUNK_LEN = 1 << 20;

/**
 * The bytes of `file`, at most `limit`: a regular file larger than that is not read beyond its
 * head, anything else (a pipe, a device) not beyond limit + 1 bytes. An InputError when it cannot
 * be opened or read, or is a directory.
 */
export function readUpTo(file: string, limit: number, words: FileWords): Head {
  const fail = (problem: string): InputError =>
    new InputError(file, "", `cannot read ${words.what}: ${problem}`, words.fix);
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (err) {
    throw fail(describeIoError(err));
  }
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) throw fail("it is a directory");
    // A regular file larger than the limit is refused for its size: only its head is read, to name its kind.
    if (stat.isFile() && stat.size > limit)
      return { bytes: joined(readAll(fd, Math.min(stat.size, HEAD_LEN), HEAD_LEN), HEAD_LEN), over: true };
    // Otherwise up to one byte past the limit, which tells a stream at the limit from a longer one (a file in /proc
    // says it has 0 bytes: what it says is only where to start).
    const chunks = readAll(fd, stat.isFile() ? stat.size + 1 : 1 << 16, limit + 1);
    const length = chunks.reduce((n, c) => n + c.length, 0);
    return length > limit
      ? { bytes: joined(chunks, HEAD_LEN), over: true }
      : { bytes: joined(chunks, length), over: false };
  } catch (err) {
    if (err instanceof InputError) throw err;
    throw fail(describeIoError(err));
  } finally {
    closeSync(fd);
  }
}

/** The bytes from `fd` up to its end or `most` of them: a buffer of `first` bytes, then as many of CHUNK_LEN as
 * they fill. */
function readAll(fd: number, first: number, most: number): Buffer[] {
  const chunks: Buffer[] = [];
  let filled = 0;
  for (let size = Math.max(1, first); filled < most; size = CHUNK_LEN) {
    const chunk = Buffer.allocUnsafe(Math.min(size, most - filled));
    let got = 0;
    for (let n = -1; n !== 0 && got < chunk.length; got += n) n = readSync(fd, chunk, got, chunk.length - got, null);
    if (got > 0) chunks.push(chunk.subarray(0, got));
    filled += got;
    // A buffer not filled: the end.
    if (got < chunk.length) break;
  }
  return chunks;
}

/** The first `length` bytes of `chunks` (or all, when fewer) in one buffer: the one chunk itself when it is all. */
function joined(chunks: readonly Buffer[], length: number): Buffer {
  const only = chunks.length === 1 ? chunks[0] : undefined;
  if (only !== undefined && only.length <= length) return only;
  const all = chunks.reduce((n, c) => n + c.length, 0);
  return Buffer.concat(chunks, Math.min(length, all));
}

/** The bytes of `file`; an InputError naming it when it cannot be read or holds more than `limit` bytes. */
export function readBounded(file: string, limit: number, words: FileWords): Buffer {
  const { bytes, over } = readUpTo(file, limit, words);
  if (over) throw new InputError(file, "", tooLargeProblem(limit, words.noun), words.tooLarge ?? words.fix);
  return bytes;
}

/** "the file is larger than 16 MiB, the most a description may be". */
export function tooLargeProblem(limit: number, noun: string): string {
  return `the file is larger than ${sizeText(limit)}, the most a ${noun} may be`;
}

/** A limit in words: "16 MiB", "1000 bytes". */
export function sizeText(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}
