// The engine: the one owner of a running data plane. It loads the data plane and installs a description through the
// reconciler, which keeps what is installed (src/control/reconcile.ts); it takes batches of packets, whole (run) or
// gathered a packet at a time (submit); it runs control work between batches (between: table writes, reconciliation,
// links and members down), so a packet follows the tables in force when it was processed, never a half-applied change;
// and it hands what the data plane writes to its sinks (./sinks.ts): the recordings (--out's files, ./outputs.ts, or a
// worker thread's chunk buffers), listeners for packets leaving on external links and for deliveries, and the trace.
// Everything per packet happens in the data plane, on whole batches; the sinks are read after each batch, never a
// packet at a time.
//
// Front ends configure it and touch no data plane themselves: `strata run`
// (src/run/replay.ts on one thread; src/run/chunk-runner.ts, an engine per
// worker thread), `strata serve` (src/cli/serve.ts, src/serve/: live ports,
// control commands, reloads), `strata p4runtime` and `serve --p4runtime`
// (src/p4runtime/emulation.ts), and the tests.

import type { CompiledSpec } from "../control/compiled.js";
import type { ResolvedEndpoint } from "../control/endpoints.js";
import type { Injection, Installed } from "../control/install.js";
import type { Ledger, Writer } from "../control/ledger.js";
import { type Change, Reconciler, type Resolved, type RowWrites, type Target } from "../control/reconcile.js";
import { MAX_CAP_LEN_DEFAULT } from "../pcap/index.js";
import { INJECT_KINDS } from "../wasm/abi.js";
import { DataPlane } from "../wasm/module.js";
import { checkLimits, DEFAULT_RUNNER, type InputBatch, Runner, type TraceSink } from "../wasm/runner.js";
import type { InputArea } from "../wasm/runner.js";
import { type TableWrite, Tables, type WriteResult } from "../wasm/tables.js";
import { BatchQueue } from "./batches.js";
import {
  addedEndpoint,
  type EngineOptions,
  type EngineOutputs,
  type EngineTrace,
  EngineTables,
  inputStats,
  subscribe,
  type TablesListener,
  wallClock,
} from "./options.js";
import {
  type DeliveryListener,
  type Exit,
  type ExitListener,
  type ExternalEnd,
  emitTo,
  exitsOf,
  resolveExternal,
  Sinks,
} from "./sinks.js";
import { type Counters, type InputStats, type PortSummary, readCounters, type Summary, summarize } from "./summary.js";
import { TraceWriter } from "./trace.js";

export type { EngineOptions, EngineOutputs, EngineTrace, TablesListener } from "./options.js";

/** Endpoints added at run time (endpointAt) at most: a controller's packet-outs cannot grow them without bound. */
export const ADDED_ENDPOINTS_MAX = 1024;

/** Bytes a submitted batch's data may hold before it runs (a frame longer than this runs alone). */
const BATCH_BYTES = 1 << 20;

export class Engine {
  /** The description the engine opened with (reloads and updates change `installed`, not this). */
  readonly compiled: CompiledSpec;
  readonly exits: readonly Exit[];
  readonly #options: EngineOptions;
  readonly #dp: DataPlane;
  readonly #rec: Reconciler;
  readonly #endpoints: ResolvedEndpoint[];
  /** The endpoints as written (what the trace names them). */
  readonly #names: string[];
  readonly #opened: number;
  readonly #stats: InputStats[];
  readonly #queue: BatchQueue;
  readonly #exitListeners: ExitListener[] = [];
  readonly #deliveryListeners: DeliveryListener[] = [];
  readonly #tableListeners: TablesListener[] = [];
  readonly #control: (() => void)[] = [];
  #runner: Runner | undefined;
  #sinks: Sinks | undefined;
  #trace: TraceWriter | undefined;
  #traceOptions: EngineTrace | undefined;
  #events: TraceSink | null = null;
  #started = process.hrtime.bigint();
  /** The number of the next packet run. */
  #next = 0;
  #running = false;
  #stopped: Summary | undefined;
  #ports: (() => readonly PortSummary[]) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #immediate: NodeJS.Immediate | undefined;

