// `strata serve SPEC [--port ENDPOINT=IFACE]... [--out DIR] [--trace] [--trace-packets RANGES] [--trace-max MB]
// [--json] [--commands]`:
// keep an emulation of a description running, its external links plugged into
// network interfaces, until Ctrl-C (or a `stop` command).

import { join } from "node:path";
import type { Readable } from "node:stream";
import { compile } from "../control/compile.js";
import { loadSpec } from "../description/load.js";
import { excerpt, UsageError } from "../errors.js";
import type { Summary } from "../engine/summary.js";
import { TRACE_FILE } from "../engine/trace-file.js";
import { fileSize } from "./format.js";
import { type Line, LineSplitter } from "../lines.js";
import { COMMAND_LINE_MAX, type CommandResult, runCommand } from "../serve/control.js";
import { portLine } from "../serve/port-counters.js";
import { CAP_INSTALL, checkPorts, LivePorts, loadCap, parsePort } from "../serve/ports.js";
import { type AnalysisResult, ServeAnalysis } from "../serve/analysis.js";
import { DescriptionReloader } from "../serve/watch.js";
import type { PacketRanges } from "../wasm/runner.js";
import { describeStats, P4RuntimeServer, type ServerStats } from "../p4runtime/server.js";
import { EngineEmulation, P4RUNTIME_ENGINE, P4RUNTIME_OUTPUTS } from "../p4runtime/emulation.js";
import { Engine } from "../engine/engine.js";
import { Outputs } from "../engine/outputs.js";
import { resolveExternal } from "../engine/sinks.js";
import { exposureWarning, servedAt, type TlsFlags, tlsOf } from "./p4runtime.js";
import type { Io } from "./io.js";
import { outputsLine } from "./run.js";
import { TRACE_MAX_BYTES } from "./options.js";
import { EXIT_OK } from "./exit-codes.js";
import { StopSignals } from "./stop-signals.js";

