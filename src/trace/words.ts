// A trace line in words: a packet's header line, each step, and where each copy ended, as
// `strata trace` prints them and `strata view` shows them.

import type { TraceLine, TraceStep } from "../engine/trace.js";
import { isoTimeNs } from "../time.js";
import { TRACE_LINE_MAX_TEXT } from "./read.js";

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

export function formatPath(line: TraceLine): string {
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
      const via = s[key] === null || s[key] === undefined ? "" : `${key} ${s[key]}`;
      const row = s.row === null ? "no row matches" : `row ${s.row}: ${s.rule}`;
      const intent = typeof s["intent"] === "string" ? `  (${s["intent"]})` : "";
      return `${pad(s.step)}${s.member}  ${via.padEnd(8)} ${row}${intent}`;
    }
  }
}
