// A replay's outputs as the page shows them, read from the files `strata trace` reads —
// DIR/summary.json, DIR/trace.jsonl — and the captures the replay wrote: counts per link and
// member, every packet's steps (with the very lines `strata trace --packet N` prints), and
// for the packets asked for, the bytes at each hop, decoded.
//
// A link's capture holds its packets in the trace's order (docs/cli.md, strata run), so the
// k-th `link` step on a link in the trace is the k-th record of its capture, and the same
// for `deliver` steps and a member's delivered/ capture. That holds when the trace has every
// packet that crossed the link: the number of its steps must equal summary.json's count for
// the link, or its bytes are not shown (a run with --trace-packets, a trace line cut short).

import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import type { CompiledSpec, CompiledTable } from "../control/compiled.js";
import { originText, rowOrigin } from "../intents/provenance.js";
import { readTrace } from "../trace/read.js";
import { describe, fates } from "../trace/words.js";
import { InputError } from "../errors.js";
import { MAX_SUMMARY_BYTES, readBounded } from "../read-file.js";
import { TRACE_FILE } from "../engine/trace-file.js";
import { SUMMARY_FILE } from "../engine/outputs.js";
import { checkDigest, isDigests } from "../engine/digests.js";
import type { Summary } from "../engine/summary.js";
import type { TraceLine, TraceStep } from "../engine/trace.js";
import type { PacketRanges } from "../wasm/runner.js";
import type { ViewGraph } from "./graph.js";
import { type Capture, countRecords, type Names, readBytes, type WantedPacket } from "./run-bytes.js";
import { PACKET_FIELDS, type RunData, type StepData, type TraceData } from "./page-data.js";

export interface RunOptions {
  /** The packets whose bytes the page keeps, and the flag's text for the page. */
  readonly bytes: PacketRanges;
  readonly bytesText: string;
  /** Told as the trace is read: its bytes read so far, of its size. */
  readonly progress?: (done: number, total: number) => void;
  /** Where a row summary.json names came from (rowOrigins), shown beside it. */
  readonly origin?: (member: string, table: string, row: number | "default") => string | undefined;
}

/** Where each row of the description's tables came from, as `strata check --rows` says it, by member and table. */
export function rowOrigins(compiled: CompiledSpec): NonNullable<RunOptions["origin"]> {
  const members = new Map(compiled.members.map((m) => [m.qualified, m]));
  return (member, table, row) => {
    const t = (members.get(member)?.tables as Record<string, CompiledTable | undefined> | undefined)?.[table];
    return t === undefined ? undefined : originText(rowOrigin(t, row === "default" ? -1 : row));
  };
}

const NOT_A_RUN = "give the output directory of `strata run` (--out DIR)";

/** The fix when a run's files name a member or link the description lacks. */
function anotherDescription(spec: string): string {
  return (
    "the run was made with another description: " +
    `view it with the one \`strata run\` was given (summary.json says ${spec})`
  );
}

export async function readRun(dir: string, graph: ViewGraph, options: RunOptions): Promise<RunData> {
  const summaryFile = join(dir, SUMMARY_FILE);
  const summary = readSummary(summaryFile);
  const names = namesOf(graph);
  const other = anotherDescription(summary.spec);
  for (const link of Object.keys(summary.links))
    if (!names.links.has(link)) throw new InputError(summaryFile, `links`, `no link ${link} in ${graph.file}`, other);
  for (const member of Object.keys(summary.members)) {
    if (member !== OUTSIDE && !names.members.has(member))
      throw new InputError(summaryFile, `members`, `no member ${member} in ${graph.file}`, other);
  }
  const notes: string[] = [];
  const traceFile = join(dir, TRACE_FILE);
  let trace: TraceData | undefined;
  checkDigest(dir, TRACE_FILE, summary.crc32);
  if (existsSync(traceFile)) trace = await readTraceData(dir, traceFile, summary, names, options, notes);
  else notes.push(`${dir} has no trace: replay with \`strata run … --trace\` to browse its packets here.`);
  return {
    dir,
    packets: summary.packets,
    links: Object.fromEntries(
      Object.entries(summary.links).map(([k, v]) => [k, { packets: v.packets, bytes: v.bytes }]),
    ),
    members: Object.fromEntries(
      Object.entries(summary.members).map(([k, v]) => [
        k,
        { delivered: v.delivered, drops: v.drops as Record<string, number> },
      ]),
    ),
    rows: summary.rows.map((r) => {
      const origin = options.origin?.(r.member, r.table, r.row);
      return {
        member: r.member,
        table: r.table,
        row: r.row,
        rule: r.rule,
        hits: r.hits,
        ...(origin ? { origin } : {}),
      };
    }),
    ...(trace !== undefined ? { trace } : {}),
    notes,
  };
}