export interface ServeFlags extends TlsFlags {
  port: string[];
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
  const args = flags.port.map(parsePort);
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
  const p4address = flags.p4runtime;
  const tls = tlsOf(flags, (line) => io.stderr.write(`${line}\n`));
  const traceMax = flags.traceMax ?? TRACE_MAX_BYTES / 1e6;
  const tracing = flags.trace === true || flags.tracePackets !== undefined;
  const compiled = compile(loadSpec(spec));
  checkPorts(compiled, args);
  const loaded = args.length > 0 ? loadCap() : undefined;
  if (loaded !== undefined && loaded.cap === undefined)
    throw new UsageError(`--port needs the package cap, which is not installed or did not build: ${CAP_INSTALL}`);
  const externals = args.map((a) => resolveExternal(compiled, a.endpoint));
  // Before anything is opened or announced: a signal from then on stops the emulation cleanly (once it runs).
  const signals = hooks.signals === true ? new StopSignals() : undefined;
  let live: LivePorts | undefined;
  let em: Engine | undefined;
  let out: Outputs | undefined;
  const say = (line: string): void => {
    io.stderr.write(`${line}\n`);
    void io.stderr.flush();
  };
  try {
    if (loaded?.cap !== undefined) {
      const specs = args.map((arg, k) => ({
        arg,
        endpoint: externals[k]?.name ?? arg.endpoint,
        linkType: externals[k]?.network.spec.design.linkType ?? -1,
        network: externals[k]?.network.name ?? "",
      }));
      live = await LivePorts.open(loaded.cap, specs, say);
    }
    // Packets enter at the ports' external links that something arrives on.
    const entering = args.flatMap((a, k) =>
      externals[k]?.inbound !== undefined ? [{ endpoint: externals[k]?.name ?? "", source: a.iface }] : [],
    );
    em = Engine.open({
      compiled,
      endpoints: entering.map((e) => e.endpoint),
      sources: entering.map((e) => e.source),
      hopLimit: flags.hopLimit,
      copyLimit: flags.copyLimit,
      // The port processes hand frames over in chunks: a batch is what one turn of the event loop brought.
      flushMs: 0,
      // With --p4runtime --empty the tables start empty: a controller installs the rows.
      ...(p4address !== undefined && flags.empty === true ? P4RUNTIME_ENGINE : {}),
    });
    out =
      flags.out === undefined
        ? undefined
        : Outputs.open(flags.out, compiled, {
            command: "serve",
            inputs: [spec],
            force: flags.force === true,
            trace: tracing,
          });
    const trace = out?.trace;
    em.connect({
      ...(out !== undefined ? { recordings: out.recordings } : {}),
      exits: true,
      // With --p4runtime deliveries go to the server, as PacketIn.
      ...(p4address !== undefined ? P4RUNTIME_OUTPUTS : {}),
      ...(trace !== undefined
        ? {
            trace: {
              lines: trace,
              ...(flags.tracePackets !== undefined ? { packets: flags.tracePackets } : {}),
              full: () => trace.bytes >= traceMax * 1e6,
              onFull: () =>
                say(
                  `strata: ${join(flags.out ?? "", TRACE_FILE)}: ${fileSize(trace.bytes)} for ` +
                    `${count(trace.lines)} packets: tracing stopped there, ` +
                    `at --trace-max ${count(traceMax)} (MB); the emulation goes on`,
                ),
            },
          }
        : {}),
    });
  } catch (err) {
    out?.release();
    signals?.dispose();
    await live?.close();
    throw err;
  }
  const emulation = em;
  // In a thread of its own: its first result is said when it comes, and packets never wait for it.
  const analysis = flags.analyze === true ? new ServeAnalysis(emulation, say, flags.hopLimit) : undefined;
  const outputs = out;
  /** Stops the emulation and writes --out: the summary, and why the outputs could not be written (then the counts are
   * still reported). */
  const end = (): { summary: Summary; failed?: unknown } => {
    try {
      const summary = emulation.stop();
      return { summary: outputs?.finish(summary) ?? summary };
    } catch (err) {
      try {
        outputs?.close();
      } catch {
        // The first failure is the one reported.
      }
      return { summary: emulation.summary(), failed: err };
    } finally {
      outputs?.release();
    }
  };
  const ports = live?.ports ?? [];
  const livePorts = live;
  emulation.reportPorts(() => livePorts?.counts() ?? []);
  live?.attach(
    emulation,
    externals.map((e) => emulation.external(e.name)),
  );
  let p4server: P4RuntimeServer | undefined;
  if (p4address !== undefined) {
    try {
      p4server = await P4RuntimeServer.start(new EngineEmulation(emulation), {
        address: p4address,
        empty: flags.empty === true,
        warn: (line) => {
          io.stderr.write(`${line}\n`);
          void io.stderr.flush();
        },
        ...(tls !== undefined ? { tls } : {}),
      });
    } catch (err) {
      signals?.dispose();
      end();
      await analysis?.close();
      await live?.close();
      throw new UsageError(
        `--p4runtime ${p4address}: cannot serve there (${err instanceof Error ? err.message : String(err)})`,
      );
    }
    const warning = exposureWarning("--p4runtime", p4address, tls);
    if (warning !== undefined) io.stderr.write(`${warning}\n`);
    io.stderr.write(
      `P4Runtime server on ${servedAt(p4address, p4server.port, tls)}: ` +
        `devices ${compiled.machines.map((m, i) => `${i + 1} ${m}`).join(", ")}` +
        `${flags.empty === true ? " (empty)" : ""}\n`,
    );
  }
  const server = p4server;
  const reloader = new DescriptionReloader(emulation, spec, (r) => {
    for (const line of r.lines) io.stderr.write(r.ok ? `${line}\n` : `strata: ${line}\n`);
    void io.stderr.flush();
  });
  if (flags.watch === true) reloader.watch();

