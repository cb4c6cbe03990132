// `strata trace DIR [--packet N] [--json]`: a replay's trace, for a person.
// Without --packet, one line per packet: where it went. With it, every step.

import { createReadStream, existsSync } from "node:fs";
import { join } from "node:path";
import { describeIoError, InputError } from "../errors.js";
import { type Line, readLines } from "../lines.js";
import { readIndexed, TRACE_FILE } from "../engine/trace-file.js";
import { checkDigest, recordedDigests } from "../engine/digests.js";
import { checkTraceLine, TRACE_LINE_MAX, type TraceLine, type TraceStep } from "../engine/trace.js";
import { isoTimeNs } from "./format.js";
import type { Io } from "./io.js";

export interface TraceFlags {
  packet?: number;
  json?: boolean;
}

/** Prints the trace of the replay in `dir`: a line a packet, or every step of --packet. */
export async function showTrace(dir: string, flags: TraceFlags, io: Io): Promise<void> {
  const file = join(dir, TRACE_FILE);
  if (!existsSync(file))
    throw new InputError(file, "", "there is no trace here", "replay with `strata run … --trace` first");
  // Before a line is shown: the trace must be the one the run wrote.
  checkDigest(dir, TRACE_FILE, recordedDigests(dir));
  if (flags.packet !== undefined) {
    const indexed = readIndexed(dir, flags.packet, TRACE_LINE_MAX);
    if (indexed?.found === false) throw noPacket(file, flags.packet, indexed);
    const line = indexed === undefined ? undefined : parseTraceLine(indexed.text, file, indexed.line);
    if (line !== undefined && indexed?.found === true && line.packet === flags.packet) {
      io.stdout.write(flags.json === true ? `${indexed.text}\n` : formatPath(line));
      return;
    }
  }
  // Every line in turn: the list, or --packet without an index that is the trace's (a trace from an older strata).
  const held = { lines: 0, first: 0, last: 0 };
  for await (const { text, line: checked } of readTrace(file)) {
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

const EDITED = "the file was cut or edited; replay again";
const TRACE_LINE_MAX_TEXT = `${TRACE_LINE_MAX >> 20} MiB`;

/**
 * Every line of the trace `file` (empty lines passed over), checked: InputError for a line that is
 * not a trace line as `strata run --trace` writes it, or longer than TRACE_LINE_MAX, and for a file that cannot be
 * read.
 */
export async function* readTrace(file: string): AsyncGenerator<{ readonly text: string; readonly line: TraceLine }> {
  for await (const line of readable(readLines(createReadStream(file), TRACE_LINE_MAX), file)) {
    const n = line.number;
    if (!line.ok)
      throw new InputError(
        file,
        `line ${n}`,
        `longer than ${TRACE_LINE_MAX_TEXT}, the most a trace line holds`,
        EDITED,
      );
    if (line.text === "") continue;
    yield { text: line.text, line: parseTraceLine(line.text, file, n) };
  }
}

/** Line `n` of the trace `file`, checked: InputError when it is not a trace line. */
function parseTraceLine(text: string, file: string, n: number): TraceLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InputError(file, `line ${n}`, "not a JSON trace line", EDITED);
  }
  const checked = checkTraceLine(value);
  if (!checked.ok) throw new InputError(file, `line ${n}`, checked.problem, EDITED);
  return checked.value;
}

/** The lines of the trace; a file that cannot be read (a directory, no permission) is bad input. */
async function* readable(lines: AsyncIterable<Line>, file: string): AsyncGenerator<Line> {
  try {
    yield* lines;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === undefined) throw err;
    throw new InputError(
      file,
      "",
      `cannot read the trace: ${describeIoError(err)}`,
      "replay with `strata run … --trace` to write it again",
    );
  }
}

/** A packet's first line: its number, endpoint, time and length. */
export function formatHeader(line: Pick<TraceLine, "packet" | "endpoint" | "tsNs" | "len">): string {
  const ns = BigInt(line.tsNs);
  return (
    `packet ${line.packet}  ${line.endpoint}  ` +
    `${isoTimeNs(Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n))}  ${line.len} bytes`
  );
}

/** Where every copy ended: delivered, dropped (and why), or left the network. */
export function fate(steps: readonly TraceStep[]): string {
  const ends = fates(steps);
  return ends.length === 0 ? "(no end recorded)" : ends.join("; ");
}

/** Each copy's end, in the order they came: "delivered to lan.h2", "dropped at lan.h4 (acquire-miss)", "left on
 * lan.up". */
export function fates(steps: readonly TraceStep[]): string[] {
  return steps.flatMap((s) => {
    if (s.step === "deliver") return [`delivered to ${s.member}`];
    if (s.step === "drop") return [`dropped at ${s.member ?? "the edge"} (${s.reason})`];
    if (s.step === "exit") return [`left on ${s.link}`];
    return [];
  });
}

/** A line's fate, and how many of its steps were not kept (a line stops at TRACE_LINE_MAX). */
export function fateOf(line: TraceLine): string {
  const cut = line.cut ?? 0;
  const notKept = cut > 0 ? `; ${cut} more steps not kept (the line reached ${TRACE_LINE_MAX_TEXT})` : "";
  return `${fate(line.steps)}${notKept}`;
}

function formatPath(line: TraceLine): string {
  const out = [formatHeader(line)];
  for (const s of line.steps) out.push(`  [${s.copy}] ${describe(s)}`);
  out.push(`  → ${fateOf(line)}`);
  return `${out.join("\n")}\n`;
}

/** One step, as `strata trace --packet N` shows it after its copy's `[k]`. */
export function describe(s: TraceStep): string {
  const pad = (t: string): string => t.padEnd(9);
  switch (s.step) {
    case "inject":
      return `${pad("inject")}${
        s.at === "self" ? `sent by ${s.member}` : s.at === "send" ? `sent by ${s.member} in a session` : `on ${s.at}`
      }`;
    case "link":
      return `${pad("link")}${s.link}${s.from === null ? " from outside" : ` from ${s.from}`} (hop ${s.hops})`;
    case "exit":
      return `${pad("exit")}left the network on ${s.link}`;
    case "fork":
      return (
        `${pad("fork")}${s.member}: copy of ` +
        `[${s.from}] ${s.at === "link" ? `to ${s.to}` : s.at === "acquire" ? "to receive" : `to out ${s.to}`}`
      );
    case "deliver":
      return `${pad("deliver")}to ${s.member}`;
    case "push":
      return (
        `${pad("push")}${s.member} put on its header (+${s.bytes} bytes, ` +
        `session ${s.session}) on machine ${s.machine}`
      );
    case "pop":
      return `${pad("pop")}${s.member} took off its header (−${s.bytes} bytes) on machine ${s.machine}`;
    case "handoff":
      return (
        `${pad("handoff")}${s.from} → ${s.to} on machine ${s.machine}, ` +
        `into its ${s.at} table${s.session !== null ? ` (session ${s.session})` : s.in !== null ? ` (in ${s.in})` : ""}`
      );
    case "drop":
      return `${pad("drop")}${s.member ?? "at the edge"}: ${s.reason} (in ${s.stage})`;
    default: {
      const key = s.step === "transmit" ? "out" : s.step === "send" ? "session" : "in";
      const port = s[key] === null || s[key] === undefined ? "" : `${key} ${s[key]}`;
      const row = s.row === null ? "no row matches" : `row ${s.row}: ${s.rule}`;
      return `${pad(s.step)}${s.member}  ${port.padEnd(8)} ${row}`;
    }
  }
}
