// `strata serve`'s emulation from start to stop, once the command line (src/cli/serve.ts) has checked the flags and
// the description and made a ServeSetup: the live ports, the engine and --out opened, a P4Runtime server on it, the
// description watched and control commands read, until a signal, an abort or `stop`; then the last packets run, the
// ports close, --out is written, and the counts are handed back for the command line to print.

import type { Readable } from "node:stream";
import type { CompiledSpec } from "../control/compiled.js";
import { UsageError } from "../errors.js";
import { Engine } from "../engine/engine.js";
import { Outputs } from "../engine/outputs.js";
import type { ExternalLink } from "../engine/sinks.js";
import type { Summary } from "../engine/summary.js";
import { type Line, LineSplitter } from "../lines.js";
import { EngineEmulation, P4RUNTIME_ENGINE, P4RUNTIME_OUTPUTS } from "../p4runtime/emulation.js";
import { P4RuntimeServer, type ServerStats } from "../p4runtime/server.js";
import type { Tls } from "../p4runtime/tls.js";
import type { PacketRanges } from "../wasm/runner.js";
import { type AnalysisResult, ServeAnalysis } from "./analysis.js";
import { COMMAND_LINE_MAX, type CommandResult, runCommand } from "./control.js";
import { type LivePort, LivePorts, type PortArg } from "./ports.js";
import type { PortBackend } from "./port-backend.js";
import { DescriptionReloader } from "./watch.js";
import type { Reloader } from "../control/reload.js";

/** What serve runs: its flags checked, its description compiled, its ports' external links found. */
export interface ServeSetup {
  /** The description's file (a reload reads it again). */
  readonly spec: string;
  readonly compiled: CompiledSpec;
  /** What loaded `compiled` (a reload reads the file through it). */
  readonly loader?: Reloader;
  /** The --port bindings, each with the external link it names. */
  readonly ports: readonly { readonly arg: PortArg; readonly external: ExternalLink }[];
  /** What opens the interfaces (--port-backend): there when there are ports. */
  readonly backend?: PortBackend;
  readonly hopLimit: number;
  readonly copyLimit: number;
  readonly out?: { readonly dir: string; readonly force: boolean; readonly trace?: TraceSetup };
  readonly p4runtime?: P4RuntimeSetup;
  readonly watch: boolean;
  readonly analyze: boolean;
  /** With --commands: where control commands come from, one a line. */
  readonly commands?: Readable;
  /** Stops the emulation when aborted, as Ctrl-C does. */
  readonly abort?: AbortSignal;
  /** The process's signals, when serve listens for them (and for SIGHUP, which reloads). */
  readonly signals?: StopSignalsLike;
}

/** --trace or --trace-packets: trace.jsonl, up to --trace-max. */
export interface TraceSetup {
  /** Only these packets are traced; all when not given. */
  readonly packets?: PacketRanges;
  readonly maxBytes: number;
  /** Said when trace.jsonl reaches maxBytes and tracing stops (the emulation goes on). */
  readonly stopped: (bytes: number, lines: number) => void;
}

/** --p4runtime: a P4Runtime server on the emulation. */
export interface P4RuntimeSetup {
  readonly address: string;
  /** The devices start with no entries (--empty). */
  readonly empty: boolean;
  readonly tls?: Tls;
  /** Says where the server listens, once it does (the command line's words, src/cli/p4runtime.ts). */
  readonly listening: (port: number) => void;
}

/** src/cli/stop-signals.ts's StopSignals: SIGINT and SIGTERM, the first stopping serve cleanly. */
export interface StopSignalsLike {
  readonly stopped: Promise<void>;
  stop(): void;
  dispose(): void;
}

/** Where serve writes its lines: the command line's stderr (src/cli/io.ts's Sink). */
export interface LineSink {
  write(text: string): void;
  flush(): Promise<void>;
}

/** How serve ended: the summary, and why --out could not be written (then the counts are still reported); the ports,
 * the P4Runtime server's counts and the analysis as they were when it stopped. */
export interface Served extends Ended {
  readonly ports: readonly LivePort[];
  readonly p4stats?: ServerStats;
  readonly analysed?: AnalysisResult;
}

interface Ended {
  readonly summary: Summary;
  readonly failed?: unknown;
}

/** What runs while serve does. */
interface Running {
  readonly emulation: Engine;
  readonly outputs: Outputs | undefined;
  readonly live: LivePorts | undefined;
  readonly analysis: ServeAnalysis | undefined;
  readonly server: P4RuntimeServer | undefined;
  readonly reloader: DescriptionReloader;
}

/**
 * Runs the emulation until it is stopped. An interface that cannot be opened, or a P4Runtime address that cannot be
 * served, throws (exit 2) with nothing left open; setup.signals are given back (disposed) on every failure.
 */
