// A running emulation of one description: what `strata serve` keeps alive.
// A replay (src/run/replay.ts) lives for its captures; an emulation lives until
// stop(): packets arrive in batches at any time, each batch is one Runner.run,
// and packets leaving the emulation on an external link are handed to
// listeners (a live port sends them out of its interface). Control work — table
// writes, reconciliation — runs between batches (between()), so a packet
// follows the tables in force when it was processed, never a half-applied change.
//
// Outputs ride on the data plane's capture buffers: every link leaving the
// emulation gets a buffer of its own, which the pipeline fills with pcap records
// and which is read after each batch; with --out, the links and deliveries of a
// replay are written too (src/run/outputs.ts), and stop() writes summary.json.
// With `deliveries`, every receiving member's deliveries go to a capture buffer
// of its own whose records carry the in-link each packet came on (tagged
// records, assembly/pipeline/capture.ts), read after each batch and handed to
// onDeliver listeners (the P4Runtime server's PacketIn): no trace, no wasm call
// per packet.

import { compile } from "../control/compile.js";
import type { CompiledLink, CompiledNetwork, CompiledSpec } from "../control/compiled.js";
import { type ResolvedEndpoint, resolveEndpoint } from "../control/endpoints.js";
import { type Injection, type Installed, install, withoutRows } from "../control/install.js";
import { loadSpec } from "../description/load.js";
import { excerpt, UsageError } from "../errors.js";
import { MAX_CAP_LEN_DEFAULT } from "../pcap/index.js";
import { RECORD_HEADER_LEN as PCAP_REC_LEN } from "../pcap/pcap-layout.js";
import type { InputStats } from "../run/inputs.js";
import type { OutDir } from "../out-dir.js";
import { CaptureOutputs, claimReplayOut, SUMMARY_FILE } from "../run/outputs.js";
import { leaves, type PortSummary, readCounters, type Summary, summarize } from "../run/summary.js";
import { TraceWriter } from "../run/trace.js";
import { TraceFile } from "../run/trace-file.js";
import { CAPTURE_TAG_LEN, INJECT_KINDS, LINK_MODES } from "../wasm/abi.js";
import { forEachTagged, tagDeliveries } from "../wasm/deliveries.js";
import { DataPlane } from "../wasm/module.js";
import type { TableWrite, WriteResult } from "../wasm/tables.js";
import { type CaptureTargets, checkLimits, DEFAULT_RUNNER, type InputBatch, type OutputSink, type PacketRanges, Runner } from "../wasm/runner.js";

export interface EmulationOptions {
  /** The description's file (for the summary and --out's refusal of inputs). */
  readonly spec: string;
  /**
   * Where packets enter, in the ENDPOINT forms of `strata run --in` (src/control/endpoints.ts):
   * inject()'s and submit()'s endpoint numbers are indexes into this list.
   */
  readonly endpoints: readonly string[];
  /** What each endpoint's packets come from, for the summary's `inputs[].file` (an interface, a socket). */
  readonly sources?: readonly string[];
  /** Write captures, summary.json (and trace.jsonl) here, by the rules of `strata run --out`. */
  readonly out?: string;
  readonly force?: boolean;
  readonly trace?: boolean;
  /** With trace, only these packets (numbered from 0 as they came) are traced. */
  readonly tracePackets?: PacketRanges;
  /** With trace: once trace.jsonl holds this many bytes, tracing stops (default TRACE_MAX_BYTES). */
  readonly traceMaxBytes?: number;
  /** Called once, between batches, when tracing stops at traceMaxBytes: the trace's bytes and lines (packets). */
  readonly onTraceFull?: (trace: { readonly bytes: number; readonly packets: number }) => void;
  readonly hopLimit?: number;
  readonly copyLimit?: number;
  /** Packets per batch (default DEFAULT_RUNNER.batchPackets). */
  readonly batchPackets?: number;
  /** How long submit() holds a partial batch before running it, in ms (default 1; 0: until the frames that arrived in the same turn of the event loop are in). */
  readonly flushMs?: number;
  /** Hand every delivery to onDeliver listeners after each batch, with the in-link it came on. */
  readonly deliveries?: boolean;
  /**
   * Start with every table empty (a controller installs the rows): `compiled` stays the whole
   * description, and `installed.entries` maps each of its rows to −1 until a write (noteWrites) puts it in.
   */
  readonly emptyTables?: boolean;
}

