// `strata serve SPEC [--port ENDPOINT=IFACE]... [--out DIR] [--trace] [--trace-packets RANGES] [--trace-max MB]
// [--json] [--commands]`:
// keep an emulation of a description running, its external links plugged into
// network interfaces, until Ctrl-C (or a `stop` command).

import { join } from "node:path";
import type { Readable } from "node:stream";
import { Reloader } from "../control/reload.js";
import { excerpt, UsageError } from "../errors.js";
import type { Summary } from "../engine/summary.js";
import { TRACE_FILE } from "../engine/trace-file.js";
import { resolveExternal } from "../engine/sinks.js";
import { fileSize } from "./format.js";
import { portLine } from "../serve/port-counters.js";
import { checkPorts, parsePort } from "../serve/ports.js";
import { chooseBackend, type PortBackendName } from "../serve/port-backend.js";
import type { AnalysisResult } from "../serve/analysis.js";
import { type P4RuntimeSetup, type ServeSetup, serveUntilStopped, type TraceSetup } from "../serve/serving.js";
import type { PacketRanges } from "../wasm/runner.js";
import { describeStats, type ServerStats } from "../p4runtime/server.js";
import type { Tls } from "../p4runtime/tls.js";
import { exposureWarning, servedAt, type TlsFlags, tlsOf } from "./p4runtime.js";
import type { Io } from "./io.js";
import { outputsLine } from "./run.js";
import { TRACE_MAX_BYTES } from "./options.js";
import { EXIT_OK } from "./exit-codes.js";
import { StopSignals } from "./stop-signals.js";

export interface ServeFlags extends TlsFlags {
  port: string[];
  /** What opens the ports' interfaces: the native port process (Linux, where built) or cap. */
  portBackend?: PortBackendName;
  out?: string;
  force?: boolean;
  trace?: boolean;
  tracePackets?: PacketRanges;
  /** Megabytes of trace.jsonl after which tracing stops (default TRACE_MAX_BYTES). */
  traceMax?: number;
  json?: boolean;
  commands?: boolean;
  hopLimit: number;
  copyLimit: number;
  /** HOST:PORT of a P4Runtime server on the emulation (src/p4runtime/). */
  /** HOST:PORT, checked by listenAddress (./listen.ts) when the flag was read. */
  p4runtime?: string;
  /** With --p4runtime: the devices start with no entries. */
  empty?: boolean;
  watch?: boolean;
  /** Keep the analysis of docs/analysis.md current as the tables change; `counts` shows it. */
  analyze?: boolean;
}

/** What a caller other than the command line (a test) gives serve() instead of the process's stdin and signals. */
export interface ServeHooks {
  /** Control commands, one a line (with --commands); the process's stdin by default. */
  readonly commands?: Readable;
  /** Stops the emulation when aborted, as Ctrl-C does. */
  readonly signal?: AbortSignal;
  /** Listen for SIGINT and SIGTERM (the command line does), and SIGHUP. */
  readonly signals?: boolean;
}

/**
 * Runs the emulation until it is stopped; returns the exit code. Everything that can be wrong
 * with the input is found before the first packet: a bad description, port or interface
 * throws (exit 2) with nothing opened or written.
 */
export async function serve(spec: string, flags: ServeFlags, io: Io, hooks: ServeHooks = {}): Promise<number> {
  const setup = setupOf(spec, flags, io, hooks);
  // Before anything is opened or announced: a signal from then on stops the emulation cleanly (once it runs).
  const signals = hooks.signals === true ? new StopSignals() : undefined;
  const { summary, failed, ports, p4stats, analysed } = await serveUntilStopped(
    { ...setup, ...(signals !== undefined ? { signals } : {}) },
    io.stderr,
  );
  const p4json = p4stats === undefined ? {} : { p4runtime: { ...p4stats } };
  const analysisJson =
    analysed === undefined ? {} : { analysis: { finished: analysed.finished, line: analysed.line ?? null } };
  io.stdout.write(
    flags.json === true
      ? `${JSON.stringify({ ...summary, ...p4json, ...analysisJson }, null, 2)}\n`
      : report(summary, {
          out: failed === undefined ? flags.out : undefined,
          traced: setup.out?.trace !== undefined,
          p4stats,
          analysis: analysed,
        }),
  );
  for (const p of ports) {
    if (p.lastError !== "")
      io.stderr.write(`strata: ${p.arg.iface}: the interface refused frames (${excerpt(p.lastError)})\n`);
  }
  // Kept until the last line is out, so that a second Ctrl-C during the last writes still ends the process at once.
  await io.stdout.flush();
  await io.stderr.flush();
  signals?.dispose();
  if (failed !== undefined) throw failed;
  return EXIT_OK;
}

/** What serve runs, from its flags: each checked against the others, the description compiled, the ports' external
 * links found and the package that opens interfaces loaded; a usage or input error before anything is opened. */
function setupOf(spec: string, flags: ServeFlags, io: Io, hooks: ServeHooks): ServeSetup {
  const args = flags.port.map(parsePort);
  checkFlags(flags);
  const tls = tlsOf(flags, (line) => io.stderr.write(`${line}\n`));
  // What loaded it reloads it: an edit of one member's rows is read, compiled and reconciled alone (serve/watch.ts).
  const loader = new Reloader(spec);
  const { compiled } = loader.loadWhole();
  checkPorts(compiled, args);
  const backend = args.length > 0 ? chooseBackend(flags.portBackend) : undefined;
  const ports = args.map((arg) => ({ arg, external: resolveExternal(compiled, arg.endpoint) }));
  const trace = traceOf(flags, io);
  const p4runtime = p4runtimeOf(flags, tls, compiled.machines, io);
  return {
    spec,
    compiled,
    loader,
    ports,
    ...(backend !== undefined ? { backend } : {}),
    hopLimit: flags.hopLimit,
    copyLimit: flags.copyLimit,
    ...(flags.out !== undefined
      ? { out: { dir: flags.out, force: flags.force === true, ...(trace !== undefined ? { trace } : {}) } }
      : {}),
    ...(p4runtime !== undefined ? { p4runtime } : {}),
    watch: flags.watch === true,
    analyze: flags.analyze === true,
    ...(flags.commands === true ? { commands: hooks.commands ?? process.stdin } : {}),
    ...(hooks.signal !== undefined ? { abort: hooks.signal } : {}),
  };
}

