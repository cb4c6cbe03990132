// A replay (`strata run`): a description, captures injected at endpoints, and an
// output directory — a front end of the engine (src/engine/engine.ts), which
// owns the data plane and writes the recordings. This file reads the captures
// into batches and hands them to it (or to worker threads, ./workers.ts).
// prepare() loads, compiles and installs once; run() may be called again on the
// same tables (its counters start from zero each time). With --updates
// (./updates.ts), batches are cut at update times and the tables change between
// the parts; prepare() has already tried every update.

import { compile } from "../control/compile.js";
import type { CompiledSpec } from "../control/compiled.js";
import { resolveEndpoint } from "../control/endpoints.js";
import type { InputError } from "../errors.js";
import { loadSpec } from "../description/load.js";
import { Engine } from "../engine/engine.js";
import { Outputs } from "../engine/outputs.js";
import { type AppliedUpdate, type Counters, type Summary, summarize } from "../engine/summary.js";
import type { TraceFile } from "../engine/trace-file.js";
import { checkLimits, DEFAULT_RUNNER, type PacketRanges } from "../wasm/runner.js";
import { type Inputs, openInputs } from "./inputs.js";
import { TUNING_KNOBS, tunedBytes } from "../tuning.js";
import { replayBlocks } from "./blocks.js";
import { loadUpdates, PreparedUpdates, prepareUpdates, UpdateSchedule } from "./updates.js";
import { type AnalyzeOptions, ReplayAnalysis } from "./analysis.js";
import { CHUNK_PACKETS } from "./chunk-runner.js";
import { replayWorkers, WorkerPool } from "./workers.js";
import { WORKERS_MAX } from "./workers-max.js";

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
  /** `--analyze`: the properties of the description and after each update, in a thread of its own (./analysis.ts). */
  readonly analyze?: AnalyzeOptions;
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
  /** Input packets each data plane ran with --workers N > 1: the main thread's, then each worker thread's; else empty.
   * */
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
  readonly #engine: Engine;
  /** Worker threads, started by the first run() that uses them and kept until close(). */
  #pool: WorkerPool | undefined;
  readonly #updates: PreparedUpdates;
  #ran = false;
  #analysis: ReplayAnalysis | undefined;

  private constructor(options: ReplayOptions, compiled: CompiledSpec, updates: PreparedUpdates) {
    this.#options = options;
    this.#compiled = compiled;
    this.#engine = Engine.open({
      compiled,
      endpoints: options.inputs.map((i) => i.endpoint),
      ...(options.hopLimit !== undefined ? { hopLimit: options.hopLimit } : {}),
      ...(options.copyLimit !== undefined ? { copyLimit: options.copyLimit } : {}),
    });
    this.#updates = updates;
  }

  /**
   * Everything before the first packet: the description, its tables, the endpoints. `compiled`
   * replaces the description's own tables (e.g. rows read back from a P4 export, src/p4/import.ts).
   */
  static prepare(options: ReplayOptions, compiled: CompiledSpec = compile(loadSpec(options.spec))): Replay {
    // The threads' knobs read before anything is made (they are read again where they are used).
    for (const knob of TUNING_KNOBS) tunedBytes(knob, 0);
    checkLimits(options);
    checkWorkers(options.workers);
    const endpoints = options.inputs.map((i) => resolveEndpoint(compiled, i.endpoint).text);
    const updates =
      options.updates === undefined
        ? new PreparedUpdates([], new Map())
        : prepareUpdates(loadUpdates(options.updates), compiled, endpoints);
    const replay = new Replay(options, compiled, updates);
    if (options.analyze !== undefined)
      replay.#analysis = new ReplayAnalysis(
        {
          compiled,
          endpoints,
          hopLimit: options.hopLimit ?? DEFAULT_RUNNER.hopLimit,
          ...(options.updates === undefined ? {} : { updates: options.updates }),
        },
        options.analyze,
      );
    return replay;
  }

  /** Stops the worker threads, if any ran (a later run() starts them again), and the analysis's. */
  close(): void {
    this.#pool?.close();
    this.#pool = undefined;
    void this.#analysis?.close();
  }

  run(): ReplayResult {
    if (this.#ran && this.#updates.length > 0)
      throw new Error("a replay with updates runs once: its tables have changed");
    this.#ran = true;
    const options = this.#options;
    const inputs = openInputs(
      this.#engine.endpoints,
      options.inputs.map((i) => i.file),
      DEFAULT_RUNNER.batchPackets,
    );
    try {
      const inputFiles = [
        options.spec,
        ...options.inputs.map((i) => i.file),
        ...(options.updates === undefined ? [] : [options.updates]),
        ...this.#updates.files,
      ];
      const out = Outputs.open(options.out, this.#compiled, {
        command: "run",
        inputs: inputFiles,
        force: options.force === true,
        trace: traces(options),
      });
      try {
        return this.#replay(out, inputs);
      } finally {
        out.release();
      }
    } finally {
      inputs.close();
    }
  }

  /** Runs the inputs into `out`, claimed, and writes the summary. */
  #replay(out: Outputs, inputs: Inputs): ReplayResult {
    const options = this.#options;
    const engine = this.#engine;
    // Updates cut batches at their times on one data plane, and an input read once has one reader: then the replay
    // runs on this thread.
    const { workers, note } = replayWorkers(options.workers, inputs, this.#updates.length > 0);
    if (note !== undefined) options.warn?.(note);
    if (workers > 1) {
      const started = process.hrtime.bigint();
      let ran: { counters: Counters; packets: number[] };
      try {
        ran = this.#workers(workers).replay(inputs, out.recordings, out.trace, options.progress);
      } catch (err) {
        this.close(); // a pool that failed part-way is not used again
        throw err;
      } finally {
        out.close();
      }
      return this.#finish(out, ran.counters, inputs, started, { workers: ran.packets });
    }
    engine.connect({
      recordings: out.recordings,
      ...(out.trace !== undefined
        ? {
            trace: {
              lines: out.trace,
              ...(options.tracePackets !== undefined ? { packets: options.tracePackets } : {}),
            },
          }
        : {}),
    });
    const schedule = options.updates === undefined ? undefined : new UpdateSchedule(this.#updates, engine);
    let first = 0;
    const started = process.hrtime.bigint();
    try {
      // One regular pcap file, taken as it is, and nothing that reads batches: read in blocks, parsed in wasm.
      const direct = schedule === undefined && out.trace === undefined ? inputs.blocks() : undefined;
      if (direct !== undefined)
        first = replayBlocks(engine, direct, (packets, bytes) => options.progress?.(bytes, inputs.totalBytes, packets));
      // A damaged input ends at its damage; the others are replayed to their end.
      for (const batch of inputs.batches()) {
        for (const part of schedule === undefined ? [batch] : schedule.cut(batch, first)) {
          engine.run(part, first);
          first += part.count;
        }
        options.progress?.(inputs.bytesRead, inputs.totalBytes, first);
      }
    } finally {
      try {
        engine.disconnect();
      } finally {
        out.close();
      }
    }
    return this.#finish(
      out,
      engine.counters(),
      inputs,
      started,
      schedule !== undefined ? { applied: schedule.applied } : {},
    );
  }

  /** The summary of a run that started at `started`, written; the marker lists what the run wrote. */
  #finish(
    out: Outputs,
    counters: Counters,
    inputs: Inputs,
    started: bigint,
    more: { workers?: number[]; applied?: AppliedUpdate[] },
  ): ReplayResult {
    const { workers = [], applied } = more;
    const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
    // Named after the description the replay started with, whatever updates installed since.
    const analysis = this.#analysis?.result();
    if (analysis?.ok === false) this.#options.warn?.(`analysis: ${analysis.problem} (the replay is done without it)`);
    const analysed = analysis?.ok === true ? analysis.result : undefined;
    const summary: Summary = {
      ...summarize(counters, this.#engine.installed, inputs.stats, elapsed),
      spec: this.#compiled.spec.file,
      ...(applied === undefined
        ? {}
        : {
            updates: applied.map((u, i) => {
              const after = analysed?.updates[i];
              return u.packet === null || after === undefined ? u : { ...u, analysis: after };
            }),
          }),
      ...(analysed === undefined ? {} : { analysis: analysed.start }),
    };
    const written = out.finish(summary);
    const trace: TraceFile | undefined = out.trace;
    return {
      summary: written,
      compiled: this.#compiled,
      errors: inputs.errors,
      workers,
      ...(trace !== undefined ? { trace: { bytes: trace.bytes, packets: trace.lines } } : {}),
    };
  }

  #workers(size: number): WorkerPool {
    if (this.#pool !== undefined && this.#pool.size !== size) this.close();
    this.#pool ??= new WorkerPool(
      size,
      this.#compiled,
      this.#engine.endpoints,
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
