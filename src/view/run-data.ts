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
import { describe, fates, readTrace } from "../cli/trace.js";
import { InputError } from "../errors.js";
import { MAX_SUMMARY_BYTES, readBounded } from "../read-file.js";
import { openCapture, PcapError } from "../pcap/index.js";
import { DELIVERED_DIR, LINKS_DIR } from "../engine/recordings.js";
import { TRACE_FILE } from "../engine/trace-file.js";
import { SUMMARY_FILE } from "../engine/outputs.js";
import { checkDigest, isDigests } from "../engine/digests.js";
import type { Summary } from "../engine/summary.js";
import type { TraceStep } from "../engine/trace.js";
import type { PacketRanges } from "../wasm/runner.js";
import { decodeLayers } from "./decode.js";
import type { ViewGraph } from "./graph.js";
import {
  type BytesData,
  type ByteView,
  PACKET_FIELDS,
  type RunData,
  type StepData,
  type TraceData,
} from "./page-data.js";

export interface RunOptions {
  /** The packets whose bytes the page keeps, and the flag's text for the page. */
  readonly bytes: PacketRanges;
  readonly bytesText: string;
  /** Told as the trace is read: its bytes read so far, of its size. */
  readonly progress?: (done: number, total: number) => void;
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
    rows: summary.rows.map((r) => ({ member: r.member, table: r.table, row: r.row, rule: r.rule, hits: r.hits })),
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

interface Names {
  readonly links: ReadonlyMap<string, { readonly design: string }>;
  /** "network.key" → its node id and its network's design. */
  readonly members: ReadonlyMap<string, { readonly node: string; readonly design: string }>;
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
  const steps: StepData[] = [];
  const stepIds = new Map<string, number>();
  const pathIds = new Map<string, number>();
  const pathSteps: number[] = [];
  const pathStarts: number[] = [0];
  const endpoints: string[] = [];
  const endpointIds = new Map<string, number>();
  const fateTexts: string[] = [];
  const fateIds = new Map<string, number>();
  const fateSets: number[][] = [];
  const fateSetIds = new Map<string, number>();
  const fields: number[] = [];
  const seconds: number[] = [];
  const cut: Record<string, number> = {};
  // Bytes: how many records each capture has had so far, and the ones the packets asked for need.
  const records = new Map<string, number>();
  const wanted: WantedPacket[] = [];
  const intern = <T>(ids: Map<string, number>, list: T[], key: string, make: () => T): number => {
    let id = ids.get(key);
    if (id === undefined) {
      id = list.push(make()) - 1;
      ids.set(key, id);
    }
    return id;
  };
  const other = anotherDescription(summary.spec);
  const size = options.progress === undefined ? 0 : statSync(file).size;
  let read = 0;
  let n = 0;
  for await (const { text, line } of readTrace(file)) {
    n++;
    read += text.length + 1;
    if (n % PROGRESS_EVERY === 0) options.progress?.(read, size);
    const ids = line.steps.map((s) =>
      intern(stepIds, steps, JSON.stringify(s), () => stepData(s, names, file, n, other)),
    );
    let path = pathIds.get(ids.join(","));
    if (path === undefined) {
      path = pathStarts.length - 1;
      pathIds.set(ids.join(","), path);
      for (const id of ids) pathSteps.push(id);
      pathStarts.push(pathSteps.length);
    }
    const endpoint = intern(endpointIds, endpoints, line.endpoint, () => line.endpoint);
    const ends = fates(line.steps).map((f) => intern(fateIds, fateTexts, f, () => f));
    const fateSet = intern(fateSetIds, fateSets, ends.join(","), () => ends);
    const ns = BigInt(line.tsNs);
    fields.push(line.packet, endpoint, path, line.len, fateSet, Number(ns % 1_000_000_000n));
    seconds.push(Number(ns / 1_000_000_000n));
    if (line.cut !== undefined) cut[String(line.packet)] = line.cut;
    const keep = inRanges(options.bytes, line.packet)
      ? { packet: line.packet, steps: line.steps, records: [] as (Capture | undefined)[] }
      : undefined;
    for (const s of line.steps) {
      const capture =
        s.step === "link" && typeof s["link"] === "string"
          ? `${LINKS_DIR}/${s["link"]}`
          : s.step === "deliver" && typeof s["member"] === "string"
            ? `${DELIVERED_DIR}/${s["member"]}`
            : undefined;
      if (capture === undefined) {
        keep?.records.push(undefined);
        continue;
      }
      const index = records.get(capture) ?? 0;
      records.set(capture, index + 1);
      keep?.records.push({ file: capture, index });
    }
    if (keep !== undefined) wanted.push(keep);
  }
  const count = fields.length / PACKET_FIELDS.length;
  const wide = steps.length > 0xffff;
  const bytes =
    wanted.length === 0 ? undefined : readBytes(dir, summary, names, records, wanted, options.bytesText, notes);
  if (count === 0) notes.push(`${file} holds no packet.`);
  return {
    count,
    packets: base64(Uint32Array.from(fields)),
    seconds: base64(Float64Array.from(seconds)),
    endpoints,
    fates: fateTexts,
    fateSets,
    steps,
    paths: base64(wide ? Uint32Array.from(pathSteps) : Uint16Array.from(pathSteps)),
    wide,
    pathStarts: base64(Uint32Array.from(pathStarts)),
    cut,
    ...(bytes !== undefined ? { bytes } : {}),
  };
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

/** A record of a capture: links/<capture> or delivered/<member> (without .pcap), and its index in the file. */
interface Capture {
  readonly file: string;
  readonly index: number;
}

interface WantedPacket {
  readonly packet: number;
  readonly steps: readonly TraceStep[];
  /** Per step: the record it made, for link and deliver steps. */
  readonly records: (Capture | undefined)[];
}

/**
 * The bytes of the wanted packets' steps: each link and deliver step's record, decoded as its
 * network's design; each push the header at the front of the copy's next record, each pop the
 * header at the front of what the copy holds, as the member's design.
 */
function readBytes(
  dir: string,
  summary: Summary,
  names: Names,
  seen: ReadonlyMap<string, number>,
  wanted: readonly WantedPacket[],
  text: string,
  notes: string[],
): BytesData {
  // Captures whose records are the trace's steps one for one; the others' bytes are not shown.
  const usable = new Set<string>();
  for (const [capture, steps] of seen) {
    const [sub, name] = splitCapture(capture);
    const counted = sub === LINKS_DIR ? summary.links[name]?.packets : summary.delivered[name]?.packets;
    const file = join(dir, `${capture}.pcap`);
    if (counted !== steps)
      notes.push(
        `Bytes at ${name} are not shown: the trace has ${steps} of its ${counted ?? 0} packets ` +
          "(a run with --trace-packets, or a trace line cut short), " +
          "so its capture's records cannot be matched to them.",
      );
    else if (!existsSync(file))
      notes.push(
        `Bytes at ${name} are not shown: ${file} is missing` +
          `${sub === LINKS_DIR ? " (a link written record: false is not recorded)" : ""}.`,
      );
    else usable.add(capture);
  }
  const need = new Map<string, Set<number>>();
  for (const w of wanted)
    for (const r of w.records)
      if (r !== undefined && usable.has(r.file))
        (need.get(r.file) ?? need.set(r.file, new Set()).get(r.file))?.add(r.index);
  // Before a record is shown: each capture read must be the one the run wrote.
  for (const capture of need.keys()) checkDigest(dir, `${capture}.pcap`, summary.crc32);
  const got = readRecords(dir, need, notes);

  const recordHex: string[] = [];
  const recordIds = new Map<string, number>();
  const views: ByteView[] = [];
  const viewIds = new Map<string, number>();
  const recordOf = (c: Capture | undefined): { id: number; bytes: Uint8Array } | undefined => {
    const bytes = c === undefined ? undefined : got.get(c.file)?.get(c.index);
    if (bytes === undefined) return undefined;
    const hex = Buffer.from(bytes).toString("hex");
    let id = recordIds.get(hex);
    if (id === undefined) {
      id = recordHex.push(hex) - 1;
      recordIds.set(hex, id);
    }
    return { id, bytes };
  };
  const view = (
    record: { id: number; bytes: Uint8Array },
    at: number,
    design: string,
    what: string,
    only: boolean,
  ): number => {
    const key = `${record.id}:${at}:${design}:${what}:${only}`;
    let id = viewIds.get(key);
    if (id === undefined) {
      const layers = decodeLayers(record.bytes, design, at).map((l) => ({
        design: l.design,
        at: l.at,
        len: l.len,
        fields: l.fields,
      }));
      id = views.push({ record: record.id, at, what, only, layers }) - 1;
      viewIds.set(key, id);
    }
    return id;
  };
  const steps: Record<string, number[]> = {};
  for (const w of wanted) {
    // What each copy holds now: a record, and how many of its bytes pops have taken off.
    const holds = new Map<number, { record: { id: number; bytes: Uint8Array }; at: number }>();
    steps[String(w.packet)] = w.steps.map((s, k) => {
      const member = typeof s["member"] === "string" ? names.members.get(s["member"]) : undefined;
      switch (s.step) {
        case "link":
        case "deliver": {
          const record = recordOf(w.records[k]);
          if (record === undefined) {
            holds.delete(s.copy);
            return -1;
          }
          holds.set(s.copy, { record, at: 0 });
          const link = typeof s["link"] === "string" ? s["link"] : "";
          const design = s.step === "link" ? names.links.get(link)?.design : member?.design;
          return design === undefined
            ? -1
            : view(record, 0, design, s.step === "link" ? `crossed ${link}` : `delivered to ${s["member"]}`, false);
        }
        case "fork": {
          const from = holds.get(Number(s["from"]));
          if (from !== undefined) holds.set(s.copy, { ...from });
          return -1;
        }
        case "pop": {
          const held = holds.get(s.copy);
          if (held === undefined || member === undefined) return -1;
          const id = view(held.record, held.at, member.design, `popped by ${s["member"]}`, true);
          held.at += Number(s["bytes"]);
          return id;
        }
        case "push": {
          // The header pushed leads the copy's next record.
          const next = w.steps.findIndex((t, j) => j > k && t.copy === s.copy && t.step === "link");
          const record = next < 0 ? undefined : recordOf(w.records[next]);
          return record === undefined || member === undefined
            ? -1
            : view(record, 0, member.design, `pushed by ${s["member"]}`, true);
        }
        default:
          return -1;
      }
    });
  }
  return { packets: text, records: recordHex, views, steps };
}

function splitCapture(capture: string): [string, string] {
  const slash = capture.indexOf("/");
  return [capture.slice(0, slash), capture.slice(slash + 1)];
}

/** The records asked for, by capture and index: each capture read from its start to the last one needed. */
function readRecords(
  dir: string,
  need: ReadonlyMap<string, ReadonlySet<number>>,
  notes: string[],
): Map<string, Map<number, Uint8Array>> {
  const out = new Map<string, Map<number, Uint8Array>>();
  for (const [capture, indexes] of need) {
    const file = join(dir, `${capture}.pcap`);
    // Not Math.max(...indexes): a capture can be asked for more records than a call takes arguments.
    let last = 0;
    for (const i of indexes) last = Math.max(last, i);
    const records = new Map<number, Uint8Array>();
    out.set(capture, records);
    let reader;
    try {
      reader = openCapture(file);
    } catch (err) {
      notes.push(
        `Bytes at ${splitCapture(capture)[1]} are not shown: ${err instanceof Error ? err.message : String(err)}.`,
      );
      continue;
    }
    try {
      batches: for (const b of reader.batches()) {
        for (let i = 0; i < b.count; i++) {
          const index = b.firstIndex + i;
          if (index > last) break batches;
          const at = b.offset[i] ?? 0;
          if (indexes.has(index)) records.set(index, b.data.slice(at, at + (b.capLen[i] ?? 0)));
        }
      }
    } catch (err) {
      if (!(err instanceof PcapError)) throw err;
      notes.push(`Bytes at ${splitCapture(capture)[1]} stop at record ${records.size}: ${err.message}.`);
    } finally {
      reader.close();
    }
  }
  return out;
}
