// `strata run SPEC --in ENDPOINT=FILE... --out DIR [--trace] [--trace-packets RANGES]`: replay captures
// through a network and write what every link carried and every member got.

import { join } from "node:path";
import { type Command, Option } from "commander";
import cliProgress from "cli-progress";
import { UsageError } from "../errors.js";
import { ENDPOINT_FORMS } from "../control/endpoints.js";
import { replay } from "../run/replay.js";
import { parsePacketRanges, TRACE_PACKETS_HELP } from "../run/trace-packets.js";
import { TRACE_LARGE_BYTES } from "../engine/trace.js";
import { TRACE_FILE } from "../engine/trace-file.js";
import { WORKERS_MAX } from "../run/workers.js";
import { COPY_LIMIT_MAX, HOP_LIMIT_MAX, type PacketRanges } from "../wasm/runner.js";
import type { Summary } from "../engine/summary.js";
import { fileSize } from "./format.js";
import type { Io } from "./io.js";
import type { CommandContext } from "./command.js";
import { EXIT_BAD_INPUT, EXIT_OK } from "./exit-codes.js";

interface RunFlags {
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
}

export function registerRun(program: Command, ctx: CommandContext): void {
  program
    .command("run")
    .description("replay captures through the networks of a description")
    .argument("<spec>", "network description (YAML or JSON)")
    .requiredOption(
      "--in <endpoint=file>",
      `inject a capture at an endpoint (${ENDPOINT_FORMS}); repeatable`,
      collect,
      [],
    )
    .requiredOption(
      "--out <dir>",
      "directory for links/, delivered/, summary.json (and trace.jsonl): new, empty, or written by strata before",
    )
    .option("--force", "write into a non-empty directory strata did not write (never replacing a file there)")
    .option("--trace", "also write trace.jsonl: every step of every packet")
    .addOption(
      new Option("--trace-packets <ranges>", TRACE_PACKETS_HELP).argParser((v: string) => parsePacketRanges(v)),
    )
    .option("--json", "print summary.json on stdout instead of a short report")
    .option(
      "--updates <file>",
      "apply timed changes at capture times: new descriptions, links and members down and up (docs/updates.md)",
    )
    .addOption(
      new Option("--hop-limit <n>", `links a packet may cross before it is dropped as a loop (1 to ${HOP_LIMIT_MAX})`)
        .default(64)
        .argParser(limit("--hop-limit", HOP_LIMIT_MAX)),
    )
    .addOption(
      new Option("--copy-limit <n>", `copies replication may make of one input packet (1 to ${COPY_LIMIT_MAX})`)
        .default(4096)
        .argParser(limit("--copy-limit", COPY_LIMIT_MAX)),
    )
    .addOption(
      new Option(
        "--workers <n>",
        `data planes to run packets on, in chunks: this thread's and n − 1 worker threads (1 to ${WORKERS_MAX}; ` +
          `default: one per core, one per 64 MiB of captures at most)`,
      ).argParser(limit("--workers", WORKERS_MAX)),
    )
    .addHelpText(
      "after",
      `
Endpoints:
  lan:h1.1     packets transmitted by member h1 of network lan on its link 1
  lan:h1       packets sent by h1 itself (its forward table, in-link self)
  lan:h1@7     packets sent by h1 in session 7 (its send table attaches the header)
  lan:uplink   packets arriving from outside on the external link uplink
The network may be left out when the description has only one. Several inputs are
merged in timestamp order.

With --workers N the packets run on N data planes (this thread's and N − 1 worker
threads), each chunk of packets on one; every output is the same, byte for byte, as
with one.

strata deletes or replaces only files it wrote (DIR/.strata-output lists them). It
refuses an --out that holds an input (the description or a capture), and one with other
files in it unless --force is given; it never replaces a file it did not write.

--updates FILE is a YAML or JSON list of changes at capture times (docs/updates.md):
  - { at: 1700000000.25, description: fixed.yaml }   # tables change
  - { at: "2023-11-14T22:13:21Z", down: { link: lanA:h1.1 } }
  - { at: 1700000002, up: { member: lanA:r } }
Every update is checked before the first packet; a packet at or after an update's
time is processed after it. summary.json lists the updates and the packet each came before.

Exit codes: 0 done; 2 bad description, endpoint, flag, updates, capture or --out (a damaged capture
is replayed up to the damage, outputs are written, then the error is reported).
All exit codes: strata --help.`,
    )
    .action((spec: string, flags: RunFlags) => {
      ctx.exitCode = runReplay(spec, flags, ctx.io);
    });
}