  // Where the analysis stood when serve stopped (it is not waited for).
  let analysed: AnalysisResult | undefined;
  // The summary, and why the outputs could not be written (then the counts are still reported).
  const ending = new Promise<{ summary: Summary; failed?: unknown }>((resolve, reject) => {
    let stopping = false;
    const cleanups: (() => void)[] = [];
    const stop = (): void => {
      if (stopping) return;
      stopping = true;
      signals?.stop();
      for (const c of cleanups) c();
      analysed = analysis?.result();
      // Open P4Runtime streams have their grace period while the last packets run and the ports close.
      const closed = server?.close() ?? Promise.resolve();
      // The frames the emulation has queued run first, and what they send goes out before the ports
      // close; then the emulation stops, its summary holding the ports' final counts. A failed
      // final write (--out gone, full, read-only) ends it too: the counts as they are, then the reason.
      let flushed: unknown;
      try {
        emulation.flush();
      } catch (err) {
        flushed = err;
      }
      void Promise.all([live?.close(), closed, analysis?.close()]).then(
        () => (flushed === undefined ? resolve(end()) : reject(flushed)),
        reject,
      );
    };
    // Nothing else may hold the event loop open (no ports, no commands): this timer does until stop.
    const keepAlive = setInterval(() => {}, 1 << 30);
    cleanups.push(() => clearInterval(keepAlive));
    cleanups.push(() => reloader.close());
    if (signals !== undefined) {
      void signals.stopped.then(stop);
      const onHangUp = (): void => void reloader.reload();
      process.on("SIGHUP", onHangUp);
      cleanups.push(() => process.off("SIGHUP", onHangUp));
    }
    if (hooks.signal !== undefined) {
      if (hooks.signal.aborted) setImmediate(stop);
      else hooks.signal.addEventListener("abort", stop, { once: true });
    }
    if (flags.commands === true) {
      const input = hooks.commands ?? process.stdin;
      const split = new LineSplitter(COMMAND_LINE_MAX);
      // One command at a time, in order, each between batches. The input is paused while lines wait here, until they
      // are answered and the answers written: a reader of stderr that reads nothing stops the commands, and what waits
      // is one chunk of input (3 M counts to a stderr nobody read held 885 MB before, 104 MB now).
      const waiting: Line[][] = [];
      let answering = false;
      const answer = async (): Promise<void> => {
        if (answering) return;
        answering = true;
        try {
          for (let lines = waiting.shift(); lines !== undefined; lines = waiting.shift()) {
            for (const line of lines) {
              if (stopping) return;
              const r: CommandResult = line.ok
                ? await runCommand(emulation, line.text)
                : {
                    ok: false,
                    line:
                      `command line ${line.number} is too long: over ${COMMAND_LINE_MAX} bytes, ` +
                      "the limit (ignored)",
                  };
              if (r.line !== "") io.stderr.write(r.ok ? `${r.line}\n` : `strata: ${r.line}\n`);
              await io.stderr.flush();
              if (r.stop === true) stop();
            }
          }
        } finally {
          answering = false;
        }
        if (!stopping) input.resume();
      };
      const take = (lines: Line[]): void => {
        if (lines.length === 0) return;
        waiting.push(lines);
        input.pause();
        void answer();
      };
      const onData = (chunk: Uint8Array | string): void => take(split.push(chunk));
      const onEnd = (): void => take(split.end());
      input.on("data", onData);
      input.on("end", onEnd);
      cleanups.push(() => {
        input.off("data", onData);
        input.off("end", onEnd);
        input.pause();
        // A pause from inside a data handler leaves a pipe reading (up to its buffer's limit): stdin must not keep the
        // process running once serve has stopped.
        (input as Readable & { unref?: () => void }).unref?.();
      });
    }
    const bound = args.map((a) => `${externals[args.indexOf(a)]?.name ?? a.endpoint}=${a.iface}`);
    io.stderr.write(`serving ${spec}${bound.length > 0 ? ` on ${bound.join(", ")}` : " (no ports)"}; Ctrl-C stops\n`);
    void io.stderr.flush();
  });
  const { summary, failed } = await ending.catch((err: unknown) => {
    outputs?.release();
    signals?.dispose();
    throw err;
  });

  const p4stats = server === undefined ? {} : { p4runtime: { ...server.stats } };
  const analysisJson =
    analysed === undefined ? {} : { analysis: { finished: analysed.finished, line: analysed.line ?? null } };
  io.stdout.write(
    flags.json === true
      ? `${JSON.stringify({ ...summary, ...p4stats, ...analysisJson }, null, 2)}\n`
      : report(summary, {
          out: failed === undefined ? flags.out : undefined,
          traced: tracing,
          p4stats: server?.stats,
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