export async function serveUntilStopped(setup: ServeSetup, stderr: LineSink): Promise<Served> {
  const say = (line: string): void => {
    stderr.write(`${line}\n`);
    void stderr.flush();
  };
  const { emulation, outputs, live } = await openEmulation(setup, say);
  // In a thread of its own: its first result is said when it comes, and packets never wait for it.
  const analysis = setup.analyze ? new ServeAnalysis(emulation, say, setup.hopLimit) : undefined;
  emulation.reportPorts(() => live?.counts() ?? []);
  live?.attach(
    emulation,
    setup.ports.map((p) => emulation.external(p.external.name)),
  );
  let server: P4RuntimeServer | undefined;
  if (setup.p4runtime !== undefined) {
    try {
      server = await startP4Runtime(setup.p4runtime, emulation, say);
    } catch (err) {
      setup.signals?.dispose();
      end(emulation, outputs);
      await analysis?.close();
      await live?.close();
      throw err;
    }
  }
  const reloader = new DescriptionReloader(
    emulation,
    setup.spec,
    (r) => {
      for (const line of r.lines) stderr.write(r.ok ? `${line}\n` : `strata: ${line}\n`);
      void stderr.flush();
    },
    setup.loader,
  );
  if (setup.watch) reloader.watch();
  const ended = await untilStopped({ emulation, outputs, live, analysis, server, reloader }, setup, stderr).catch(
    (err: unknown) => {
      outputs?.release();
      setup.signals?.dispose();
      throw err;
    },
  );
  return { ...ended, ports: live?.ports ?? [], ...(server !== undefined ? { p4stats: server.stats } : {}) };
}

/** Opens the ports' interfaces, the engine and --out, and connects them; on a failure closes what it opened. */
async function openEmulation(
  setup: ServeSetup,
  say: (line: string) => void,
): Promise<{ emulation: Engine; outputs: Outputs | undefined; live: LivePorts | undefined }> {
  let live: LivePorts | undefined;
  let out: Outputs | undefined;
  try {
    if (setup.backend !== undefined) {
      const specs = setup.ports.map(({ arg, external }) => ({
        arg,
        endpoint: external.name,
        linkType: external.network.spec.design.linkType,
        network: external.network.name,
      }));
      live = await LivePorts.open(setup.backend, specs, say);
    }
    // Packets enter at the ports' external links that something arrives on.
    const entering = setup.ports.filter((p) => p.external.inbound !== undefined);
    const emulation = Engine.open({
      compiled: setup.compiled,
      endpoints: entering.map((p) => p.external.name),
      sources: entering.map((p) => p.arg.iface),
      hopLimit: setup.hopLimit,
      copyLimit: setup.copyLimit,
      // The port processes hand frames over in chunks: a batch is what one turn of the event loop brought.
      flushMs: 0,
      // With --p4runtime --empty the tables start empty: a controller installs the rows.
      ...(setup.p4runtime?.empty === true ? P4RUNTIME_ENGINE : {}),
    });
    out =
      setup.out === undefined
        ? undefined
        : Outputs.open(setup.out.dir, setup.compiled, {
            command: "serve",
            inputs: [setup.spec],
            force: setup.out.force,
            trace: setup.out.trace !== undefined,
          });
    connect(emulation, out, setup);
    return { emulation, outputs: out, live };
  } catch (err) {
    out?.release();
    setup.signals?.dispose();
    await live?.close();
    throw err;
  }
}

/** Connects the engine's outputs: --out's recordings and trace, the ports (exits), and with --p4runtime its
 * deliveries to the server, as PacketIn. */
function connect(emulation: Engine, out: Outputs | undefined, setup: ServeSetup): void {
  const trace = out?.trace;
  const traced = setup.out?.trace;
  emulation.connect({
    ...(out !== undefined ? { recordings: out.recordings } : {}),
    exits: true,
    ...(setup.p4runtime !== undefined ? P4RUNTIME_OUTPUTS : {}),
    ...(trace !== undefined && traced !== undefined
      ? {
          trace: {
            lines: trace,
            ...(traced.packets !== undefined ? { packets: traced.packets } : {}),
            full: () => trace.bytes >= traced.maxBytes,
            onFull: () => traced.stopped(trace.bytes, trace.lines),
          },
        }
      : {}),
  });
}

/** Stops the emulation and writes --out: the summary, and why the outputs could not be written (then the counts are
 * still reported). */
function end(emulation: Engine, outputs: Outputs | undefined): Ended {
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
}