/** summary.json's name for drops before any member held the packet (src/engine/summary.ts). */
const OUTSIDE = "(outside)";

/** The parts of summary.json the page uses, checked: a file cut or edited by hand is bad input, not a crash. */
function readSummary(file: string): Summary {
  const text = readBounded(file, MAX_SUMMARY_BYTES, { what: "it", noun: "run's summary", fix: NOT_A_RUN }).toString();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InputError(file, "", "not JSON", "the file was cut or edited; replay again");
  }
  const isRecord = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !Array.isArray(v);
  const count = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) >= 0;
  const bad = (where: string, what: string): InputError =>
    new InputError(file, where, `${where} must be ${what}`, "the file was cut or edited; replay again");
  if (!isRecord(value)) throw bad("the file", "an object, as strata run writes it");
  if (typeof value["spec"] !== "string") throw bad("spec", "the description's file name");
  const packets = value["packets"];
  if (!isRecord(packets) || !["injected", "copies", "delivered", "dropped", "exited"].every((k) => count(packets[k])))
    throw bad("packets", "counts of packets injected, copies, delivered, dropped, exited");
  const links = value["links"];
  if (!isRecord(links) || !Object.values(links).every((l) => isRecord(l) && count(l["packets"]) && count(l["bytes"])))
    throw bad("links", "packets and bytes per link");
  const members = value["members"];
  if (
    !isRecord(members) ||
    !Object.values(members).every(
      (m) => isRecord(m) && count(m["delivered"]) && isRecord(m["drops"]) && Object.values(m["drops"]).every(count),
    )
  ) {
    throw bad("members", "deliveries and drops per member");
  }
  const delivered = value["delivered"];
  if (!isRecord(delivered) || !Object.values(delivered).every((d) => isRecord(d) && count(d["packets"])))
    throw bad("delivered", "packets per member");
  const rows = value["rows"];
  if (
    !Array.isArray(rows) ||
    !rows.every(
      (r) => isRecord(r) && typeof r["member"] === "string" && typeof r["rule"] === "string" && count(r["hits"]),
    )
  )
    throw bad("rows", "a list of rows with their hits");
  if (value["crc32"] !== undefined && !isDigests(value["crc32"]))
    throw bad("crc32", "the CRC-32 of each file the run wrote");
  return value as unknown as Summary;
}

function namesOf(graph: ViewGraph): Names {
  const design = (network: number): string => graph.networks[network]?.design ?? "";
  return {
    links: new Map(graph.links.map((l) => [l.qualified, { design: design(l.network) }])),
    members: new Map(
      graph.nodes.flatMap((n) =>
        n.member === undefined ? [] : [[n.member, { node: n.id, design: design(n.network) }] as const],
      ),
    ),
  };
}

/** Trace lines between two calls of RunOptions.progress. */
const PROGRESS_EVERY = 4096;

/** Keys of a step whose value names a member: where the step is. */
const MEMBER_KEYS = ["member", "from", "to"] as const;

async function readTraceData(
  dir: string,
  file: string,
  summary: Summary,
  names: Names,
  options: RunOptions,
  notes: string[],
): Promise<TraceData> {
  const columns = new TraceColumns(names, file, anotherDescription(summary.spec));
  // Bytes: how many records each capture has had so far, and the ones the packets asked for need.
  const records = new Map<string, number>();
  const wanted: WantedPacket[] = [];
  const size = options.progress === undefined ? 0 : statSync(file).size;
  let read = 0;
  let n = 0;
  for await (const { text, line } of readTrace(file)) {
    n++;
    read += text.length + 1;
    if (n % PROGRESS_EVERY === 0) options.progress?.(read, size);
    columns.add(line, n);
    if (inRanges(options.bytes, line.packet)) {
      const keep = { packet: line.packet, steps: line.steps, records: [] as (Capture | undefined)[] };
      countRecords(line.steps, records, keep.records);
      wanted.push(keep);
    } else countRecords(line.steps, records);
  }
  const data = columns.data();
  const bytes =
    wanted.length === 0 ? undefined : readBytes(dir, summary, names, records, wanted, options.bytesText, notes);
  if (data.count === 0) notes.push(`${file} holds no packet.`);
  return { ...data, ...(bytes !== undefined ? { bytes } : {}) };
}

