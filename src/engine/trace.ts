// The hop-by-hop trace: the data plane's events, grouped per input packet and
// named in the description's words, one JSON line per packet in trace.jsonl.

import type { CompiledSpec, CompiledTable } from "../control/compiled.js";
import { ACTIONS, DROP_REASONS, LINK_NONE, LINK_SELF, LINK_SHARED, STAGES, TRACE_KINDS } from "../wasm/abi.js";
import type { InputBatch, TraceEvent } from "../wasm/runner.js";
import { tsNs } from "../pcap/index.js";
import { excerpt } from "../errors.js";
import { fail, ok, type Result } from "../description/notation.js";
import type { TraceLines } from "./trace-file.js";
import { intentText } from "../intents/provenance.js";

/** One step of a packet's path, as written to trace.jsonl. */
export interface TraceStep {
  readonly copy: number;
  readonly step: string;
  readonly [detail: string]: string | number | null;
}

export interface TraceLine {
  readonly packet: number;
  readonly endpoint: string;
  readonly tsNs: string;
  readonly len: number;
  readonly steps: TraceStep[];
  /** Steps left out: the line reached TRACE_LINE_MAX. */
  readonly cut?: number;
}

/** How a step's detail is written: a name or null, a text, a count, a link identifier (a number, "self" or null),
 * a row. */
type Detail = "name" | "text" | "count" | "ident" | "row";

const LOOKUP = { member: "name", row: "row", rule: "name", action: "text" } as const;

/** The details of each kind of step, as TraceWriter writes them (and `strata trace` reads them). */
const STEP_DETAILS: Readonly<Record<string, Readonly<Record<string, Detail>>>> = {
  inject: { member: "name", at: "name" },
  link: { link: "name", from: "name", hops: "count" },
  exit: { link: "name" },
  fork: { from: "count", member: "name", at: "text", to: "ident" },
  deliver: { member: "name" },
  drop: { member: "name", stage: "text", reason: "text" },
  acquire: { ...LOOKUP, in: "ident" },
  forward: { ...LOOKUP, in: "ident" },
  transmit: { ...LOOKUP, out: "ident" },
  receive: { ...LOOKUP, in: "ident" },
  send: { ...LOOKUP, session: "ident" },
  push: { member: "name", machine: "name", session: "count", bytes: "count" },
  pop: { member: "name", machine: "name", to: "ident", bytes: "count" },
  handoff: { from: "name", to: "name", machine: "name", at: "text", session: "ident", in: "ident" },
};

/** A lookup's `intent`: the intent that made the row it hit, when one did (written only then). */
function intentOf(table: CompiledTable | undefined, row: number | undefined): { intent?: string } {
  const text = table === undefined || row === undefined ? undefined : intentText(table, row);
  return text === undefined ? {} : { intent: text };
}

const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

const DETAIL_IS: Readonly<Record<Detail, { readonly test: (v: unknown) => boolean; readonly what: string }>> = {
  name: { test: (v) => v === null || typeof v === "string", what: "a name or null" },
  text: { test: (v) => typeof v === "string", what: "a string" },
  count: { test: isCount, what: "a whole number, 0 or more" },
  ident: { test: (v) => v === null || typeof v === "string" || isCount(v), what: "a link identifier, a name or null" },
  row: { test: (v) => v === null || v === "default" || isCount(v), what: 'a row number, "default" or null' },
};

/**
 * A trace line read back (JSON.parse'd) as a TraceLine, or what is wrong with it:
 * the file may have been cut or edited by hand, and nothing below trusts a cast.
 */