/** Starts the P4Runtime server on the emulation and has it said where; UsageError when it cannot serve there. */
async function startP4Runtime(
  p4: P4RuntimeSetup,
  emulation: Engine,
  say: (line: string) => void,
): Promise<P4RuntimeServer> {
  let server: P4RuntimeServer;
  try {
    server = await P4RuntimeServer.start(new EngineEmulation(emulation), {
      address: p4.address,
      empty: p4.empty,
      warn: say,
      ...(p4.tls !== undefined ? { tls: p4.tls } : {}),
    });
  } catch (err) {
    throw new UsageError(
      `--p4runtime ${p4.address}: cannot serve there (${err instanceof Error ? err.message : String(err)})`,
    );
  }
  p4.listening(server.port);
  return server;
}

/** Runs until a signal, an abort or `stop`; then the last packets run, the ports close and --out is written: the
 * summary, why the outputs could not be written, and where the analysis stood (it is not waited for). */
function untilStopped(r: Running, setup: ServeSetup, stderr: LineSink): Promise<Omit<Served, "ports" | "p4stats">> {
  return new Promise((resolve, reject) => {
    let stopping = false;
    const cleanups: (() => void)[] = [];
    const stop = (): void => {
      if (stopping) return;
      stopping = true;
      setup.signals?.stop();
      for (const c of cleanups) c();
      const analysed = r.analysis?.result();
      // Open P4Runtime streams have their grace period while the last packets run and the ports close.
      const closed = r.server?.close() ?? Promise.resolve();
      // The frames the emulation has queued run first, and what they send goes out before the ports
      // close; then the emulation stops, its summary holding the ports' final counts. A failed
      // final write (--out gone, full, read-only) ends it too: the counts as they are, then the reason.
      let flushed: unknown;
      try {
        r.emulation.flush();
      } catch (err) {
        flushed = err;
      }
      void Promise.all([r.live?.close(), closed, r.analysis?.close()]).then(
        () =>
          flushed === undefined
            ? resolve({ ...end(r.emulation, r.outputs), ...(analysed !== undefined ? { analysed } : {}) })
            : reject(flushed),
        reject,
      );
    };
    // Nothing else may hold the event loop open (no ports, no commands): this timer does until stop.
    const keepAlive = setInterval(() => {}, 1 << 30);
    cleanups.push(() => clearInterval(keepAlive));
    cleanups.push(() => r.reloader.close());
    if (setup.signals !== undefined) {
      void setup.signals.stopped.then(stop);
      const onHangUp = (): void => void r.reloader.reload();
      process.on("SIGHUP", onHangUp);
      cleanups.push(() => process.off("SIGHUP", onHangUp));
    }
    if (setup.abort !== undefined) {
      if (setup.abort.aborted) setImmediate(stop);
      else setup.abort.addEventListener("abort", stop, { once: true });
    }
    if (setup.commands !== undefined)
      cleanups.push(readCommands(setup.commands, r.emulation, stderr, stop, () => stopping));
    const bound = setup.ports.map((p) => `${p.external.name}=${p.arg.iface}`);
    const on = bound.length > 0 ? ` on ${bound.join(", ")} (${setup.backend?.name ?? ""} ports)` : " (no ports)";
    stderr.write(`serving ${setup.spec}${on}; Ctrl-C stops\n`);
    void stderr.flush();
  });
}

/**
 * Reads control commands from `input`, one a line, and answers each on stderr; returns what stops reading. One command
 * at a time, in order, each between batches. The input is paused while lines wait here, until they are answered and
 * the answers written: a reader of stderr that reads nothing stops the commands, and what waits is one chunk of input
 * (3 M counts to a stderr nobody read held 885 MB before, 104 MB now).
 */
function readCommands(
  input: Readable,
  emulation: Engine,
  stderr: LineSink,
  stop: () => void,
  stopping: () => boolean,
): () => void {
  const split = new LineSplitter(COMMAND_LINE_MAX);
  const waiting: Line[][] = [];
  let answering = false;
  const answer = async (): Promise<void> => {
    if (answering) return;
    answering = true;
    try {
      for (let lines = waiting.shift(); lines !== undefined; lines = waiting.shift()) {
        for (const line of lines) {
          if (stopping()) return;
          const r: CommandResult = line.ok
            ? await runCommand(emulation, line.text)
            : {
                ok: false,
                line: `command line ${line.number} is too long: over ${COMMAND_LINE_MAX} bytes, the limit (ignored)`,
              };
          if (r.line !== "") stderr.write(r.ok ? `${r.line}\n` : `strata: ${r.line}\n`);
          await stderr.flush();
          if (r.stop === true) stop();
        }
      }
    } finally {
      answering = false;
    }
    if (!stopping()) input.resume();
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
  return () => {
    input.off("data", onData);
    input.off("end", onEnd);
    input.pause();
    // A pause from inside a data handler leaves a pipe reading (up to its buffer's limit): stdin must not keep the
    // process running once serve has stopped.
    (input as Readable & { unref?: () => void }).unref?.();
  };
}
