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
      return { bytes: readAll(fd, Math.min(stat.size, HEAD_LEN), HEAD_LEN), over: true };
    // Otherwise up to one byte past the limit, which tells a stream at the limit from a longer one (a file in /proc
    // says it has 0 bytes: what it says is only where to start).
    const bytes = readAll(fd, stat.isFile() ? stat.size + 1 : 1 << 16, limit + 1);
    return bytes.length > limit ? { bytes: bytes.subarray(0, HEAD_LEN), over: true } : { bytes, over: false };
  } catch (err) {
    if (err instanceof InputError) throw err;
    throw fail(describeIoError(err));
  } finally {
    closeSync(fd);
  }
}

/** The bytes from `fd` up to its end or `most` of them, in a buffer of `first` bytes grown as they come. */
function readAll(fd: number, first: number, most: number): Buffer {
  let buf = Buffer.allocUnsafe(Math.max(1, Math.min(first, most)));
  let filled = 0;
  while (filled < most) {
    if (filled === buf.length) {
      const grown = Buffer.allocUnsafe(Math.min(most, buf.length * 2));
      buf.copy(grown, 0, 0, filled);
      buf = grown;
    }
    const n = readSync(fd, buf, filled, buf.length - filled, null);
    if (n === 0) break;
    filled += n;
  }
  return buf.subarray(0, filled);
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
