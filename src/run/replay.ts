// A replay: a description, captures injected at endpoints, and an output
// directory. Everything per packet happens in the data plane — it even writes
// the capture files' records — so this file only moves batches in and buffers
// out. prepare() loads, compiles and installs once; run() may be called again
// on the same tables (its counters start from zero each time). With --updates
// (./updates.ts), batches are cut at update times and the tables change between
// the parts; prepare() has already tried every update.

import { compile } from "../control/compile.js";
import type { CompiledSpec } from "../control/compiled.js";
import { type ResolvedEndpoint, resolveEndpoint } from "../control/endpoints.js";
import type { Installed } from "../control/install.js";
import { Reconciler } from "../control/reconcile.js";
import type { InputError } from "../errors.js";
import { MAX_CAP_LEN_DEFAULT } from "../pcap/index.js";
import { loadSpec } from "../description/load.js";
import { DataPlane } from "../wasm/module.js";
import { checkLimits, DEFAULT_RUNNER, type PacketRanges, Runner } from "../wasm/runner.js";
import { type Inputs, openInputs } from "./inputs.js";
import type { OutDir } from "../out-dir.js";
import { CaptureOutputs, claimReplayOut, SUMMARY_FILE } from "./outputs.js";
import { type Counters, readCounters, type Summary, summarize } from "./summary.js";
import { TraceWriter } from "./trace.js";
import { TraceFile } from "./trace-file.js";
import { type AppliedUpdate, loadUpdates, PreparedUpdates, prepareUpdates, UpdateSchedule } from "./updates.js";
import { CHUNK_PACKETS } from "./chunk-runner.js";
import { replayWorkers, WorkerPool, WORKERS_MAX } from "./workers.js";

/** Throws a RangeError unless `workers` is a whole number from 1 to WORKERS_MAX (or not given). */
export function checkWorkers(workers: number | undefined): void {
  if (workers !== undefined && !(Number.isInteger(workers) && workers >= 1 && workers <= WORKERS_MAX)) {
    throw new RangeError(`workers ${workers} is not a whole number from 1 to ${WORKERS_MAX}`);
  }
}

export interface ReplayOptions {
  readonly spec: string;
  /** `--in ENDPOINT=FILE`, in the order given. */
  readonly inputs: readonly { readonly endpoint: string; readonly file: string }[];
  readonly out: string;
  /** Write into a non-empty --out directory strata did not write (never replacing its files). */
  readonly force?: boolean;
  readonly trace?: boolean;
  /** `--trace-packets`: trace only these packets (and trace, even without `trace`). */
  readonly tracePackets?: PacketRanges;
  readonly hopLimit?: number;
  readonly copyLimit?: number;
  /** `--updates FILE`: timed changes during the replay (docs/updates.md). */
  readonly updates?: string;
  /** Called after each batch with bytes read so far and in all. */
  readonly progress?: (done: number, total: number, packets: number) => void;
  /** Told what the replay does otherwise than asked (one line, e.g. one thread instead of --workers N). */
  readonly warn?: (line: string) => void;
  /**
   * Data planes to run the packets on (src/run/workers.ts): this thread's and
   * workers − 1 worker threads; 1 runs them all on this thread. Default: one
   * per core, one per 64 MiB of captures at most (defaultWorkers()).
   */
  readonly workers?: number;
  /** Packets per chunk a data plane runs whole with workers > 1 (default CHUNK_PACKETS; tests ask for small ones). */
  readonly chunkPackets?: number;
}

export interface ReplayResult {
  readonly summary: Summary;
  readonly compiled: CompiledSpec;
  /** Bad input that ended inputs early (each after its good packets), in the order the inputs were given. */
  readonly errors: readonly InputError[];
  /** Input packets each data plane ran with --workers N > 1: the main thread's, then each worker thread's; else empty. */
  readonly workers: readonly number[];
  /** With a trace: the bytes of trace.jsonl, and its lines (the packets traced). */
  readonly trace?: { readonly bytes: number; readonly packets: number };
}

