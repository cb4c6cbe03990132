// `strata serve --analyze`: the analysis of docs/analysis.md for the emulation's
// tables as they are (src/analysis/live.ts), run in a worker thread of its own
// (./analysis-worker.ts). The event loop only tells the thread that the tables
// changed and keeps what it answers, so packets, commands and signals never
// wait for an analysis, however long one takes (a reload that cut 48,000 header
// classes held the event loop for over 12 minutes). `counts` shows the last
// result, and says when a newer one is being computed; a stop ends the thread
// wherever it is.
//
// One message is in flight at a time: changes made while the thread works are
// sent as one, the tables as they are when it is done: the description and
// every installed row when a reload changed the description (or the thread
// has none); otherwise the rows the writes since the last message reached,
// read from the ledger's journal of writes (./analysis-changes.ts), which the
// thread applies without comparing every row (LiveAnalysis.change).

import { Worker } from "node:worker_threads";
import type { CompiledSpec } from "../control/compiled.js";
import type { Installed } from "../control/install.js";
import type { Engine } from "../engine/engine.js";
import type { RowChange } from "../analysis/analysis.js";
import { type OtherEntries, otherEntries, type OthersCache } from "../analysis/entry-rows.js";
import { rowChanges } from "./analysis-changes.js";
import { threadModule } from "../thread-module.js";

/** What the thread is told: the rows installed now (`entries`), or, when the ledger's journal says which writes there
 * were since the last message, the rows they reached (`changes`); the entries beyond the description's rows (a
 * controller's: P4Runtime writes of routes the description does not have); the description when it is new to the
 * thread. */
export interface ToAnalysis {
  readonly compiled?: CompiledSpec;
  readonly entries?: Installed["entries"];
  readonly changes?: readonly RowChange[];
  readonly others: OtherEntries;
}

/** What it answers, for those tables: `counts`' line, or why they could not be analysed. */
export type FromAnalysis =
  { readonly ok: true; readonly line: string } | { readonly ok: false; readonly problem: string };

/** Where the analysis stood: `line` is the last result (undefined before the first); `finished` when it is of the
 * tables installed now. */
export interface AnalysisResult {
  readonly finished: boolean;
  readonly line: string | undefined;
}

const analyses = new WeakMap<Engine, ServeAnalysis>();

/** The analysis attached to `em`, if any. */
export function analysisOf(em: Engine): ServeAnalysis | undefined {
  return analyses.get(em);
}

export class ServeAnalysis {
  readonly #em: Engine;
  readonly #worker: Worker;
  readonly #say: (line: string) => void;
  readonly #unsubscribe: () => void;
  /** The tables the thread was last told of, and the description it has. */
  #sent: Installed | undefined;
  #sentCompiled: CompiledSpec | undefined;
  /** The ledger's version the thread's tables are at; undefined: the thread is to be sent every row (it has none, or
   * dropped its analysis). */
  #sentVersion: number | undefined;
  /** Each header table's entries beyond the description's rows, until the ledger changes the table. */
  readonly #others: OthersCache = { tables: new Map() };
  #running = false;
  #line: string | undefined;
  /** Why the thread itself failed (then nothing more is analysed). */
  #failed: string | undefined;
  #closed = false;
  #settled: (() => void)[] = [];

  /** Starts analysing `em`'s tables and follows their changes, with the emulation's hop limit; `say` hears the first
   * result and every failure. */
  constructor(em: Engine, say: (line: string) => void, hopLimit: number) {
    this.#em = em;
    this.#say = say;
    this.#worker = new Worker(threadModule("serve/analysis-worker.js"), { workerData: { hopLimit } });
    // A stop terminates it; until then the emulation, not the thread, keeps the process running.
    this.#worker.unref();
    this.#worker.on("message", (m: FromAnalysis) => this.#answered(m));
    this.#worker.on("error", (err) => this.#fail(err.message));
    this.#worker.on("exit", (code) => {
      if (!this.#closed) this.#fail(`its thread ended (exit code ${code})`);
    });
    this.#unsubscribe = em.onTablesWritten(() => this.#next());
    analyses.set(em, this);
    this.#next();
  }

  /** One line for `counts`: the last result, and whether a newer one is being computed. */
  line(): string {
    // A writer that tells no listener (P4Runtime writes to a table the server holds) is caught up with here.
    this.#next();
    if (this.#failed !== undefined) return `analysis: stopped: ${this.#failed}`;
    if (this.#line === undefined) return "analysis: analysing… (no result yet)";
    return this.#running ? `${this.#line}; analysing… (the tables changed since that result)` : this.#line;
  }

  /** Where it stands; a stopped serve reports it. */
  result(): AnalysisResult {
    return {
      finished: this.#failed === undefined && !this.#running && this.#sent === this.#em.installed,
      line: this.#failed !== undefined ? `analysis: stopped: ${this.#failed}` : this.#line,
    };
  }

  /** Resolves once the result is of the tables installed now (or the analysis cannot go on). */
  settled(): Promise<void> {
    this.#next();
    if (this.#idle()) return Promise.resolve();
    return new Promise((resolve) => this.#settled.push(resolve));
  }

  /** Stops following the tables and ends the thread, even in the middle of an analysis. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#unsubscribe();
    analyses.delete(this.#em);
    this.#wake();
    await this.#worker.terminate();
  }

  #idle(): boolean {
    return this.#closed || this.#failed !== undefined || (!this.#running && this.#sent === this.#em.installed);
  }

  /** Sends the tables as they are now, unless the thread is at work (it gets them when done) or has them. */
  #next(): void {
    if (this.#closed || this.#running || this.#failed !== undefined) return;
    const now = this.#em.installed;
    if (now === this.#sent) {
      this.#wake();
      return;
    }
    const ledger = this.#em.ledger;
    const others = otherEntries(now, ledger, this.#others);
    // The rows the writes since the last message reached, when the journal says (not every row for the thread to
    // compare): a write costs the thread what its rows touch.
    const written =
      now.compiled === this.#sentCompiled && this.#sentVersion !== undefined
        ? ledger.writtenSince(this.#sentVersion)
        : undefined;
    const message: ToAnalysis =
      written !== undefined
        ? { changes: rowChanges(now.compiled, ledger, written), others }
        : now.compiled === this.#sentCompiled
          ? { entries: now.entries, others }
          : { compiled: now.compiled, entries: now.entries, others };
    this.#sent = now;
    this.#sentCompiled = now.compiled;
    this.#sentVersion = ledger.version;
    this.#running = true;
    this.#worker.postMessage(message);
  }

  #answered(m: FromAnalysis): void {
    this.#running = false;
    if (m.ok) {
      if (this.#line === undefined) this.#say(m.line);
      this.#line = m.line;
    } else {
      // The thread dropped its analysis: the next message has every row.
      this.#sentVersion = undefined;
      this.#line = `analysis: not known: ${m.problem}`;
      this.#say(`strata: analysis: ${m.problem} (the emulation goes on; the next table write is analysed afresh)`);
    }
    this.#next();
  }

  #fail(problem: string): void {
    if (this.#failed !== undefined) return;
    this.#failed = problem;
    this.#running = false;
    this.#say(`strata: analysis: ${problem}; no more analysis until serve is restarted (the emulation goes on)`);
    this.#wake();
  }

  #wake(): void {
    for (const resolve of this.#settled.splice(0)) resolve();
  }
}