/**
 * A packet delivered to `member` (its index) on in-link identifier `inLink`: `data[start .. start+len)`
 * is a view on linear memory, valid only during the call (copy what you keep).
 */
export type DeliveryListener = (member: number, inLink: number, data: Uint8Array, start: number, len: number, tsSec: number, tsNsec: number) => void;

/** Endpoints added at run time (addEndpoint) at most: a controller's packet-outs cannot grow them without bound. */
export const ADDED_ENDPOINTS_MAX = 1024;

/** A link on which packets leave the emulation: an external link's outbound direction. */
export interface Exit {
  /** Index among the emulation's exits. */
  readonly index: number;
  /** "network:external", as an endpoint is written. */
  readonly name: string;
  readonly network: CompiledNetwork;
  readonly link: CompiledLink;
}

/**
 * A packet leaving on `exit`: `data[start .. start+len)` is a view on linear memory, valid only
 * during the call (copy what you keep). Timestamps are those of the input packet it came from.
 */
export type ExitListener = (exit: Exit, data: Uint8Array, start: number, len: number, tsSec: number, tsNsec: number) => void;

/** Where an external link's two directions are: packets arriving (its endpoint number) and leaving. */
export interface ExternalEnd {
  readonly name: string;
  readonly network: CompiledNetwork;
  /** Index into the emulation's endpoints, when packets can arrive on it. */
  readonly endpoint?: number;
  /** When packets can leave on it. */
  readonly exit?: Exit;
}

/** An external link of a description, found by name: its inbound and outbound directions (one or both). */
export interface ExternalLink {
  /** "network:external". */
  readonly name: string;
  readonly network: CompiledNetwork;
  readonly inbound?: CompiledLink;
  readonly outbound?: CompiledLink;
}

/** The external link `text` names ("network:external"; the network may be left out when there is one); UsageError if none. */
export function resolveExternal(compiled: CompiledSpec, text: string, label = `'${excerpt(text)}'`): ExternalLink {
  const colon = text.indexOf(":");
  const networks = compiled.networks;
  const network = colon < 0 ? (networks.length === 1 ? networks[0] : undefined) : networks.find((n) => n.name === text.slice(0, colon));
  const name = colon < 0 ? text : text.slice(colon + 1);
  const externals = [...new Set(compiled.links.filter((l) => l.external !== undefined).map((l) => `${networks[l.network]?.name}:${l.external}`))];
  const list = externals.length === 0 ? "the description has none" : `external links: ${externals.join(", ")}`;
  if (network === undefined) {
    const why = colon < 0 ? "names no network" : `names no network of the description`;
    throw new UsageError(`${label} ${why}: write NETWORK:EXTERNAL (${list})`);
  }
  const links = compiled.links.filter((l) => l.network === network.index && l.external === name);
  if (links.length === 0) throw new UsageError(`${label}: network ${network.name} has no external link '${excerpt(name)}' (${list})`);
  const inbound = links.find((l) => l.sender < 0);
  const outbound = links.find((l) => l.sender >= 0);
  return { name: `${network.name}:${name}`, network, ...(inbound !== undefined ? { inbound } : {}), ...(outbound !== undefined ? { outbound } : {}) };
}

/** Bytes of trace.jsonl after which a serve's trace stops, unless told otherwise (--trace-max). */
export const TRACE_MAX_BYTES = 1e9;

/** Bytes a batch's data may hold before it runs (a frame longer than this runs alone). */
const BATCH_BYTES = 1 << 20;

export class Emulation {
  readonly options: EmulationOptions;
  readonly compiled: CompiledSpec;
  readonly dp: DataPlane;
  /** The tables as installed. Control work that rewrites them keeps this up to date (summary row hits read it). */
  installed: Installed;
  readonly exits: readonly Exit[];
  readonly #endpoints: ResolvedEndpoint[];
  readonly #opened: number;

