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

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { compile } from "../control/compile.js";
import type { CompiledLink, CompiledNetwork, CompiledSpec } from "../control/compiled.js";
import { type ResolvedEndpoint, resolveEndpoint } from "../control/endpoints.js";
import { type Installed, install } from "../control/install.js";
import { loadSpec } from "../description/load.js";
import { excerpt, UsageError } from "../errors.js";
import { MAX_CAP_LEN_DEFAULT } from "../pcap/index.js";
import { RECORD_HEADER_LEN as PCAP_REC_LEN } from "../pcap/pcap-layout.js";
import type { InputStats } from "../run/inputs.js";
import { CaptureOutputs, OutDir, outputFiles, SUMMARY_FILE, TRACE_FILE } from "../run/outputs.js";
import { leaves, readCounters, type Summary, summarize } from "../run/summary.js";
import { TraceWriter } from "../run/trace.js";
import { LINK_MODES } from "../wasm/abi.js";
import { DataPlane } from "../wasm/module.js";
import { type CaptureTargets, checkLimits, DEFAULT_RUNNER, type InputBatch, type OutputSink, Runner } from "../wasm/runner.js";

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
  readonly hopLimit?: number;
  readonly copyLimit?: number;
  /** Packets per batch (default DEFAULT_RUNNER.batchPackets). */
  readonly batchPackets?: number;
  /** How long submit() holds a partial batch before running it, in ms (default 1; 0: until the frames that arrived in the same turn of the event loop are in). */
  readonly flushMs?: number;
}

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

/** Bytes a batch's data may hold before it runs (a frame longer than this runs alone). */
const BATCH_BYTES = 1 << 20;

export class Emulation {
  readonly options: EmulationOptions;
  readonly compiled: CompiledSpec;
  readonly dp: DataPlane;
  /** The tables as installed. Control work that rewrites them keeps this up to date (summary row hits read it). */
  installed: Installed;
  readonly endpoints: readonly ResolvedEndpoint[];
  readonly exits: readonly Exit[];

  readonly #runner: Runner;
  readonly #captures: EmulationCaptures;
  readonly #out: OutDir | undefined;
  readonly #trace: TraceWriter | undefined;
  readonly #sink: OutputSink | null;
  readonly #stats: InputStats[];
  readonly #listeners: ExitListener[] = [];
  readonly #control: (() => void)[] = [];
  readonly #queue: BatchQueue;
  readonly #started = process.hrtime.bigint();
  #first = 0;
  #running = false;
  #stopped: Summary | undefined;
  #timer: NodeJS.Timeout | undefined;
  #immediate: NodeJS.Immediate | undefined;

  private constructor(options: EmulationOptions, compiled: CompiledSpec, endpoints: readonly ResolvedEndpoint[]) {
    this.options = options;
    this.compiled = compiled;
    this.endpoints = endpoints;
    this.dp = DataPlane.load();
    this.installed = install(this.dp, compiled, endpoints);
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
        : OutDir.claim(options.out, { inputs: [options.spec], force: options.force === true, files: outputFiles(compiled, trace) });
    this.dp.exports.countersReset();
    this.#captures = new EmulationCaptures(this.dp, compiled, exits, options.out, (exit, data, start, len, sec, nsec) => {
      for (const f of this.#listeners) f(exit, data, start, len, sec, nsec);
    });
    this.#runner = new Runner(
      this.dp,
      {
        trace,
        maxFanout: compiled.maxFanout,
        hopLimit: options.hopLimit ?? DEFAULT_RUNNER.hopLimit,
        copyLimit: options.copyLimit ?? DEFAULT_RUNNER.copyLimit,
        slotLenMax: MAX_CAP_LEN_DEFAULT + DEFAULT_RUNNER.headroom,
        ...(options.batchPackets !== undefined ? { batchPackets: options.batchPackets } : {}),
      },
      this.#captures,
    );
    this.#trace = trace && options.out !== undefined ? new TraceWriter(join(options.out, TRACE_FILE), compiled, this.installed.entries) : undefined;
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

  /** Tells the trace (--trace) that `installed` changed (a reconciliation): rows are named by the tables in force. */
  tablesChanged(): void {
    this.#trace?.retable(this.installed.compiled, this.installed.entries);
  }

  /** What the emulation has done so far, counted by the data plane (stop() writes the final one). */
  summary(): Summary {
    if (this.#stopped !== undefined) return this.#stopped;
    return summarize(readCounters(this.dp, this.installed), this.installed, this.#stats, Number(process.hrtime.bigint() - this.#started) / 1e9);
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
    const elapsed = Number(process.hrtime.bigint() - this.#started) / 1e9;
    const summary = summarize(readCounters(this.dp, this.installed), this.installed, this.#stats, elapsed);
    this.#stopped = summary;
    if (this.options.out !== undefined && this.#out !== undefined) {
      writeFileSync(join(this.options.out, SUMMARY_FILE), `${JSON.stringify(summary, null, 2)}\n`);
      this.#out.seal();
    }
    return summary;
  }
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

/**
 * The capture buffers of an emulation: with an --out directory, those of a replay
 * (CaptureOutputs: one per captured link name and per delivering member), then one per exit.
 * An exit's records go to the listeners, and to its link's file too: a two-way external link's
 * file holds both directions, merged in timestamp order after each batch.
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
  readonly #emit: ExitListener;

  constructor(dp: DataPlane, compiled: CompiledSpec, exits: readonly Exit[], out: string | undefined, emit: ExitListener) {
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
    // At least one buffer: with none, the data plane would hand link packets to the record ring.
    this.count = Math.max(1, this.#fileCount + exits.length);
  }

  write(c: number, data: Uint8Array, start: number, len: number): void {
    if (c < this.#fileCount) {
      if (this.#shared.has(c)) this.#keep(c, data, start, len);
      else this.#files?.write(c, data, start, len);
      return;
    }
    const exit = this.#exits[c - this.#fileCount];
    if (exit === undefined) return;
    const view = new DataView(data.buffer, data.byteOffset);
    for (let r = start; r + PCAP_REC_LEN <= start + len; ) {
      const capLen = view.getUint32(r + 8, true);
      this.#emit(exit, data, r + PCAP_REC_LEN, capLen, view.getUint32(r, true), view.getUint32(r + 4, true));
      r += PCAP_REC_LEN + capLen;
    }
    const file = this.#exitFile[exit.index] ?? -1;
    if (file >= 0) this.#keep(file, data, start, len);
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
