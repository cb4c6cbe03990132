// `strata run SPEC --in ENDPOINT=FILE... --out DIR [--trace] [--trace-packets RANGES]`: replay captures
// through a network and write what every link carried and every member got.

import { join } from "node:path";
import cliProgress from "cli-progress";
import { UsageError } from "../errors.js";
import { replay, type ReplayOptions } from "../run/replay.js";
import { TRACE_LARGE_BYTES } from "../engine/trace.js";
import { TRACE_FILE } from "../engine/trace-file.js";
import type { PacketRanges } from "../wasm/runner.js";
import type { AnalysisAt, Summary } from "../engine/summary.js";
import { fileSize } from "./format.js";
import type { Io } from "./io.js";
import { EXIT_BAD_INPUT, EXIT_OK } from "./exit-codes.js";

export interface RunFlags {
  in: string[];
  out: string;
  force?: boolean;
  trace?: boolean;
  tracePackets?: PacketRanges;
  json?: boolean;
  hopLimit: number;
  copyLimit: number;
  workers?: number;
  updates?: string;
  analyze?: boolean;
  maxClasses?: number;
  timeLimit?: number;
  /** `--queue URL`: the chunks run on `strata worker`s (./run-queue.ts). */
  queue?: string;
  /** `--shared DIR`, with --queue: where workers put outputs too large for Redis. */
  shared?: string;
}

export function parseInputs(list: readonly string[]): { endpoint: string; file: string }[] {
  return list.map((arg) => {
    const eq = arg.indexOf("=");
    if (eq <= 0 || eq === arg.length - 1)
      throw new UsageError(`--in '${arg}' must be ENDPOINT=FILE, e.g. --in lan:h1.1=pcaps/h1.pcap`);
    return { endpoint: arg.slice(0, eq), file: arg.slice(eq + 1) };
  });
}

/** The --in inputs, once the flags that bound the analysis are checked (UsageError). */
export function checkedInputs(flags: RunFlags): { endpoint: string; file: string }[] {
  const inputs = parseInputs(flags.in);
  for (const [flag, v] of [
    ["--max-classes", flags.maxClasses],
    ["--time-limit", flags.timeLimit],
  ] as const)
    if (v !== undefined && flags.analyze !== true)
      throw new UsageError(`${flag} bounds the analysis: give --analyze too (strata run --analyze ${flag} ${v})`);
  return inputs;
}

/** The replay's options that `strata run` and `strata run --queue` both take from the flags. */
export function replayBase(spec: string, flags: RunFlags, inputs: ReplayOptions["inputs"]) {
  return {
    spec,
    inputs,
    out: flags.out,
    force: flags.force === true,
    trace: flags.trace === true,
    ...(flags.tracePackets !== undefined ? { tracePackets: flags.tracePackets } : {}),
    hopLimit: flags.hopLimit,
    copyLimit: flags.copyLimit,
  };
}

/** Replays, prints the report, and returns the exit code. */
export function runReplay(spec: string, flags: RunFlags, io: Io): number {
  const inputs = checkedInputs(flags);
  const bar = progressBar(io);
  const result = (() => {
    try {
      return replay({
        ...replayBase(spec, flags, inputs),
        ...(flags.workers !== undefined ? { workers: flags.workers } : {}),
        ...(flags.updates !== undefined ? { updates: flags.updates } : {}),
        ...(flags.analyze === true
          ? {
              analyze: {
                ...(flags.maxClasses !== undefined ? { maxClasses: flags.maxClasses } : {}),
                ...(flags.timeLimit !== undefined ? { timeLimit: flags.timeLimit } : {}),
              },
            }
          : {}),
        warn: (line: string) => io.stderr.write(`strata: warning: ${line}\n`),
        ...(bar !== undefined ? { progress: bar.progress } : {}),
      });
    } finally {
      bar?.stop();
    }
  })();
  return printResult(flags, io, result);
}

/** Prints a replay's report (or summary.json), its notes and its inputs' errors; the exit code. */
export function printResult(
  flags: RunFlags,
  io: Io,
  result: {
    readonly summary: Summary;
    readonly errors: readonly { readonly message: string }[];
    readonly trace?: { readonly bytes: number; readonly packets: number };
  },
): number {
  io.stdout.write(
    flags.json === true
      ? `${JSON.stringify(result.summary, null, 2)}\n`
      : report(result.summary, flags.out, result.trace !== undefined),
  );
  const note = result.trace === undefined ? undefined : largeTrace(join(flags.out, TRACE_FILE), result.trace);
  if (note !== undefined) io.stderr.write(`strata: ${note}\n`);
  for (const error of result.errors) io.stderr.write(`strata: ${error.message}\n`);
  return result.errors.length > 0 ? EXIT_BAD_INPUT : EXIT_OK;
}