/** The trace's packets as the page holds them: each step, path, endpoint and set of fates once, by number, and the
 * packets as columns of numbers (PACKET_FIELDS). */
class TraceColumns {
  readonly #steps: StepData[] = [];
  readonly #stepIds = new Map<string, number>();
  readonly #pathIds = new Map<string, number>();
  readonly #pathSteps: number[] = [];
  readonly #pathStarts: number[] = [0];
  readonly #endpoints: string[] = [];
  readonly #endpointIds = new Map<string, number>();
  readonly #fateTexts: string[] = [];
  readonly #fateIds = new Map<string, number>();
  readonly #fateSets: number[][] = [];
  readonly #fateSetIds = new Map<string, number>();
  readonly #fields: number[] = [];
  readonly #seconds: number[] = [];
  readonly #cut: Record<string, number> = {};
  readonly #names: Names;
  readonly #file: string;
  /** The fix when the trace names a member or link the description lacks. */
  readonly #other: string;

  constructor(names: Names, file: string, other: string) {
    this.#names = names;
    this.#file = file;
    this.#other = other;
  }

  /** Adds the packet of the trace's line `n`. */
  add(line: TraceLine, n: number): void {
    const ids = line.steps.map((s) =>
      intern(this.#stepIds, this.#steps, JSON.stringify(s), () => stepData(s, this.#names, this.#file, n, this.#other)),
    );
    let path = this.#pathIds.get(ids.join(","));
    if (path === undefined) {
      path = this.#pathStarts.length - 1;
      this.#pathIds.set(ids.join(","), path);
      for (const id of ids) this.#pathSteps.push(id);
      this.#pathStarts.push(this.#pathSteps.length);
    }
    const endpoint = intern(this.#endpointIds, this.#endpoints, line.endpoint, () => line.endpoint);
    const ends = fates(line.steps).map((f) => intern(this.#fateIds, this.#fateTexts, f, () => f));
    const fateSet = intern(this.#fateSetIds, this.#fateSets, ends.join(","), () => ends);
    const ns = BigInt(line.tsNs);
    this.#fields.push(line.packet, endpoint, path, line.len, fateSet, Number(ns % 1_000_000_000n));
    this.#seconds.push(Number(ns / 1_000_000_000n));
    if (line.cut !== undefined) this.#cut[String(line.packet)] = line.cut;
  }

  data(): Omit<TraceData, "bytes"> {
    const wide = this.#steps.length > 0xffff;
    return {
      count: this.#fields.length / PACKET_FIELDS.length,
      packets: base64(Uint32Array.from(this.#fields)),
      seconds: base64(Float64Array.from(this.#seconds)),
      endpoints: this.#endpoints,
      fates: this.#fateTexts,
      fateSets: this.#fateSets,
      steps: this.#steps,
      paths: base64(wide ? Uint32Array.from(this.#pathSteps) : Uint16Array.from(this.#pathSteps)),
      wide,
      pathStarts: base64(Uint32Array.from(this.#pathStarts)),
      cut: this.#cut,
    };
  }
}

/** The number `key` has in `list`, made and added the first time. */
function intern<T>(ids: Map<string, number>, list: T[], key: string, make: () => T): number {
  let id = ids.get(key);
  if (id === undefined) {
    id = list.push(make()) - 1;
    ids.set(key, id);
  }
  return id;
}

/** A step for the page: its line as `strata trace` prints it, and the nodes and link it is at. */
function stepData(s: TraceStep, names: Names, file: string, line: number, other: string): StepData {
  const nodes: string[] = [];
  for (const key of MEMBER_KEYS) {
    const v = s[key];
    if (typeof v !== "string" || (key === "to" && s.step !== "handoff")) continue;
    const member = names.members.get(v);
    if (member === undefined) throw new InputError(file, `line ${line}`, `no member ${v} in the description`, other);
    if (!nodes.includes(member.node)) nodes.push(member.node);
  }
  const link = s.step === "link" || s.step === "exit" ? s["link"] : undefined;
  if (typeof link === "string" && !names.links.has(link))
    throw new InputError(file, `line ${line}`, `no link ${link} in the description`, other);
  return { copy: s.copy, step: s.step, text: describe(s), nodes, ...(typeof link === "string" ? { link } : {}) };
}

function inRanges(ranges: PacketRanges, packet: number): boolean {
  return ranges.some(([first, last]) => packet >= first && packet <= last);
}

function base64(a: Uint16Array | Uint32Array | Float64Array): string {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString("base64");
}
