// `strata run --analyze`: the analysis of docs/analysis.md over a replay's
// tables, kept current across its updates (docs/updates.md) as `serve
// --analyze` keeps it across table writes: the starting description analysed
// once, then each update applied to the relations incrementally (src/analysis/
// live.ts: only the header classes the changed rows, links and members touch
// are walked again), and after each the properties that hold, what changed and
// what it cost.
//
// Off the packet path: a worker thread of its own (./analysis-worker.ts) does
// it all while the replay runs. The analysis needs no packet: the thread
// applies the updates in order to a scratch engine of its own (prepareUpdates,
// as the replay's check before the first packet does) and analyses the tables
// each leaves. The main thread takes the answer when the replay is done
// (result(): a wait in Atomics.wait, as the replay's workers are waited on),
// and nothing of it runs without --analyze.

import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from "node:worker_threads";
import { ANALYZE_LIMITS, Budget } from "../analysis/budget.js";
import { LiveAnalysis, type LiveUpdate } from "../analysis/live.js";
import type { PropertyResult } from "../analysis/properties.js";
import { stopReason } from "../cli/analysis-budget.js";
import type { CompiledSpec } from "../control/compiled.js";
import type { AnalysisAt, UpdateAnalysis } from "../engine/summary.js";
import { loadUpdates, prepareUpdates } from "./updates.js";
import { threadModule } from "../thread-module.js";

/** `--analyze` and analyze's budget flags (0 lifts a bound). */
export interface AnalyzeOptions {
  readonly maxClasses?: number;
  /** Seconds. */
  readonly timeLimit?: number;
}

/** What the thread is given. */
export interface AnalysisJob {
  readonly compiled: CompiledSpec;
  /** The updates file, when there is one. */
  readonly updates?: string;
  /** The replay's endpoints, as the updates are checked with them. */
  readonly endpoints: readonly string[];
  readonly hopLimit: number;
  readonly maxClasses: number;
  readonly timeLimit: number;
}

/** The analysis of the start, and after each update of the file, in order. */
export interface ReplayAnalysisResult {
  readonly start: AnalysisAt;
  readonly updates: readonly UpdateAnalysis[];
}

export type FromAnalysisThread =
  { readonly ok: true; readonly result: ReplayAnalysisResult } | { readonly ok: false; readonly problem: string };

/** The work itself (the thread's; tests call it here): the start, then each update, incrementally. */
export function analyseReplay(job: AnalysisJob): ReplayAnalysisResult {
  const budget = new Budget({
    ...(job.maxClasses > 0 ? { maxClasses: job.maxClasses } : {}),
    ...(job.timeLimit > 0 ? { timeLimit: job.timeLimit } : {}),
  });
  const t0 = performance.now();
  const live = new LiveAnalysis(job.compiled, { budget, hopLimit: job.hopLimit });
  const ms = performance.now() - t0;
  const walked = live.analysis.components.reduce((n, c) => n + c.space.atoms().length, 0);
  let before = stateOf(live, job, walked, ms);
  const start = before;
  const updates: UpdateAnalysis[] = [];
  if (job.updates !== undefined)
    prepareUpdates(loadUpdates(job.updates), job.compiled, job.endpoints, (scratch) => {
      // What the update changed, and nothing else: a new description's tables (the reconcile installs all its rows or
      // none), the links and members down; no row compared.
      const u: LiveUpdate = live.change({ compiled: scratch.installed.compiled, down: scratch.down });
      const now = stateOf(live, job, u.classes, u.ms);
      const held = new Set(before.holds);
      updates.push({
        ...now,
        nowFail: now.fails.filter((p) => !before.fails.includes(p)),
        nowHold: now.holds.filter((p) => !held.has(p)),
        rows: u.rows,
        down: u.down ?? 0,
      });
      before = now;
    });
  return { start, updates };
}

function stateOf(live: LiveAnalysis, job: AnalysisJob, classes: number, ms: number): AnalysisAt {
  const ps: PropertyResult[] = live.properties();
  const stop = live.stopped;
  const counterexamples: Record<string, string> = {};
  for (const p of ps) if (!p.holds && p.unknown !== true) counterexamples[p.name] = p.counterexamples[0] ?? "";
  return {
    holds: ps.filter((p) => p.holds).map((p) => p.name),
    fails: ps.filter((p) => !p.holds && p.unknown !== true).map((p) => p.name),
    unknown: ps.filter((p) => p.unknown === true).map((p) => p.name),
    counterexamples,
    classes,
    ms: Math.round(ms * 1000) / 1000,
    ...(stop === undefined ? {} : { cut: stopReason(stop, job).why }),
  };
}

/** The analysis of a replay, in its thread from the moment it is made. */
export class ReplayAnalysis {
  readonly #worker: Worker;
  readonly #port: MessagePort;
  readonly #done = new Int32Array(new SharedArrayBuffer(4));
  #answer: FromAnalysisThread | undefined;

  constructor(job: Omit<AnalysisJob, "maxClasses" | "timeLimit">, options: AnalyzeOptions) {
    const { port1, port2 } = new MessageChannel();
    this.#port = port1;
    const full: AnalysisJob = {
      ...job,
      maxClasses: options.maxClasses ?? ANALYZE_LIMITS.maxClasses,
      timeLimit: options.timeLimit ?? ANALYZE_LIMITS.timeLimit,
    };
    this.#worker = new Worker(threadModule("run/analysis-worker.js"), {
      workerData: { job: full, port: port2, done: this.#done },
      transferList: [port2],
    });
    this.#worker.unref();
  }

  /** Waits for the thread's answer (the replay is done by then): the result, or why there is none. */
  result(): FromAnalysisThread {
    while (this.#answer === undefined) {
      Atomics.wait(this.#done, 0, 0, 1000);
      const m = receiveMessageOnPort(this.#port);
      if (m !== undefined) this.#answer = m.message as FromAnalysisThread;
    }
    void this.close();
    return this.#answer;
  }

  /** Ends the thread, wherever it is. */
  async close(): Promise<void> {
    this.#port.close();
    await this.#worker.terminate();
  }
}