export function checkTraceLine(value: unknown): Result<TraceLine> {
  const got = (v: unknown): string => excerpt(JSON.stringify(v) ?? String(v));
  if (!isObject(value))
    return fail(
      `${got(value)} is not a trace line: a line is an object {"packet", "endpoint", "tsNs", "len", "steps"}`,
    );
  const top: [string, (v: unknown) => boolean, string][] = [
    ["packet", isCount, "a packet number, 0 or more"],
    ["endpoint", (v) => typeof v === "string", "a string"],
    ["tsNs", (v) => typeof v === "string" && /^\d{1,30}$/.test(v), "nanoseconds as a string of digits"],
    ["len", isCount, "a length in bytes"],
    ["steps", Array.isArray, "a list of steps"],
  ];
  for (const [key, test, what] of top) {
    if (!Object.hasOwn(value, key)) return fail(`missing key '${key}'`);
    if (!test(value[key])) return fail(`${key} must be ${what}, got ${got(value[key])}`);
  }
  if (Object.hasOwn(value, "cut") && !isCount(value["cut"]))
    return fail(`cut must be a count of steps, got ${got(value["cut"])}`);
  for (const [i, step] of (value["steps"] as unknown[]).entries()) {
    const at = `steps[${i}]`;
    if (!isObject(step)) return fail(`${at} must be an object {"copy", "step", …}, got ${got(step)}`);
    if (!isCount(step["copy"])) return fail(`${at}.copy must be a copy number, 0 or more, got ${got(step["copy"])}`);
    const details = typeof step["step"] === "string" ? STEP_DETAILS[step["step"]] : undefined;
    if (details === undefined)
      return fail(`${at}.step must be one of ${Object.keys(STEP_DETAILS).join(", ")}, got ${got(step["step"])}`);
    for (const [key, kind] of Object.entries(details)) {
      if (!Object.hasOwn(step, key)) return fail(`${at} (${step["step"]}) is missing key '${key}'`);
      if (!DETAIL_IS[kind].test(step[key]))
        return fail(`${at}.${key} must be ${DETAIL_IS[kind].what}, got ${got(step[key])}`);
    }
    if (Object.hasOwn(step, "intent") && typeof step["intent"] !== "string")
      return fail(`${at}.intent must be a string, got ${got(step["intent"])}`);
  }
  return ok(value as unknown as TraceLine);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The most bytes of a trace line, its "\n" not counted: `strata trace` reads no longer one, and
 * TraceWriter writes none — a packet whose steps would pass it keeps the first ones and counts
 * the others in the line's "cut".
 */
export const TRACE_LINE_MAX = 64 << 20;

/** A trace larger than this gets a line after the run saying so, and what --trace-packets would save. */
export const TRACE_LARGE_BYTES = 100e6;

/** Room kept at a line's end for `,"cut":N}` and its "\n". */
const LINE_END_ROOM = 32;
/** Steps of a line between two measures of its length. */
const MEASURE_EVERY = 4096;

/** A line being written: cut is added (last) when steps are left out. */
type OpenLine = { -readonly [K in keyof TraceLine]: TraceLine[K] };

export class TraceWriter {
  readonly #out: TraceLines;
  readonly #compiled: CompiledSpec;
  #tables: ReadonlyMap<number, CompiledTable>;
  /** Entry index → compiled row index, by table id. */
  #rows: ReadonlyMap<number, ReadonlyMap<number, number>>;
  #line: OpenLine | undefined;
  /** The data plane's number for the packet of #line. */
  #linePacket = 0;
  /** Steps of #line measured, and their length with the head's (−1: none measured yet). */
  #measured = 0;
  #chars = -1;
  // The batch being run: its first packet number, the packets' lengths, times and endpoints.
  #first = 0;
  #batch: InputBatch | undefined;
  #numbers: Uint32Array | undefined;
  #endpoints: readonly string[] = [];
  /** The most bytes of a line (TRACE_LINE_MAX; tests ask for less). */
  readonly #lineMax: number;
  lines = 0;

  /** Hands each line to `out`: a TraceFile (trace.jsonl and trace.idx), or a worker thread's chunk
   * (src/run/chunk-runner.ts). */
  constructor(
    out: TraceLines,
    compiled: CompiledSpec,
    entries: ReadonlyMap<number, readonly number[]>,
    lineMax = TRACE_LINE_MAX,
  ) {
    this.#lineMax = lineMax;
    this.#out = out;
    this.#compiled = compiled;
    this.#tables = new Map(compiled.tables.map((t) => [t.id, t]));
    this.#rows = new Map([...entries].map(([id, list]) => [id, new Map(list.map((entry, row) => [entry, row]))]));
  }

  /** Names rows by the tables installed now (after an update changed them, src/run/updates.ts). */
  retable(compiled: CompiledSpec, entries: ReadonlyMap<number, readonly number[]>): void {
    this.#tables = new Map(compiled.tables.map((t) => [t.id, t]));
    this.#rows = new Map([...entries].map(([id, list]) => [id, new Map(list.map((entry, row) => [entry, row]))]));
  }

  /**
   * The batch whose events come next; `endpoints` names each injection point.
   * `numbers`, when given, holds each packet's number in the replay (the data plane numbered the batch from `first`).
   */
  startBatch(first: number, batch: InputBatch, endpoints: readonly string[], numbers?: Uint32Array): void {
    this.#first = first;
    this.#batch = batch;
    this.#numbers = numbers;
    this.#endpoints = endpoints;
  }

  /** Ends the line being written: the next event starts a new one. */
  endLine(): void {
    this.#finish();
  }

  event(e: TraceEvent): void {
    if (this.#line === undefined || this.#linePacket !== e.packet) this.#open(e.packet);
    const line = this.#line as OpenLine;
    if (line.cut !== undefined) {
      line.cut++;
      return;
    }
    const step = this.#step(e);
    if (step === undefined) return;
    line.steps.push(step);
    if (line.steps.length - this.#measured >= MEASURE_EVERY) this.#measure(line);
  }

  #open(packet: number): void {
    this.#finish();
    const b = this.#batch;
    const i = packet - this.#first;
    this.#linePacket = packet;
    const ep = b === undefined ? 0 : typeof b.endpoint === "number" ? b.endpoint : (b.endpoint[i] ?? 0);
    this.#line = {
      packet: this.#numbers === undefined ? packet : (this.#numbers[i] ?? packet),
      endpoint: this.#endpoints[ep] ?? "",
      tsNs: b === undefined ? "0" : tsNs(b.tsSec[i] ?? 0, b.tsNsec[i] ?? 0).toString(),
      len: b?.capLen[i] ?? 0,
      steps: [],
    };
    this.#measured = 0;
    this.#chars = -1;
  }

  /**
   * Adds the steps not measured yet to the line's length, in characters; the steps from the
   * one that passes lineMax on are left out. (Most lines are never measured: a line of fewer
   * than MEASURE_EVERY steps is only checked once written, in #finish.)
   */
  #measure(line: OpenLine): void {
    const steps = line.steps;
    if (this.#chars < 0) this.#chars = JSON.stringify({ ...line, steps: [] }).length + LINE_END_ROOM;
    for (let k = this.#measured; k < steps.length; k++) {
      this.#chars += JSON.stringify(steps[k]).length + 1;
      if (this.#chars > this.#lineMax) {
        line.cut = (line.cut ?? 0) + steps.length - k;
        steps.length = k;
        break;
      }
    }
    this.#measured = steps.length;
  }

  #finish(): void {
    const line = this.#line;
    if (line === undefined) return;
    this.#line = undefined;
    let text = `${JSON.stringify(line)}\n`;
    let bytes = Buffer.byteLength(text);
    if (bytes > this.#lineMax + 1) {
      // Steps since the last measure, or names whose characters take more than a byte each.
      this.#measure(line);
      for (;;) {
        text = `${JSON.stringify(line)}\n`;
        bytes = Buffer.byteLength(text);
        if (bytes <= this.#lineMax + 1 || line.steps.length === 0) break;
        const n = Math.max(1, line.steps.length >> 4);
        line.steps.length -= n;
        line.cut = (line.cut ?? 0) + n;
      }
    }
    this.lines++;
    this.#out.line(line.packet, text, bytes);
  }

  /** Ends the last line and closes what the lines go to. */
  close(): void {
    this.#finish();
    this.#out.close?.();
  }

  #member(i: number): string | null {
    return i < 0 ? null : (this.#compiled.members[i]?.qualified ?? null);
  }

  #machine(i: number): string | null {
    const m = this.#compiled.members[i];
    return m === undefined ? null : (this.#compiled.machines[m.machine] ?? null);
  }

  #ident(p: number): number | string | null {
    return p === LINK_SELF ? "self" : p === LINK_SHARED ? "shared" : p === LINK_NONE ? null : p;
  }

  #step(e: TraceEvent): TraceStep | undefined {
    const kind = TRACE_KINDS[e.kind];
    const stage = STAGES[e.stage] ?? "done";
    const copy = e.copy;
    const member = this.#member(e.member);
    const link = (i: number): string | null => (i < 0 ? null : (this.#compiled.links[i]?.qualified ?? null));
    switch (kind) {
      case "inject":
        return {
          copy,
          step: "inject",
          member,
          at: stage === "link" ? link(e.link) : stage === "send" ? "send" : "self",
        };
      case "link":
        return { copy, step: "link", link: link(e.link), from: member, hops: e.arg };
      case "exit":
        return { copy, step: "exit", link: link(e.link) };
      case "fork":
        // A copy made at a link goes to a receiver; at forward, to an out-link; at acquire, to receive.
        return {
          copy,
          step: "fork",
          from: e.arg,
          member,
          at: stage,
          to: stage === "link" ? this.#member(e.member) : stage === "acquire" ? "receive" : this.#ident(e.ident),
        };
      case "deliver":
        return { copy, step: "deliver", member };
      case "push":
        return { copy, step: "push", member, machine: this.#machine(e.member), session: e.ident, bytes: e.arg };
      case "pop":
        return { copy, step: "pop", member, machine: this.#machine(e.member), to: e.ident, bytes: e.arg };
      case "handoff":
        // Between networks on one machine: ExternalSession (to a send table), SharedAcquire, SharedForward.
        return {
          copy,
          step: "handoff",
          from: member,
          to: this.#member(e.arg),
          machine: this.#machine(e.member),
          at: stage,
          session: stage === "send" ? e.ident : null,
          in: stage === "send" ? null : this.#ident(e.ident),
        };
      case "drop":
        return { copy, step: "drop", member, stage, reason: DROP_REASONS[e.reason] ?? "none" };
      case "lookup": {
        const table = this.#tables.get(e.arg);
        const rowIndex = e.row < 0 ? -1 : (this.#rows.get(e.arg)?.get(e.row) ?? -1);
        const row = table?.rows[rowIndex];
        const key = stage === "transmit" ? "out" : stage === "send" ? "session" : "in";
        return {
          copy,
          step: stage,
          member,
          [key]: stage === "send" ? e.ident : this.#ident(e.ident),
          row: row === undefined ? null : row.row < 0 ? "default" : row.row,
          rule: row?.text ?? null,
          action: e.row < 0 ? "miss" : (ACTIONS[e.action] ?? "none"),
          ...intentOf(table, row?.row),
        };
      }
      default:
        return undefined;
    }
  }
}