/** The replay's progress bar on stderr when it is a terminal (else undefined): started at the first progress. */
export function progressBar(
  io: Io,
): { progress: (done: number, total: number, packets: number) => void; stop: () => void } | undefined {
  if (!io.stderrIsTTY) return undefined;
  const bar = new cliProgress.SingleBar(
    { format: "replaying [{bar}] {percentage}% | {packets} packets", stream: process.stderr, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    progress: (done, total, packets) => {
      if (!started) {
        bar.start(Math.max(total, 1), 0, { packets: 0 });
        started = true;
      }
      bar.update(done, { packets });
    },
    stop: () => {
      if (started) bar.stop();
    },
  };
}

const count = (n: number): string => n.toLocaleString("en-US");

/** For a trace past TRACE_LARGE_BYTES, what it cost and how to make it smaller; else undefined. */
export function largeTrace(
  file: string,
  trace: { readonly bytes: number; readonly packets: number },
): string | undefined {
  if (trace.bytes <= TRACE_LARGE_BYTES) return undefined;
  const each = trace.packets > 0 ? `, ${count(Math.round(trace.bytes / trace.packets))} bytes a packet` : "";
  return (
    `${file}: ${fileSize(trace.bytes)} for ${count(trace.packets)} packets${each} (--trace-packets RANGES ` +
    `traces only the packets named, e.g. --trace-packets 0-999)`
  );
}

/** A short report for a person: where the packets went. */
export function report(s: Summary, out: string, traced = false): string {
  const lines: string[] = [];
  const { injected, delivered, dropped, exited } = s.packets;
  const rate = s.packetsPerSecond > 0 ? ` (${count(s.packetsPerSecond)} packets/s)` : "";
  lines.push(
    `replayed ${count(injected)} packets through ${s.spec} in ${(s.elapsedSeconds * 1000).toFixed(1)} ms${rate}`,
  );
  const top = (entries: [string, number][]): string =>
    entries
      .sort((a, b) => b[1] - a[1])
      .slice(0, 6)
      .map(([k, v]) => `${k} ${count(v)}`)
      .join(", ") + (entries.length > 6 ? ", …" : "");
  lines.push(
    `  delivered ${count(delivered).padStart(8)}   ${top(Object.entries(s.delivered).map(([k, v]) => [k, v.packets]))}`,
  );
  lines.push(
    `  dropped   ${count(dropped).padStart(8)}   ${top(Object.entries(s.drops).map(([k, v]) => [k, v ?? 0]))}`,
  );
  if (exited > 0) lines.push(`  left      ${count(exited).padStart(8)}   on external links`);
  const links = Object.entries(s.links);
  if (links.length > 0) {
    lines.push("  links");
    const width = Math.max(...links.map(([k]) => k.length));
    for (const [name, l] of links) lines.push(`    ${name.padEnd(width)}  ${count(l.packets).padStart(8)} packets`);
  }
  lines.push(outputsLine(s, out, traced));
  lines.push(...analysisLines(s));
  return `${lines.map((l) => l.trimEnd()).join("\n")}\n`;
}

/** What a replay wrote into `out` (`traced`: trace.jsonl too), for the last line of a report. */
export function outputsLine(s: Summary, out: string, traced = false): string {
  // What strata writes are recordings (its inputs are captures): pcap files either way.
  const files = (n: number): string => `${n} ${n === 1 ? "recording" : "recordings"}`;
  const recorded = Object.keys(s.links).filter((k) => s.links[k]?.file !== null).length;
  return (
    `outputs in ${out}: summary.json, links/ (${files(recorded)}), ` +
    `delivered/ (${files(Object.keys(s.delivered).length)})${traced ? ", trace.jsonl" : ""}`
  );
}

/** `--analyze`: the properties at the start, and what each update changed (nothing without an analysis). */
export function analysisLines(s: Summary): string[] {
  const start = s.analysis;
  if (start === undefined) return [];
  const classes = (n: number): string => `${count(n)} header class${n === 1 ? "" : "es"}`;
  const lines = [`analysis at the start: ${verdict(start)} (${classes(start.classes)} walked in ${start.ms} ms)`];
  (s.updates ?? []).forEach((u, i) => {
    const what =
      u.description !== undefined
        ? `description ${u.description}`
        : u.down !== undefined
          ? `down ${target(u.down)}`
          : `up ${target(u.up ?? {})}`;
    const at = `  update ${i} at ${u.at} (${what})`;
    const a = u.analysis;
    if (a === undefined) {
      lines.push(`${at}: ${u.packet === null ? "not applied (no packet came after it)" : "not analysed"}`);
      return;
    }
    const changes = [
      ...a.nowFail.map((p) => `${p} now fails${a.counterexamples[p] ? `: ${a.counterexamples[p]}` : ""}`),
      ...a.nowHold.map((p) => `${p} now holds`),
    ];
    const cost = `${classes(a.classes)} walked again in ${a.ms} ms`;
    const said = changes.length === 0 ? `no property changed (${verdict(a)})` : changes.join("; ");
    lines.push(`${at}, before packet ${u.packet}: ${said}; ${cost}`);
  });
  return lines;
}

function verdict(a: AnalysisAt): string {
  const n = a.holds.length + a.fails.length + a.unknown.length;
  const known = a.unknown.length === 0 ? `${n}` : `the ${n - a.unknown.length} checked`;
  const v =
    a.fails.length === 0
      ? a.unknown.length === 0
        ? `every property holds (${n})`
        : `no property of the ${known} fails`
      : `${a.fails.length} of ${known} properties fail: ${a.fails.join(", ")}`;
  return a.cut === undefined ? v : `${v}; cut short: ${a.cut}`;
}

function target(t: Readonly<Record<string, string | undefined>>): string {
  return Object.entries(t)
    .map(([k, v]) => `${k} ${v ?? ""}`)
    .join(", ");
}
