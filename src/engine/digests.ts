// summary.json's `crc32`: the CRC-32 of every file a run wrote beside it (its recordings,
// trace.jsonl), computed as strata wrote each (./outputs.ts, ./checksum.ts). The commands that read a run's
// files check each one against it before they show anything of it: a trace edited by hand or a
// recording swapped for another capture is one line and exit 2, never shown as the run's. It
// guards against accidents, not against someone who edits summary.json too.

import { closeSync, constants, existsSync, fstatSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { describeIoError, InputError } from "../errors.js";
import { MAX_SUMMARY_BYTES, readBounded } from "../read-file.js";
import { RunningCrc } from "./checksum.js";
import { SUMMARY_FILE } from "./outputs.js";

const EDITED = "the file was cut, edited or replaced after the run; replay again";

/** Bytes read at a time. */
const CHUNK = 1 << 20;

/**
 * The CRC-32 (hex) of the file at `path`, read a chunk at a time; undefined when it is not a
 * regular file (a device, a pipe: never what a run wrote, and /dev/zero never ends) or it grew
 * while it was read. Opened without waiting, so a named pipe in its place cannot hold strata.
 */
export function hashFile(path: string): string | undefined {
  const check = new RunningCrc();
  const buffer = Buffer.alloc(CHUNK);
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return undefined;
    let total = 0;
    for (
      let n = readSync(fd, buffer, 0, CHUNK, null);
      n > 0 && total <= stat.size;
      n = readSync(fd, buffer, 0, CHUNK, null)
    ) {
      check.update(buffer.subarray(0, n));
      total += n;
    }
    return total === stat.size ? check.hex() : undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * Checks DIR/`name` against the digest `digests` records for it: InputError when they differ.
 * Nothing to check when none is recorded (a run of an older strata) or the file is not there
 * (the caller says what that means).
 */
export function checkDigest(dir: string, name: string, digests: Readonly<Record<string, string>> | undefined): void {
  const recorded = digests?.[name];
  const file = join(dir, name);
  if (recorded === undefined || !existsSync(file)) return;
  let got: string | undefined;
  try {
    got = hashFile(file);
  } catch (err) {
    throw new InputError(file, "", `cannot read it: ${describeIoError(err)}`);
  }
  if (got === undefined)
    throw new InputError(
      file,
      "",
      "not the file the run wrote: it is not a regular file, or it grew as it was read",
      EDITED,
    );
  if (got !== recorded)
    throw new InputError(
      file,
      "",
      `not the file the run wrote: its CRC-32 is not the one ${SUMMARY_FILE} records`,
      EDITED,
    );
}

/** Whether `value` is summary.json's `crc32` as strata writes it: file names to 8 hex digits. */
export function isDigests(value: unknown): value is Record<string, string> {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((v) => typeof v === "string" && /^[0-9a-f]{8}$/.test(v))
  );
}

/**
 * The digests DIR/summary.json records: undefined when there is no summary (a serve that did not
 * stop, a run that did not finish) or it records none (an older strata); InputError for a
 * summary that is not one strata wrote.
 */
export function recordedDigests(dir: string): Record<string, string> | undefined {
  const file = join(dir, SUMMARY_FILE);
  if (!existsSync(file)) return undefined;
  const text = readBounded(file, MAX_SUMMARY_BYTES, {
    what: "the run's summary",
    noun: "run's summary",
    fix: "give the directory of a run",
  }).toString();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InputError(file, "", "not JSON", EDITED);
  }
  const digests = typeof value === "object" && value !== null ? (value as Record<string, unknown>)["crc32"] : undefined;
  if (digests === undefined) return undefined;
  if (!isDigests(digests))
    throw new InputError(file, "crc32", "crc32 must map file names to CRC-32s (8 hex digits)", EDITED);
  return digests;
}