/** Refuses the flags that mean nothing without another. */
function checkFlags(flags: ServeFlags): void {
  if (flags.portBackend !== undefined && flags.port.length === 0)
    throw new UsageError("--port-backend chooses what opens the --port interfaces: give --port too");
  if (flags.trace === true && flags.out === undefined)
    throw new UsageError("--trace writes trace.jsonl into --out: give --out DIR too");
  if (flags.tracePackets !== undefined && flags.out === undefined)
    throw new UsageError("--trace-packets writes trace.jsonl into --out: give --out DIR too");
  // Given alone it would bound nothing: no trace is written.
  if (flags.traceMax !== undefined && flags.trace !== true && flags.tracePackets === undefined)
    throw new UsageError(
      "--trace-max bounds trace.jsonl, which --trace or --trace-packets writes: give one of them too",
    );
  if (flags.empty === true && flags.p4runtime === undefined)
    throw new UsageError("--empty starts the P4Runtime devices empty: give --p4runtime HOST:PORT too");
  const tlsFlag =
    flags.tlsCert !== undefined
      ? "--tls-cert"
      : flags.tlsKey !== undefined
        ? "--tls-key"
        : flags.tlsCa !== undefined
          ? "--tls-ca"
          : undefined;
  if (tlsFlag !== undefined && flags.p4runtime === undefined)
    throw new UsageError(`${tlsFlag} secures the P4Runtime server: give --p4runtime HOST:PORT too`);
}

/** --p4runtime: where the server listens, and the lines that say so once it does. */
function p4runtimeOf(
  flags: ServeFlags,
  tls: Tls | undefined,
  machines: readonly string[],
  io: Io,
): P4RuntimeSetup | undefined {
  const address = flags.p4runtime;
  if (address === undefined) return undefined;
  const empty = flags.empty === true;
  const listening = (port: number): void => {
    const warning = exposureWarning("--p4runtime", address, tls);
    if (warning !== undefined) io.stderr.write(`${warning}\n`);
    io.stderr.write(
      `P4Runtime server on ${servedAt(address, port, tls)}: ` +
        `devices ${machines.map((m, i) => `${i + 1} ${m}`).join(", ")}${empty ? " (empty)" : ""}\n`,
    );
  };
  return { address, empty, ...(tls !== undefined ? { tls } : {}), listening };
}

/** --trace or --trace-packets: the packets traced, up to --trace-max, and the line said when tracing stops there. */
function traceOf(flags: ServeFlags, io: Io): TraceSetup | undefined {
  if (flags.trace !== true && flags.tracePackets === undefined) return undefined;
  const traceMax = flags.traceMax ?? TRACE_MAX_BYTES / 1e6;
  return {
    ...(flags.tracePackets !== undefined ? { packets: flags.tracePackets } : {}),
    maxBytes: traceMax * 1e6,
    stopped: (bytes, lines) => {
      io.stderr.write(
        `strata: ${join(flags.out ?? "", TRACE_FILE)}: ${fileSize(bytes)} for ${count(lines)} packets: ` +
          `tracing stopped there, at --trace-max ${count(traceMax)} (MB); the emulation goes on\n`,
      );
      void io.stderr.flush();
    },
  };
}

const count = (n: number): string => n.toLocaleString("en-US");

/** The counts at the end, for a person. */
function report(
  s: Summary,
  o: {
    readonly out: string | undefined;
    readonly traced: boolean;
    readonly p4stats: ServerStats | undefined;
    readonly analysis: AnalysisResult | undefined;
  },
): string {
  const { injected, delivered, dropped, exited } = s.packets;
  const lines = [`served ${count(injected)} packets through ${s.spec} in ${s.elapsedSeconds.toFixed(1)} s`];
  lines.push(`  delivered ${count(delivered).padStart(8)}`);
  const drops = Object.entries(s.drops).map(([k, v]) => `${k} ${count(v ?? 0)}`);
  lines.push(`  dropped   ${count(dropped).padStart(8)}${drops.length > 0 ? `   ${drops.join(", ")}` : ""}`);
  lines.push(`  left      ${count(exited).padStart(8)}   on external links`);
  for (const p of s.ports ?? []) lines.push(`  ${portLine(p)}`);
  if (o.p4stats !== undefined) lines.push(`  P4Runtime ${describeStats(o.p4stats)}`);
  if (o.analysis !== undefined) lines.push(`  ${analysisLine(o.analysis)}`);
  if (o.out !== undefined) lines.push(outputsLine(s, o.out, o.traced));
  return `${lines.join("\n")}\n`;
}

/** The analysis at the end: its result for the tables as they were, or how far it got. */
function analysisLine(a: AnalysisResult): string {
  if (a.finished && a.line !== undefined) return a.line;
  if (a.line === undefined) return "analysis: unfinished: serve stopped before its first result";
  return (
    "analysis: unfinished: serve stopped while the last table write was analysed; the result before it: " +
    a.line.replace(/^analysis: /, "")
  );
}