  private constructor(options: EngineOptions, dp: DataPlane) {
    const compiled = options.compiled;
    const texts = options.endpoints ?? [];
    this.#options = options;
    this.compiled = compiled;
    this.#dp = dp;
    this.#rec = Reconciler.install(this.#dp, compiled, texts, { empty: options.emptyTables === true });
    this.#endpoints = [...this.#rec.endpoints];
    this.#names = [...texts];
    this.#opened = texts.length;
    this.#stats = texts.map((e, k) => inputStats(e, options.sources?.[k] ?? ""));
    this.exits = exitsOf(compiled);
    this.#queue = new BatchQueue(options.batchPackets ?? DEFAULT_RUNNER.batchPackets, BATCH_BYTES);
  }

  /**
   * Loads a data plane (or takes the one of `after`, which runs no more) and installs `compiled` with its endpoints.
   * Bad input throws before anything runs: a limit out of range (RangeError), an endpoint the description lacks
   * (UsageError), a row the data plane refuses (SpecError).
   */
  static open(options: EngineOptions, after?: Engine): Engine {
    checkLimits(options);
    return new Engine(options, after === undefined ? DataPlane.load() : after.#handOver());
  }

  /** The data plane, its tables destroyed, for another engine: what tests that open thousands do (an instance each
   * costs its making and the collections of its memory). This engine runs no more. */
  #handOver(): DataPlane {
    this.#betweenOnly("handing the data plane over");
    this.#runner = undefined; // run() throws from now on
    for (const t of this.#rec.ledger.compiled.tables) this.#rec.ledger.destroy(t);
    return this.#dp;
  }

  /**
   * Where what the data plane writes goes from now on; counters, packet numbers and the clock
   * start from zero. A run that starts again (a replay run twice) connects again, with the same
   * kind of outputs. Only between batches.
   */
  connect(outputs: EngineOutputs = {}): void {
    if (this.#running) throw new Error("connect() from inside a batch: use between()");
    const o = this.#options;
    const compiled = this.compiled;
    this.#dp.exports.countersReset();
    const sinks = new Sinks(this.#dp, compiled, {
      ...(outputs.recordings !== undefined ? { recordings: outputs.recordings } : {}),
      exits: outputs.exits === true ? this.exits : [],
      deliveries: outputs.deliveries === true,
      emit: emitTo(this.#exitListeners, this.#deliveryListeners),
    });
    const trace = outputs.trace;
    // Buffers are sized by the packets read, never by a capture's snaplen (a header field
    // readers ignore): they start small and grow to the longest packet a capture of any
    // link type a network takes may hold (libpcap's limit). A longer one is dropped as too-long.
    this.#runner = new Runner(
      this.#dp,
      {
        trace: trace !== undefined,
        ...(trace?.packets !== undefined ? { tracePackets: trace.packets } : {}),
        maxFanout: compiled.maxFanout,
        hopLimit: o.hopLimit ?? DEFAULT_RUNNER.hopLimit,
        copyLimit: o.copyLimit ?? DEFAULT_RUNNER.copyLimit,
        slotLenMax: MAX_CAP_LEN_DEFAULT + DEFAULT_RUNNER.headroom,
        ...(o.batchPackets !== undefined ? { batchPackets: o.batchPackets } : {}),
        ...o.buffers,
      },
      sinks,
    );
    this.#sinks = sinks;
    this.#traceOptions = trace;
    this.#trace =
      trace === undefined ? undefined : new TraceWriter(trace.lines, this.installed.compiled, this.installed.entries);
    const writer = this.#trace;
    this.#events = writer ?? null;
    this.#started = process.hrtime.bigint();
    this.#next = 0;
  }

  /** What is installed: the compiled description with the table ids the data plane holds, and each row's entry. */
  get installed(): Installed {
    return this.#rec.current();
  }

  /** What every table holds, whoever wrote it (src/control/ledger.ts): read it between batches. */
  get ledger(): Ledger {
    return this.#rec.ledger;
  }

  /** Work the reconciliations did (tables whose rows were compared), for tests that budget it. */
  get reconcileWork(): { readonly compared: number } {
    return this.#rec.work;
  }

  /** Where packets enter: run()'s and submit()'s endpoint numbers index it. */
  get endpoints(): readonly ResolvedEndpoint[] {
    return this.#endpoints;
  }

  /** Packets run so far (since connect()). */
  get injected(): number {
    return this.#next;
  }

  get stopped(): boolean {
    return this.#stopped !== undefined;
  }

  /**
   * Runs one batch through the data plane, its packets numbered from `first` (by default, on from
   * the last batch's); a count runs that many packets of the input area (InputArea.parsePcap). With listeners, what
   * left and what was delivered is handed to them after it. Control work queued by between() runs right after it.
   */
  run(batch: InputBatch | number, first = this.#next): void {
    const runner = this.#runner;
    if (runner === undefined) throw new Error("run() before connect()");
    if (this.#stopped !== undefined) throw new Error("the engine has stopped");
    const count = typeof batch === "number" ? batch : batch.count;
    if (count === 0) return;
    if (this.#running) throw new Error("run() from inside a batch: use between()");
    this.#running = true;
    try {
      if (typeof batch === "number") runner.go({ count, base: 0 }, first, this.#events);
      else {
        this.#trace?.startBatch(first, batch, this.#names);
        runner.run(batch, first, this.#events);
      }
      if (this.#sinks?.live === true) {
        runner.flushRecordings();
        this.#sinks.settle();
      }
      if (this.#trace !== undefined) {
        // The batch's packets are done: their lines are whole, and counted in the trace's bytes.
        this.#trace.endLine();
        if (this.#traceOptions?.full?.() === true) this.#stopTracing();
      }
      this.#next = first + count;
    } finally {
      this.#running = false;
    }
    this.#drainControl();
  }

  /** Where src/run/blocks.ts reads captures in blocks, for run(count); not with a trace (its lines read batches). */
  get inputArea(): InputArea {
    const runner = this.#runner;
    if (runner === undefined) throw new Error("inputArea before connect()");
    if (this.#trace !== undefined) throw new Error("inputArea with a trace: run batches");
    return runner;
  }

  /**
   * Queues one packet at `endpoint` (copied): it runs with the next batch, when the batch is full or
   * `flushMs` after its first packet. The cheap way for a live port to feed the engine.
   */
  submit(endpoint: number, data: Uint8Array, len = data.length, origLen = len, tsSec?: number, tsNsec?: number): void {
    if (this.#stopped !== undefined) return;
    // Without a time: when the packet reached strata.
    const [sec, nsec] = tsSec === undefined || tsNsec === undefined ? wallClock() : [tsSec, tsNsec];
    if (!this.#queue.fits(len)) this.flush();
    this.#queue.push(endpoint, data, len, origLen, sec, nsec);
    if (this.#queue.full) this.flush();
    else if (this.#timer === undefined && this.#immediate === undefined && this.#queue.count > 0) {
      const ms = this.#options.flushMs ?? 1;
      const run = (): void => {
        this.#timer = undefined;
        this.#immediate = undefined;
        this.flush();
      };
      // 0: once the frames that arrived in this turn of the event loop are in.
      if (ms === 0) this.#immediate = setImmediate(run);
      else this.#timer = setTimeout(run, ms);
    }
  }

  /** Runs what submit() has queued now. */
  flush(): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#immediate !== undefined) {
      clearImmediate(this.#immediate);
      this.#immediate = undefined;
    }
    if (this.#queue.count === 0 || this.#stopped !== undefined || this.#running) return;
    const batch = this.#queue.take();
    try {
      const ep = batch.endpoint;
      for (let i = 0; i < batch.count; i++) {
        const s = this.#stats[typeof ep === "number" ? ep : (ep[i] ?? 0)];
        if (s !== undefined) s.packets++;
      }
      this.run(batch);
    } finally {
      this.#queue.reset();
    }
  }

  /**
   * Runs `fn` between batches: now when no batch is running (after the packets submitted before
   * it), else right after the running batch. Its result or error is the promise's.
   */
  between<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const job = (): void => {
        try {
          resolve(fn());
        } catch (err) {
          reject(err);
        }
      };
      if (this.#running) {
        this.#control.push(job);
        return;
      }
      this.flush();
      job();
    });
  }

  #drainControl(): void {
    while (this.#control.length > 0) this.#control.shift()?.();
  }

  #betweenOnly(what: string): void {
    if (this.#running) throw new Error(`${what} from inside a batch: use between()`);
  }

  /**
   * The endpoint number of `at` (where a member sends, or sends in a session, or a link), added
   * if the engine has none there yet: what a controller's packet-out needs. `source` names what
   * its packets come from in the summary. Only between batches. Throws past ADDED_ENDPOINTS_MAX.
   */
  endpointAt(at: Injection, source: string): number {
    const same = this.#endpoints.findIndex(
      (e) => e.kind === at.kind && e.member === at.member && e.session === at.session && e.link === at.link,
    );
    if (same >= 0) return same;
    this.#betweenOnly("endpointAt()");
    if (this.#endpoints.length - this.#opened >= ADDED_ENDPOINTS_MAX)
      throw new Error(`the emulation has taken ${ADDED_ENDPOINTS_MAX} new places for packets to enter, its limit`);
    const k = this.#endpoints.length;
    const { text, network } = addedEndpoint(this.compiled, at);
    this.#endpoints.push({ ...at, text, network });
    this.#names.push(text);
    this.#stats.push(inputStats(text, source));
    const x = this.#dp.exports;
    x.endpointsGrow(k + 1);
    x.endpointSet(k, INJECT_KINDS.indexOf(at.kind), at.member, at.session, at.link);
    return k;
  }

  /** The external link named `text` ("network:external", the network optional with one network): both its directions.
   * */
  external(text: string): ExternalEnd {
    const ext = resolveExternal(this.compiled, text);
    const endpoint = this.#endpoints.findIndex(
      (e) => e.kind === "link" && e.member < 0 && e.link === ext.inbound?.index,
    );
    const exit = this.exits.find((x) => x.link.index === ext.outbound?.index);
    return {
      name: ext.name,
      network: ext.network,
      ...(endpoint >= 0 ? { endpoint } : {}),
      ...(exit !== undefined ? { exit } : {}),
    };
  }

  /** Calls `listener` for every packet leaving on an exit, after each batch (connected with `exits`). */
  onExit(listener: ExitListener): void {
    this.#exitListeners.push(listener);
  }

  /** Calls `listener` for every delivery, after each batch (connected with `deliveries`); returns the unsubscribe. */
  onDeliver(listener: DeliveryListener): () => void {
    return subscribe(this.#deliveryListeners, listener);
  }

  /**
   * Calls `listener` between batches after the tables changed: a reconciliation, or a write()
   * by anyone but `listener` itself. Returns the unsubscribe.
   */
  onTablesWritten(listener: TablesListener): () => void {
    return subscribe(this.#tableListeners, listener);
  }

  /**
   * Writes table entries as `by`'s, all or none (between batches), through the ledger: a row of
   * the description is installed while an entry with its match and action is in its table. The
   * onTablesWritten listeners are told, but for `from` (the writer itself).
   */
  write(writes: readonly TableWrite[], by: Writer = "api", from?: TablesListener): WriteResult {
    this.#betweenOnly("write()");
    const result = this.ledger.write(writes, by);
    if (!result.ok || writes.length === 0) return result;
    this.#tablesChanged(from);
    return result;
  }

  /** The data plane's tables for a writer between batches (a P4Runtime server): writes go through write(…, by, from).
   * */
  tables(by: Writer, from?: TablesListener): Tables {
    return new EngineTables(this.#dp, (writes) => this.write(writes, by, from));
  }

  /**
   * Converges the tables to `compiled` (src/control/reconcile.ts), all or (SpecError) none of it,
   * between batches. A change of topology rebuilds it, which only an engine with nothing
   * connected may do (one that tries updates aside): connected, recordings, exits and endpoints
   * are bound to the links and members, and only tables may change.
   */
  reconcile(compiled: CompiledSpec, options: { readonly rebuild?: boolean } = {}): Change {
    this.#betweenOnly("reconcile()");
    const change = this.#rec.apply(compiled, this.#runner === undefined ? options : { rebuild: false });
    this.#tablesChanged();
    return change;
  }

  /** Takes a link, member or machine down (or brings it up), between batches; UsageError for what is not there. */
  /** The links and members down now, by qualified name (what `strata run --analyze` tells the analysis). */
  get down(): { readonly links: ReadonlySet<string>; readonly members: ReadonlySet<string> } {
    return { links: this.#rec.downLinks, members: this.#rec.downMembers };
  }

  setDown(target: Target, down: boolean): Resolved & { readonly rerouted?: RowWrites } {
    this.#betweenOnly("setDown()");
    return this.#rec.setDown(target, down, () => this.#tablesChanged());
  }

  /** The trace names rows by the tables in force; the listeners hear of the change. */
  #tablesChanged(from?: TablesListener): void {
    const listeners = this.#tableListeners.filter((f) => f !== from);
    if (this.#trace === undefined && listeners.length === 0) return;
    const now = this.installed;
    this.#trace?.retable(now.compiled, now.entries);
    for (const f of listeners) f(now);
  }

  /** Everything run so far is in the sinks: the ring read out, records held for a merge written, the trace's last line
   * ended. */
  settle(): void {
    this.#runner?.flushRecordings();
    this.#sinks?.settle();
    this.#trace?.endLine();
  }

  /** Settles, and ends the trace (closing what its lines go to). connect() starts again. */
  disconnect(): void {
    try {
      this.settle();
    } finally {
      this.#trace?.close();
      this.#trace = undefined;
      this.#events = null;
    }
  }

  /** Ends the trace with the batch just run (its packets' lines are whole) and runs on untraced. */
  #stopTracing(): void {
    if (this.#trace === undefined) return;
    this.#trace.close();
    this.#trace = undefined;
    this.#events = null;
    this.#runner?.stopTracing();
    this.#traceOptions?.onFull?.();
  }

  /** The data plane's counters since connect() (`only` some: readCounters()). */
  counters(only?: "packets" | "drops"): Counters {
    return readCounters(this.#dp, this.installed, only);
  }

  /** From now on the summary has a `ports` section: what `ports` returns when it is made (strata serve's live ports).
   * */
  reportPorts(ports: () => readonly PortSummary[]): void {
    this.#ports = ports;
  }

  /** Per endpoint: packets submitted and run so far, and what they were (the summary's `inputs`). */
  stats(endpoint: number): InputStats | undefined {
    return this.#stats[endpoint];
  }

  /** What the engine has done since connect(), counted by the data plane (after stop(), the final one). */
  summary(): Summary {
    if (this.#stopped !== undefined) return this.#stopped;
    const summary = summarize(
      this.counters(),
      this.installed,
      this.#stats,
      Number(process.hrtime.bigint() - this.#started) / 1e9,
    );
    return this.#ports === undefined ? summary : { ...summary, ports: this.#ports() };
  }

  /**
   * Runs what is queued and the control work waiting, puts everything in the sinks and ends the
   * trace; returns the summary. The engine takes no packets after it; a second call returns the same.
   */
  stop(): Summary {
    if (this.#stopped !== undefined) return this.#stopped;
    this.flush();
    this.#drainControl();
    this.disconnect();
    const summary = this.summary();
    this.#stopped = summary;
    return summary;
  }
}