  readonly #runner: Runner;
  readonly #captures: EmulationCaptures;
  readonly #out: OutDir | undefined;
  #trace: TraceWriter | undefined;
  readonly #traceFile: TraceFile | undefined;
  #sink: OutputSink | null;
  readonly #stats: InputStats[];
  readonly #listeners: ExitListener[] = [];
  readonly #tableListeners: ((installed: Installed) => void)[] = [];
  readonly #deliveryListeners: DeliveryListener[] = [];
  readonly #control: (() => void)[] = [];
  readonly #queue: BatchQueue;
  readonly #started = process.hrtime.bigint();
  #first = 0;
  #running = false;
  #stopped: Summary | undefined;
  #ports: (() => readonly PortSummary[]) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #immediate: NodeJS.Immediate | undefined;

  private constructor(options: EmulationOptions, compiled: CompiledSpec, endpoints: readonly ResolvedEndpoint[]) {
    this.options = options;
    this.compiled = compiled;
    this.#endpoints = [...endpoints];
    this.#opened = endpoints.length;
    this.dp = DataPlane.load();
    if (options.emptyTables === true) {
      const empty = install(this.dp, withoutRows(compiled), endpoints);
      this.installed = { compiled, tables: empty.tables, entries: new Map(compiled.tables.map((t) => [t.id, t.rows.map(() => -1)])) };
    } else {
      this.installed = install(this.dp, compiled, endpoints);
    }
    const exits: Exit[] = [];
    for (const l of compiled.links) {
      const network = compiled.networks[l.network];
      if (l.external === undefined || l.sender < 0 || network === undefined || !leaves(compiled, l)) continue;
      exits.push({ index: exits.length, name: `${network.name}:${l.external}`, network, link: l });
    }
    this.exits = exits;
    const trace = options.trace === true;
    if (trace && options.out === undefined) throw new UsageError("--trace writes trace.jsonl into --out: give --out DIR too");
    this.#out =
      options.out === undefined
        ? undefined
        : claimReplayOut(options.out, compiled, { command: "serve", inputs: [options.spec], force: options.force === true, trace });
    this.dp.exports.countersReset();
    const emit: Emit = {
      exit: (exit, data, start, len, sec, nsec) => {
        for (const f of this.#listeners) f(exit, data, start, len, sec, nsec);
      },
      deliver: (member, inLink, data, start, len, sec, nsec) => {
        for (const f of this.#deliveryListeners) f(member, inLink, data, start, len, sec, nsec);
      },
    };
    this.#captures = new EmulationCaptures(this.dp, compiled, exits, options.out, options.deliveries === true, emit);
    this.#runner = new Runner(
      this.dp,
      {
        trace,
        ...(options.tracePackets !== undefined ? { tracePackets: options.tracePackets } : {}),
        maxFanout: compiled.maxFanout,
        hopLimit: options.hopLimit ?? DEFAULT_RUNNER.hopLimit,
        copyLimit: options.copyLimit ?? DEFAULT_RUNNER.copyLimit,
        slotLenMax: MAX_CAP_LEN_DEFAULT + DEFAULT_RUNNER.headroom,
        ...(options.batchPackets !== undefined ? { batchPackets: options.batchPackets } : {}),
      },
      this.#captures,
    );
    this.#traceFile = trace && options.out !== undefined ? new TraceFile(options.out) : undefined;
    this.#trace = this.#traceFile === undefined ? undefined : new TraceWriter(this.#traceFile, compiled, this.installed.entries);
    const tw = this.#trace;
    this.#sink = tw === undefined ? null : { packet: () => {}, event: tw.event.bind(tw) };
    this.#stats = endpoints.map((e, k) => ({ endpoint: e.text, file: options.sources?.[k] ?? "", packets: 0, error: undefined, linkTypes: new Set<string>(), adapted: new Set<string>() }));
    this.#queue = new BatchQueue(this.#runner.options.batchPackets, BATCH_BYTES);
  }

  /** Loads, compiles and installs the description (or `compiled`); resolves the endpoints. Bad input throws before anything runs. */
  static open(options: EmulationOptions, compiled?: CompiledSpec): Emulation {
    checkLimits(options);
    const c = compiled ?? compile(loadSpec(options.spec));
    const endpoints = options.endpoints.map((e) => resolveEndpoint(c, e));
    return new Emulation(options, c, endpoints);
  }

  /** Where packets enter, in the ENDPOINT forms of `strata run --in`: inject()'s and submit()'s endpoint numbers index it. */
  get endpoints(): readonly ResolvedEndpoint[] {
    return this.#endpoints;
  }

  /**
   * The endpoint number of `at` (where a member sends, or sends in a session, or a link), added
   * if the emulation has none there yet: what a controller's packet-out needs. `source` names what
   * its packets come from in the summary. Runs between batches. Throws past ADDED_ENDPOINTS_MAX.
   */
  endpointAt(at: Injection, source: string): number {
    const same = this.#endpoints.findIndex((e) => e.kind === at.kind && e.member === at.member && e.session === at.session && e.link === at.link);
    if (same >= 0) return same;
    if (this.#running) throw new Error("endpointAt() from inside a batch: use between()");
    if (this.#endpoints.length - this.#opened >= ADDED_ENDPOINTS_MAX) throw new Error(`the emulation has taken ${ADDED_ENDPOINTS_MAX} new places for packets to enter, its limit`);
    const member = this.compiled.members[at.member];
    const network = this.compiled.networks[member?.network ?? -1] ?? this.compiled.networks[0];
    if (network === undefined) throw new Error("the description has no network");
    const link = this.compiled.links[at.link];
    const where =
      at.kind === "session" ? `${member?.key ?? ""}@${at.session}` : at.kind === "self" ? (member?.key ?? "") : (link?.external ?? `${link?.capture ?? ""}`);
    const k = this.#endpoints.length;
    this.#endpoints.push({ ...at, text: `${network.name}:${where}`, network });
    this.#stats.push({ endpoint: `${network.name}:${where}`, file: source, packets: 0, error: undefined, linkTypes: new Set<string>(), adapted: new Set<string>() });
    const x = this.dp.exports;
    x.endpointsGrow(k + 1);
    x.endpointSet(k, INJECT_KINDS.indexOf(at.kind), at.member, at.session, at.link);
    return k;
  }

  /**
   * Keeps `installed.entries` (the summary's row hits, the control commands' rows) in step with
   * table writes made by someone other than the description (a P4Runtime controller): a row of
   * the description is installed while an entry with its match and action is in its table.
   */
  noteWrites(writes: readonly TableWrite[], result: WriteResult): void {
    if (!result.ok || writes.length === 0) return;
    const entries = new Map(this.installed.entries);
    // The rows of the description in force (a reload may have replaced the one the emulation opened with).
    const byId = new Map(this.installed.compiled.tables.map((t) => [t.id, t]));
    writes.forEach((w, i) => {
      const table = byId.get(w.table.id);
      if (table === undefined) return;
      const entry = result.entries[i] ?? -1;
      let list: number[] | undefined;
      table.rows.forEach((r, k) => {
        if (!sameMatch(table.kind, r.match, w.match)) return;
        list ??= [...(entries.get(table.id) ?? table.rows.map(() => -1))];
        list[k] = w.op !== "delete" && w.action !== undefined && sameAction(r.action, w.action) ? entry : -1;
      });
      if (list !== undefined) entries.set(table.id, list);
    });
    this.installed = { ...this.installed, entries };
    this.tablesChanged();
  }

  /**
   * Calls `listener` (between batches) after a writer other than a P4Runtime controller changed
   * the tables: a control command's delete or insert, a reload. `installed` says what is there now.
   */
  onTablesWritten(listener: (installed: Installed) => void): () => void {
    this.#tableListeners.push(listener);
    return () => {
      const i = this.#tableListeners.indexOf(listener);
      if (i >= 0) this.#tableListeners.splice(i, 1);
    };
  }

  /** Tells the onTablesWritten listeners that `installed` changed; call between batches, after the write. */
  tablesWritten(): void {
    for (const f of [...this.#tableListeners]) f(this.installed);
  }

  /** Calls `listener` for every delivery, after each batch (only with the option `deliveries`). */
  onDeliver(listener: DeliveryListener): () => void {
    this.#deliveryListeners.push(listener);
    return () => {
      const i = this.#deliveryListeners.indexOf(listener);
      if (i >= 0) this.#deliveryListeners.splice(i, 1);
    };
  }

  /** The external link named `text` ("network:external", the network optional with one network): both its directions. */
  external(text: string): ExternalEnd {
    const ext = resolveExternal(this.compiled, text);
    const endpoint = this.endpoints.findIndex((e) => e.kind === "link" && e.member < 0 && e.link === ext.inbound?.index);
    const exit = this.exits.find((x) => x.link.index === ext.outbound?.index);
    return { name: ext.name, network: ext.network, ...(endpoint >= 0 ? { endpoint } : {}), ...(exit !== undefined ? { exit } : {}) };
  }

  /** Calls `listener` for every packet leaving on an exit, after each batch. */
  onExit(listener: ExitListener): void {
    this.#listeners.push(listener);
  }

  /** Per endpoint: packets injected so far, and what they were (the summary's `inputs`). */
  stats(endpoint: number): InputStats | undefined {
    return this.#stats[endpoint];
  }

  /** Packets injected so far. */
  get injected(): number {
    return this.#first;
  }

  get stopped(): boolean {
    return this.#stopped !== undefined;
  }

  /**
   * Runs one batch through the data plane (one Runner.run), then hands the packets that left to the
   * listeners. Control work queued by between() during the batch runs right after it.
   */
  inject(batch: InputBatch): void {
    if (this.#stopped !== undefined) throw new Error("the emulation has stopped");
    if (batch.count === 0) return;
    if (this.#running) throw new Error("inject() from inside a batch: use between()");
    this.#running = true;
    try {
      const names = this.endpoints.map((e) => e.text);
      this.#trace?.startBatch(this.#first, batch, names);
      this.#runner.run(batch, this.#first, this.#sink);
      this.#runner.flushCaptures();
      // The batch's packets are done: their lines are whole, and counted in the trace's bytes.
      this.#trace?.endLine();
      if (this.#traceFile !== undefined && this.#traceFile.bytes >= (this.options.traceMaxBytes ?? TRACE_MAX_BYTES)) this.#stopTracing();
      this.#captures.settle();
      const ep = batch.endpoint;
      for (let i = 0; i < batch.count; i++) {
        const s = this.#stats[typeof ep === "number" ? ep : (ep[i] ?? 0)];
        if (s !== undefined) s.packets++;
      }
      this.#first += batch.count;
    } finally {
      this.#running = false;
    }
    this.#drainControl();
  }

  /**
   * Queues one packet at `endpoint` (copied): it runs with the next batch, when the batch is full or
   * `flushMs` after its first packet. The cheap way for a live port to feed the emulation.
   */
  submit(endpoint: number, data: Uint8Array, len = data.length, origLen = len, tsSec?: number, tsNsec?: number): void {
    if (this.#stopped !== undefined) return;
    let sec = tsSec;
    let nsec = tsNsec;
    if (sec === undefined || nsec === undefined) {
      // The wall clock, to the microsecond or better: when the packet reached strata.
      const ms = performance.timeOrigin + performance.now();
      sec = Math.floor(ms / 1000);
      nsec = Math.min(999_999_999, Math.round((ms - sec * 1000) * 1e6));
    }
    if (!this.#queue.fits(len)) this.flush();
    this.#queue.push(endpoint, data, len, origLen, sec, nsec);
    if (this.#queue.full) this.flush();
    else if (this.#timer === undefined && this.#immediate === undefined && this.#queue.count > 0) {
      const ms = this.options.flushMs ?? 1;
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
      this.inject(batch);
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

  /** Ends the trace with the batch just run (its packets' lines are whole) and runs on untraced. */
  #stopTracing(): void {
    const file = this.#traceFile;
    if (this.#trace === undefined || file === undefined) return;
    this.#trace.close();
    this.#trace = undefined;
    this.#sink = null;
    this.#runner.stopTracing();
    this.options.onTraceFull?.({ bytes: file.bytes, packets: file.lines });
  }

  /** Tells the trace (--trace) that `installed` changed (a reconciliation): rows are named by the tables in force. */
  tablesChanged(): void {
    this.#trace?.retable(this.installed.compiled, this.installed.entries);
  }

  /** What the emulation has done so far, counted by the data plane (stop() writes the final one). */
  summary(): Summary {
    if (this.#stopped !== undefined) return this.#stopped;
    return this.#summarize();
  }

  /** From now on the summary has a `ports` section: what `ports` returns when it is made (strata serve's live ports). */
  reportPorts(ports: () => readonly PortSummary[]): void {
    this.#ports = ports;
  }

  #summarize(): Summary {
    const summary = summarize(readCounters(this.dp, this.installed), this.installed, this.#stats, Number(process.hrtime.bigint() - this.#started) / 1e9);
    return this.#ports === undefined ? summary : { ...summary, ports: this.#ports() };
  }

  /**
   * Runs what is queued, writes the captures and summary.json (with --out), and returns the
   * summary. The emulation takes no packets after it; a second call returns the same summary.
   */
  stop(): Summary {
    if (this.#stopped !== undefined) return this.#stopped;
    this.flush();
    this.#drainControl();
    try {
      this.#runner.flushCaptures();
      this.#captures.settle();
    } finally {
      this.#captures.close();
      this.#trace?.close();
    }
    const summary = this.#summarize();
    this.#stopped = summary;
    if (this.#out !== undefined) {
      this.#out.write(SUMMARY_FILE, `${JSON.stringify(summary, null, 2)}\n`);
      this.#out.seal();
    }
    return summary;
  }
}

const bytesEqual = (a: Uint8Array | undefined, b: Uint8Array | undefined): boolean =>
  (a === undefined || a.length === 0) === (b === undefined || b.length === 0) && (a === undefined || b === undefined || a.length === 0 || Buffer.compare(a, b) === 0);

/** Whether two entries of a table of `kind` have the same match (priority counts where the kind has one). */
function sameMatch(kind: string, a: TableWrite["match"], b: TableWrite["match"]): boolean {
  const prioritised = kind === "ternary" || kind === "range" || kind === "optional";
  return bytesEqual(a.value, b.value) && bytesEqual(a.mask, b.mask) && bytesEqual(a.lo, b.lo) && bytesEqual(a.hi, b.hi) && (!prioritised || a.priority === b.priority);
}

function sameAction(a: NonNullable<TableWrite["action"]>, b: NonNullable<TableWrite["action"]>): boolean {
  return a.name === b.name && (a.count ?? 0) === (b.count ?? 0) && (a.arg ?? 0) === (b.arg ?? 0) && (a.arg2 ?? 0) === (b.arg2 ?? 0) && bytesEqual(a.data, b.data);
}

/**
 * Packets gathered for the next batch: one buffer and one array per field, allocated once
 * (a frame longer than the buffer grows it).
 */
class BatchQueue {
  count = 0;
  #bytes = 0;
  #data: Uint8Array;
  readonly #max: number;
  readonly #offset: Uint32Array;
  readonly #capLen: Uint32Array;
  readonly #origLen: Uint32Array;
  readonly #tsSec: Float64Array;
  readonly #tsNsec: Uint32Array;
  readonly #endpoint: Uint32Array;

  constructor(packets: number, bytes: number) {
    this.#max = packets;
    this.#data = new Uint8Array(bytes);
    this.#offset = new Uint32Array(packets);
    this.#capLen = new Uint32Array(packets);
    this.#origLen = new Uint32Array(packets);
    this.#tsSec = new Float64Array(packets);
    this.#tsNsec = new Uint32Array(packets);
    this.#endpoint = new Uint32Array(packets);
  }

  get full(): boolean {
    return this.count >= this.#max;
  }

  /** Whether a `len`-byte packet fits beside what is queued (an empty queue takes any). */
  fits(len: number): boolean {
    return this.count === 0 || this.#bytes + len <= this.#data.length;
  }

  push(endpoint: number, data: Uint8Array, len: number, origLen: number, sec: number, nsec: number): void {
    if (this.#bytes + len > this.#data.length) {
      const grown = new Uint8Array(Math.max(2 * this.#data.length, this.#bytes + len));
      grown.set(this.#data.subarray(0, this.#bytes));
      this.#data = grown;
    }
    const k = this.count;
    this.#data.set(data.subarray(0, len), this.#bytes);
    this.#offset[k] = this.#bytes;
    this.#capLen[k] = len;
    this.#origLen[k] = origLen;
    this.#tsSec[k] = sec;
    this.#tsNsec[k] = nsec;
    this.#endpoint[k] = endpoint;
    this.#bytes += len;
    this.count++;
  }

  take(): InputBatch {
    return {
      data: this.#data,
      count: this.count,
      offset: this.#offset,
      capLen: this.#capLen,
      origLen: this.#origLen,
      tsSec: this.#tsSec,
      tsNsec: this.#tsNsec,
      endpoint: this.#endpoint,
    };
  }

  reset(): void {
    this.count = 0;
    this.#bytes = 0;
  }
}

interface Emit {
  readonly exit: ExitListener;
  readonly deliver: DeliveryListener;
}

/**
 * The capture buffers of an emulation: with an --out directory, those of a replay
 * (CaptureOutputs: one per captured link name and per delivering member), then one per exit,
 * then (with `deliveries`) one per receiving member, in tagged records.
 * An exit's records go to the listeners, and to its link's file too: a two-way external link's
 * file holds both directions, merged in timestamp order after each batch. A member's tagged
 * deliveries go to the delivery listeners, and, without their tags, to its delivered/ file.
 */
class EmulationCaptures implements CaptureTargets {
  readonly count: number;
  readonly #files: CaptureOutputs | undefined;
  readonly #fileCount: number;
  readonly #exits: readonly Exit[];
  /** Per exit: the capture file its records also go to (−1 none). */
  readonly #exitFile: number[];
  /** Captures whose records wait for settle(): files shared with an exit. */
  readonly #pending = new Map<number, Uint8Array[]>();
  readonly #shared = new Set<number>();
  readonly #emit: Emit;
  /** Per tagged delivery buffer (from fileCount + exits): its member, and that member's file capture (−1 none). */
  readonly #deliveries: { member: number; file: number }[] = [];

  constructor(dp: DataPlane, compiled: CompiledSpec, exits: readonly Exit[], out: string | undefined, deliveries: boolean, emit: Emit) {
    this.#files = out === undefined ? undefined : new CaptureOutputs(out, compiled, dp);
    this.#fileCount = this.#files?.count ?? 0;
    this.#exits = exits;
    this.#emit = emit;
    const x = dp.exports;
    // Which file each captured link writes to: the replay's own assignment, read back by link name.
    const fileOf = new Map<string, number>();
    if (this.#files !== undefined) {
      let c = 0;
      for (const l of compiled.links) {
        if (!l.captured || fileOf.has(l.capture)) continue;
        fileOf.set(l.capture, c++);
      }
    }
    this.#exitFile = exits.map((e) => fileOf.get(e.link.capture) ?? -1);
    for (const f of this.#exitFile) if (f >= 0) this.#shared.add(f);
    for (const e of exits) {
      const l = e.link;
      // The data plane writes a link's packets only when it is captured: an exit always is.
      if (!l.captured) x.linkSet(l.index, l.network, e.network.spec.design.id, l.sender, l.senderPort, LINK_MODES.indexOf(l.mode), 0, 1);
      x.linkSetCapture(l.index, this.#fileCount + e.index);
    }
    if (deliveries) {
      for (const m of compiled.members) {
        if (m.tables.receive === undefined) continue;
        const c = this.#fileCount + exits.length + this.#deliveries.length;
        this.#deliveries.push({ member: m.index, file: this.#files?.memberCapture(m.index) ?? -1 });
        tagDeliveries(dp, m.index, c);
      }
    }
    // At least one buffer: with none, the data plane would hand link packets to the record ring.
    this.count = Math.max(1, this.#fileCount + exits.length + this.#deliveries.length);
  }

  write(c: number, data: Uint8Array, start: number, len: number): void {
    if (c < this.#fileCount) {
      if (this.#shared.has(c)) this.#keep(c, data, start, len);
      else this.#files?.write(c, data, start, len);
      return;
    }
    const delivery = this.#deliveries[c - this.#fileCount - this.#exits.length];
    if (delivery !== undefined) return this.#delivered(delivery, data, start, len);
    const exit = this.#exits[c - this.#fileCount];
    if (exit === undefined) return;
    const view = new DataView(data.buffer, data.byteOffset);
    for (let r = start; r + PCAP_REC_LEN <= start + len; ) {
      const capLen = view.getUint32(r + 8, true);
      this.#emit.exit(exit, data, r + PCAP_REC_LEN, capLen, view.getUint32(r, true), view.getUint32(r + 4, true));
      r += PCAP_REC_LEN + capLen;
    }
    const file = this.#exitFile[exit.index] ?? -1;
    if (file >= 0) this.#keep(file, data, start, len);
  }

  /** Tagged delivery records: to the listeners, and untagged (plain pcap records) to the member's file. */
  #delivered(d: { member: number; file: number }, data: Uint8Array, start: number, len: number): void {
    const files = this.#files;
    const records = forEachTagged(data, start, len, (inLink, bytes, at, n, sec, nsec) => this.#emit.deliver(d.member, inLink, bytes, at, n, sec, nsec));
    if (d.file < 0 || files === undefined || records === 0) return;
    const plain = new Uint8Array(len - records * CAPTURE_TAG_LEN);
    let at = 0;
    forEachTagged(data, start, len, (_inLink, bytes, from, n) => {
      // The record header sits just before the tag.
      const head = from - CAPTURE_TAG_LEN - PCAP_REC_LEN;
      plain.set(bytes.subarray(head, head + PCAP_REC_LEN), at);
      plain.set(bytes.subarray(from, from + n), at + PCAP_REC_LEN);
      at += PCAP_REC_LEN + n;
    });
    files.write(d.file, plain, 0, at);
  }

  #keep(c: number, data: Uint8Array, start: number, len: number): void {
    let list = this.#pending.get(c);
    if (list === undefined) {
      list = [];
      this.#pending.set(c, list);
    }
    list.push(data.slice(start, start + len));
  }

  /** Writes the records held back for shared files, merged by timestamp (stable: arrival order on ties). */
  settle(): void {
    for (const [c, chunks] of this.#pending) {
      if (chunks.length === 0) continue;
      const records: { ts: bigint; order: number; chunk: Uint8Array; at: number; len: number }[] = [];
      for (const chunk of chunks) {
        const view = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        for (let r = 0; r + PCAP_REC_LEN <= chunk.length; ) {
          const len = PCAP_REC_LEN + view.getUint32(r + 8, true);
          records.push({ ts: BigInt(view.getUint32(r, true)) * 1_000_000_000n + BigInt(view.getUint32(r + 4, true)), order: records.length, chunk, at: r, len });
          r += len;
        }
      }
      records.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.order - b.order));
      const merged = new Uint8Array(records.reduce((n, r) => n + r.len, 0));
      let at = 0;
      for (const r of records) {
        merged.set(r.chunk.subarray(r.at, r.at + r.len), at);
        at += r.len;
      }
      this.#files?.write(c, merged, 0, merged.length);
      chunks.length = 0;
    }
  }

  close(): void {
    this.#files?.close();
  }
}