/** Whether a replay writes a trace: --trace, or --trace-packets. */
function traces(options: ReplayOptions): boolean {
  return options.trace === true || options.tracePackets !== undefined;
}

/** Loads, compiles and installs a description, and runs captures through it. */
export function replay(options: ReplayOptions): ReplayResult {
  const prepared = Replay.prepare(options);
  try {
    return prepared.run();
  } finally {
    prepared.close();
  }
}

export class Replay {
  readonly #options: ReplayOptions;
  readonly #compiled: CompiledSpec;
  readonly #endpoints: readonly ResolvedEndpoint[];
  readonly #dp: DataPlane;
  /** Worker threads, started by the first run() that uses them and kept until close(). */
  #pool: WorkerPool | undefined;
  readonly #reconciler: Reconciler;
  readonly #updates: PreparedUpdates;
  #ran = false;

  private constructor(options: ReplayOptions, compiled: CompiledSpec, endpoints: readonly ResolvedEndpoint[], updates: PreparedUpdates) {
    this.#options = options;
    this.#compiled = compiled;
    this.#endpoints = endpoints;
    this.#dp = DataPlane.load();
    this.#reconciler = Reconciler.install(this.#dp, compiled, endpoints.map((e) => e.text));
    this.#updates = updates;
  }

  get #installed(): Installed {
    return this.#reconciler.current();
  }

  /**
   * Everything before the first packet: the description, its tables, the endpoints. `compiled`
   * replaces the description's own tables (e.g. rows read back from a P4 export, src/p4/import.ts).
   */
  static prepare(options: ReplayOptions, compiled: CompiledSpec = compile(loadSpec(options.spec))): Replay {
    checkLimits(options);
    checkWorkers(options.workers);
    const endpoints = options.inputs.map((i) => resolveEndpoint(compiled, i.endpoint));
    const updates = options.updates === undefined ? new PreparedUpdates([], new Map()) : prepareUpdates(loadUpdates(options.updates), compiled, endpoints.map((e) => e.text));
    return new Replay(options, compiled, endpoints, updates);
  }

  /** Stops the worker threads, if any ran (a later run() starts them again). */
  close(): void {
    this.#pool?.close();
    this.#pool = undefined;
  }

  run(): ReplayResult {
    if (this.#ran && this.#updates.length > 0) throw new Error("a replay with updates runs once: its tables have changed");
    this.#ran = true;
    const options = this.#options;
    const compiled = this.#compiled;
    const dp = this.#dp;
    const tracing = traces(options);
    const inputs = openInputs(
      this.#endpoints,
      options.inputs.map((i) => i.file),
      DEFAULT_RUNNER.batchPackets,
    );
    try {
      dp.exports.countersReset();
      const inputFiles = [options.spec, ...options.inputs.map((i) => i.file), ...(options.updates === undefined ? [] : [options.updates]), ...this.#updates.files];
      const out = claimReplayOut(options.out, compiled, { command: "run", inputs: inputFiles, force: options.force === true, trace: tracing });
      const outputs = new CaptureOutputs(options.out, compiled, dp);
      // Updates cut batches at their times on one data plane, and an input read once has one reader: then the replay runs on this thread.
      const { workers, note } = replayWorkers(options.workers, inputs, this.#updates.length > 0);
      if (note !== undefined) options.warn?.(note);
      if (workers > 1) {
        const started = process.hrtime.bigint();
        let ran: { counters: Counters; packets: number[] };
        const file = tracing ? new TraceFile(options.out) : undefined;
        try {
          ran = this.#workers(workers).replay(inputs, outputs, file, options.progress);
        } catch (err) {
          this.close(); // a pool that failed part-way is not used again
          throw err;
        } finally {
          outputs.close();
          file?.close();
        }
        return this.#finish(out, ran.counters, inputs, started, { workers: ran.packets, ...(file !== undefined ? { trace: file } : {}) });
      }
      // Buffers are sized by the packets read, never by a capture's snaplen (a header field
      // readers ignore): they start small and grow to the longest packet a capture of any
      // link type a network takes may hold (libpcap's limit). A longer one is dropped as too-long.
      const runner = new Runner(
        dp,
        {
          trace: tracing,
          ...(options.tracePackets !== undefined ? { tracePackets: options.tracePackets } : {}),
          maxFanout: compiled.maxFanout,
          hopLimit: options.hopLimit ?? DEFAULT_RUNNER.hopLimit,
          copyLimit: options.copyLimit ?? DEFAULT_RUNNER.copyLimit,
          slotLenMax: MAX_CAP_LEN_DEFAULT + DEFAULT_RUNNER.headroom,
        },
        outputs,
      );
      const file = tracing ? new TraceFile(options.out) : undefined;
      const trace = file === undefined ? undefined : new TraceWriter(file, compiled, this.#installed.entries);
      // Packets go to the capture buffers; the ring carries only trace events.
      const sink = trace === undefined ? null : { packet: () => {}, event: trace.event.bind(trace) };
      const names = this.#endpoints.map((e) => e.text);
      const schedule = options.updates === undefined ? undefined : new UpdateSchedule(this.#updates, this.#reconciler, (now) => trace?.retable(now.compiled, now.entries));
      let first = 0;
      const started = process.hrtime.bigint();
      try {
        // A damaged input ends at its damage; the others are replayed to their end.
        for (const batch of inputs.batches()) {
          for (const part of schedule === undefined ? [batch] : schedule.cut(batch, first)) {
            trace?.startBatch(first, part, names);
            runner.run(part, first, sink);
            first += part.count;
          }
          options.progress?.(inputs.bytesRead, inputs.totalBytes, first);
        }
      } finally {
        runner.flushCaptures();
        outputs.close();
        trace?.close();
      }
      return this.#finish(out, readCounters(dp, this.#installed), inputs, started, { ...(schedule !== undefined ? { applied: schedule.applied } : {}), ...(file !== undefined ? { trace: file } : {}) });
    } finally {
      inputs.close();
    }
  }

  /** The summary of a run that started at `started`, written; the marker lists what the run wrote. */
  #finish(out: OutDir, counters: Counters, inputs: Inputs, started: bigint, more: { workers?: number[]; applied?: AppliedUpdate[]; trace?: TraceFile }): ReplayResult {
    const { workers = [], applied, trace } = more;
    const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
    // Named after the description the replay started with, whatever updates installed since.
    const summary: Summary = { ...summarize(counters, this.#installed, inputs.stats, elapsed), spec: this.#compiled.spec.file, ...(applied === undefined ? {} : { updates: applied }) };
    out.write(SUMMARY_FILE, `${JSON.stringify(summary, null, 2)}\n`);
    out.seal();
    return { summary, compiled: this.#compiled, errors: inputs.errors, workers, ...(trace !== undefined ? { trace: { bytes: trace.bytes, packets: trace.lines } } : {}) };
  }

  #workers(size: number): WorkerPool {
    if (this.#pool !== undefined && this.#pool.size !== size) this.close();
    this.#pool ??= new WorkerPool(
      size,
      this.#compiled,
      this.#endpoints,
      this.#options.inputs.map((i) => i.file),
      {
        trace: traces(this.#options),
        ...(this.#options.tracePackets !== undefined ? { tracePackets: this.#options.tracePackets } : {}),
        hopLimit: this.#options.hopLimit ?? DEFAULT_RUNNER.hopLimit,
        copyLimit: this.#options.copyLimit ?? DEFAULT_RUNNER.copyLimit,
        chunkPackets: this.#options.chunkPackets ?? CHUNK_PACKETS,
      },
    );
    return this.#pool;
  }
}
