// `strata trace DIR [--packet N] [--json]`: a replay's trace, for a person.
// Without --packet, one line per packet: where it went. With it, every step.

import { existsSync } from "node:fs";
import { join } from "node:path";
import { InputError } from "../errors.js";
import { readIndexed, TRACE_FILE } from "../engine/trace-file.js";
import { checkDigest, recordedDigests } from "../engine/digests.js";
import { TRACE_LINE_MAX } from "../engine/trace.js";
import { parseTraceLine, readTrace } from "../trace/read.js";
import { fateOf, formatHeader, formatPath } from "../trace/words.js";
import type { Io } from "./io.js";

export interface TraceFlags {
  packet?: number;
  json?: boolean;
}

/** Prints the trace of the replay in `dir`: a line a packet, or every step of --packet. Lines are held to `lineMax`
 * bytes (a test sets a smaller bound than TRACE_LINE_MAX, to try both sides of it without writing 64 MiB). */
export async function showTrace(dir: string, flags: TraceFlags, io: Io, lineMax = TRACE_LINE_MAX): Promise<void> {
  const file = join(dir, TRACE_FILE);
  if (!existsSync(file))
    throw new InputError(file, "", "there is no trace here", "replay with `strata run … --trace` first");
  // Before a line is shown: the trace must be the one the run wrote.
  checkDigest(dir, TRACE_FILE, recordedDigests(dir));
  if (flags.packet !== undefined) {
    const indexed = readIndexed(dir, flags.packet, lineMax);
    if (indexed?.found === false) throw noPacket(file, flags.packet, indexed);
    const line = indexed === undefined ? undefined : parseTraceLine(indexed.text, file, indexed.line);
    if (line !== undefined && indexed?.found === true && line.packet === flags.packet) {
      io.stdout.write(flags.json === true ? `${indexed.text}\n` : formatPath(line));
      return;
    }
  }
  // Every line in turn: the list, or --packet without an index that is the trace's (a trace from an older strata).
  const held = { lines: 0, first: 0, last: 0 };
  for await (const { text, line: checked } of readTrace(file, lineMax)) {
    if (held.lines++ === 0) held.first = checked.packet;
    held.last = checked.packet;
    if (flags.packet !== undefined) {
      if (checked.packet !== flags.packet) continue;
      io.stdout.write(flags.json === true ? `${text}\n` : formatPath(checked));
      return;
    }
    io.stdout.write(flags.json === true ? `${text}\n` : `${formatHeader(checked)}  ${fateOf(checked)}\n`);
    await io.stdout.flush();
  }
  if (flags.packet !== undefined) throw noPacket(file, flags.packet, held);
}

/** No line for `packet`: what the trace holds instead. */
function noPacket(
  file: string,
  packet: number,
  held: { readonly lines: number; readonly first: number; readonly last: number },
): InputError {
  const holds =
    held.lines === 0
      ? "it holds none"
      : held.lines === 1
        ? `it holds packet ${held.first} only`
        : `it holds ${held.lines} packets, from ${held.first} to ${held.last}`;
  return new InputError(file, "", `no packet ${packet} in the trace (${holds})`);
}
