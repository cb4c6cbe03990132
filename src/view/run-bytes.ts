// The bytes of the packets a page shows hop by hop (strata view --bytes): which record of which
// capture each link and deliver step made — a link's capture holds its packets in the trace's
// order (./run-data.ts) — read from the captures the run wrote and decoded per design.

import { existsSync } from "node:fs";
import { join } from "node:path";
import { checkDigest } from "../engine/digests.js";
import { DELIVERED_DIR, LINKS_DIR } from "../engine/recordings.js";
import type { Summary } from "../engine/summary.js";
import type { TraceStep } from "../engine/trace.js";
import { openCapture, PcapError } from "../pcap/index.js";
import { decodeLayers } from "./decode.js";
import type { BytesData, ByteView } from "./page-data.js";

/** The description's links and members by name, with what the page needs of each. */
export interface Names {
  readonly links: ReadonlyMap<string, { readonly design: string }>;
  /** "network.key" → its node id and its network's design. */
  readonly members: ReadonlyMap<string, { readonly node: string; readonly design: string }>;
}

/** A record of a capture: links/<capture> or delivered/<member> (without .pcap), and its index in the file. */
export interface Capture {
  readonly file: string;
  readonly index: number;
}

export interface WantedPacket {
  readonly packet: number;
  readonly steps: readonly TraceStep[];
  /** Per step: the record it made, for link and deliver steps. */
  readonly records: (Capture | undefined)[];
}

/**
 * The record each step of a trace line made in its capture (link steps in links/, deliver steps
 * in delivered/), counting the records of each capture in `seen`; into `made` when given, one
 * entry a step.
 */
export function countRecords(
  steps: readonly TraceStep[],
  seen: Map<string, number>,
  made?: (Capture | undefined)[],
): void {
  for (const s of steps) {
    const capture =
      s.step === "link" && typeof s["link"] === "string"
        ? `${LINKS_DIR}/${s["link"]}`
        : s.step === "deliver" && typeof s["member"] === "string"
          ? `${DELIVERED_DIR}/${s["member"]}`
          : undefined;
    if (capture === undefined) {
      made?.push(undefined);
      continue;
    }
    const index = seen.get(capture) ?? 0;
    seen.set(capture, index + 1);
    made?.push({ file: capture, index });
  }
}

/**
 * The bytes of the wanted packets' steps: each link and deliver step's record, decoded as its
 * network's design; each push the header at the front of the copy's next record, each pop the
 * header at the front of what the copy holds, as the member's design.
 */
export function readBytes(
  dir: string,
  summary: Summary,
  names: Names,
  seen: ReadonlyMap<string, number>,
  wanted: readonly WantedPacket[],
  text: string,
  notes: string[],
): BytesData {
  const usable = usableCaptures(dir, summary, seen, notes);
  const need = new Map<string, Set<number>>();
  for (const w of wanted)
    for (const r of w.records)
      if (r !== undefined && usable.has(r.file))
        (need.get(r.file) ?? need.set(r.file, new Set()).get(r.file))?.add(r.index);
  // Before a record is shown: each capture read must be the one the run wrote.
  for (const capture of need.keys()) checkDigest(dir, `${capture}.pcap`, summary.crc32);
  const views = new ByteViews(readRecords(dir, need, notes));
  const steps: Record<string, number[]> = {};
  for (const w of wanted) steps[String(w.packet)] = stepViews(w, names, views);
  return { packets: text, records: views.recordHex, views: views.views, steps };
}

/** Captures whose records are the trace's steps one for one; a note says why each other's bytes are not shown. */
function usableCaptures(
  dir: string,
  summary: Summary,
  seen: ReadonlyMap<string, number>,
  notes: string[],
): Set<string> {
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
  return usable;
}

/** A record read, and its place among the page's records. */
interface HeldRecord {
  readonly id: number;
  readonly bytes: Uint8Array;
}

/** The records and decoded views the page holds, each once however many steps show it. */
class ByteViews {
  readonly recordHex: string[] = [];
  readonly views: ByteView[] = [];
  readonly #recordIds = new Map<string, number>();
  readonly #viewIds = new Map<string, number>();
  readonly #got: ReadonlyMap<string, ReadonlyMap<number, Uint8Array>>;

  constructor(got: ReadonlyMap<string, ReadonlyMap<number, Uint8Array>>) {
    this.#got = got;
  }

  record(c: Capture | undefined): HeldRecord | undefined {
    const bytes = c === undefined ? undefined : this.#got.get(c.file)?.get(c.index);
    if (bytes === undefined) return undefined;
    const hex = Buffer.from(bytes).toString("hex");
    let id = this.#recordIds.get(hex);
    if (id === undefined) {
      id = this.recordHex.push(hex) - 1;
      this.#recordIds.set(hex, id);
    }
    return { id, bytes };
  }

  /** The view of `record` from byte `at` decoded as `design`; `only`: its first layer alone is the step's. */
  view(record: HeldRecord, at: number, design: string, what: string, only: boolean): number {
    const key = `${record.id}:${at}:${design}:${what}:${only}`;
    let id = this.#viewIds.get(key);
    if (id === undefined) {
      const layers = decodeLayers(record.bytes, design, at).map((l) => ({
        design: l.design,
        at: l.at,
        len: l.len,
        fields: l.fields,
      }));
      id = this.views.push({ record: record.id, at, what, only, layers }) - 1;
      this.#viewIds.set(key, id);
    }
    return id;
  }
}

/** The view each step of a wanted packet shows (-1: none), following what each copy holds as it is popped. */
function stepViews(w: WantedPacket, names: Names, views: ByteViews): number[] {
  // What each copy holds now: a record, and how many of its bytes pops have taken off.
  const holds = new Map<number, { record: HeldRecord; at: number }>();
  return w.steps.map((s, k) => {
    const member = typeof s["member"] === "string" ? names.members.get(s["member"]) : undefined;
    switch (s.step) {
      case "link":
      case "deliver": {
        const record = views.record(w.records[k]);
        if (record === undefined) {
          holds.delete(s.copy);
          return -1;
        }
        holds.set(s.copy, { record, at: 0 });
        const link = typeof s["link"] === "string" ? s["link"] : "";
        const design = s.step === "link" ? names.links.get(link)?.design : member?.design;
        return design === undefined
          ? -1
          : views.view(record, 0, design, s.step === "link" ? `crossed ${link}` : `delivered to ${s["member"]}`, false);
      }
      case "fork": {
        const from = holds.get(Number(s["from"]));
        if (from !== undefined) holds.set(s.copy, { ...from });
        return -1;
      }
      case "pop": {
        const held = holds.get(s.copy);
        if (held === undefined || member === undefined) return -1;
        const id = views.view(held.record, held.at, member.design, `popped by ${s["member"]}`, true);
        held.at += Number(s["bytes"]);
        return id;
      }
      case "push": {
        // The header pushed leads the copy's next record.
        const next = w.steps.findIndex((t, j) => j > k && t.copy === s.copy && t.step === "link");
        const record = next < 0 ? undefined : views.record(w.records[next]);
        return record === undefined || member === undefined
          ? -1
          : views.view(record, 0, member.design, `pushed by ${s["member"]}`, true);
      }
      default:
        return -1;
    }
  });
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