/** Commander's collector for a repeatable option. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** A parser for a whole number from 1 to `max`; anything else is one line on stderr and exit 2. */
export function limit(flag: string, max: number): (v: string) => number {
  return (v) => {
    if (!/^\d+$/.test(v)) throw new UsageError(`${flag} ${v} is not a whole number (give 1 to ${max})`);
    const n = Number(v);
    if (n < 1) throw new UsageError(`${flag} ${v} is too small (at least 1)`);
    if (n > max) throw new UsageError(`${flag} ${v} is too large (at most ${max})`);
    return n;
  };
}

function parseInputs(list: readonly string[]): { endpoint: string; file: string }[] {
  return list.map((arg) => {
    const eq = arg.indexOf("=");
    if (eq <= 0 || eq === arg.length - 1)
      throw new UsageError(`--in '${arg}' must be ENDPOINT=FILE, e.g. --in lan:h1.1=pcaps/h1.pcap`);
    return { endpoint: arg.slice(0, eq), file: arg.slice(eq + 1) };
  });
}

function runReplay(spec: string, flags: RunFlags, io: Io): number {
  const inputs = parseInputs(flags.in);
  const bar = io.stderrIsTTY
    ? new cliProgress.SingleBar(
        { format: "replaying [{bar}] {percentage}% | {packets} packets", stream: process.stderr, hideCursor: true },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  let barStarted = false;
  const result = (() => {
    try {
      return replay({
        spec,
        inputs,
        out: flags.out,
        force: flags.force === true,
        trace: flags.trace === true,
        ...(flags.tracePackets !== undefined ? { tracePackets: flags.tracePackets } : {}),
        hopLimit: flags.hopLimit,
        copyLimit: flags.copyLimit,
        ...(flags.workers !== undefined ? { workers: flags.workers } : {}),
        ...(flags.updates !== undefined ? { updates: flags.updates } : {}),
        warn: (line: string) => io.stderr.write(`strata: warning: ${line}\n`),
        ...(bar !== undefined
          ? {
              progress: (done: number, total: number, packets: number) => {
                if (!barStarted) {
                  bar.start(Math.max(total, 1), 0, { packets: 0 });
                  barStarted = true;
                }
                bar.update(done, { packets });
              },
            }
          : {}),
      });
    } finally {
      if (barStarted) bar?.stop();
    }
  })();
  io.stdout.write(
    flags.json === true ? `${JSON.stringify(result.summary, null, 2)}\n` : report(result.summary, flags.out),
  );
  const note = result.trace === undefined ? undefined : largeTrace(join(flags.out, TRACE_FILE), result.trace);
  if (note !== undefined) io.stderr.write(`strata: ${note}\n`);
  for (const error of result.errors) io.stderr.write(`strata: ${error.message}\n`);
  return result.errors.length > 0 ? EXIT_BAD_INPUT : EXIT_OK;
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
export function report(s: Summary, out: string): string {
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
  lines.push(outputsLine(s, out));
  return `${lines.map((l) => l.trimEnd()).join("\n")}\n`;
}

/** What a replay wrote into `out`, for the last line of a report. */
export function outputsLine(s: Summary, out: string): string {
  // What strata writes are recordings (its inputs are captures): pcap files either way.
  const files = (n: number): string => `${n} ${n === 1 ? "recording" : "recordings"}`;
  const recorded = Object.keys(s.links).filter((k) => s.links[k]?.file !== null).length;
  return (
    `outputs in ${out}: summary.json, links/ (${files(recorded)}), ` +
    `delivered/ (${files(Object.keys(s.delivered).length)})`
  );
}
