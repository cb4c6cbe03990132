// summary.json: what a run did, counted by the data plane.

import type { CompiledLink, CompiledSpec } from "../control/compiled.js";
import type { Installed } from "../control/install.js";
import { DROP_REASONS, type DropReason } from "../wasm/abi.js";
import type { DataPlane } from "../wasm/module.js";
import type { Change, Target } from "../control/reconcile.js";
import type { InputError } from "../errors.js";
import { DELIVERED_DIR, LINKS_DIR } from "./recordings.js";

/** What one input (a capture, a live port) brought: the summary's `inputs[]`. */
export interface InputStats {
  readonly endpoint: string;
  readonly file: string;
  /** Packets handed to the data plane. */
  packets: number;
  /** What ended the input before its end, after the packets before it. */
  error: InputError | undefined;
  readonly linkTypes: Set<string>;
  /** What was taken off packets before they entered, e.g. "Linux cooked header". */
  readonly adapted: Set<string>;
}

/** An update as summary.json records it. */
export interface AppliedUpdate {
  readonly at: string;
  /** The capture time, "seconds.nanoseconds". */
  readonly time: string;
  readonly description?: string;
  readonly down?: Target;
  readonly up?: Target;
  /** The first input packet processed after it (numbered from 0, as in trace.jsonl); null: no packet came after it, and
   * it was not applied. */
  readonly packet: number | null;
  /** What changed in the tables (descriptions), or which links and members went down or up. */
  readonly change?: Omit<Change, "topology">;
  readonly links?: readonly string[];
  readonly members?: readonly string[];
  /** `--analyze`: the properties after it (src/run/analysis.ts), when it was applied. */
  readonly analysis?: UpdateAnalysis;
}

/** `strata run --analyze`: the properties of docs/analysis.md over the tables (and links, members) in force. */
export interface AnalysisAt {
  /** Properties by name and component ("Fully_reachable (lanB)"): those that hold, fail, or (cut short) are not known.
   * */
  readonly holds: readonly string[];
  readonly fails: readonly string[];
  readonly unknown: readonly string[];
  /** The first counterexample of each property that fails. */
  readonly counterexamples: Readonly<Record<string, string>>;
  /** Header classes walked (every class of every component at the start; after an update, those it walked again). */
  readonly classes: number;
  /** Milliseconds the analysis thread took for it. */
  readonly ms: number;
  /** Where the budget cut it short (`strata analyze`'s words), if it did. */
  readonly cut?: string;
}

/** The analysis after an update: the properties, and which of them the update changed. */
export interface UpdateAnalysis extends AnalysisAt {
  /** Properties that held (or were not known) before it and fail after, and the reverse. */
  readonly nowFail: readonly string[];
  readonly nowHold: readonly string[];
  /** Description rows it took out or put back, and links and members it took down or up, as the analysis saw them. */
  readonly rows: number;
  readonly down: number;
}

export interface Summary {
  readonly spec: string;
  /** Per input: packets injected, and `error` when bad input ended it early (after those packets). */
  readonly inputs: readonly {
    endpoint: string;
    file: string;
    packets: number;
    linkTypes: string[];
    adapted: string[];
    error?: string;
  }[];
  /**
   * Every input packet and every copy replication asked for has exactly one fate:
   * injected + copies = delivered + dropped + exited (a refused copy is a replication-limit drop).
   */
  readonly packets: {
    readonly injected: number;
    readonly copies: number;
    readonly delivered: number;
    readonly dropped: number;
    readonly exited: number;
  };
  /** Per declared link (both directions together): packets, bytes, and the file of its recording if one was written. */
  readonly links: Record<string, { packets: number; bytes: number; file: string | null }>;
  readonly delivered: Record<string, { packets: number; file: string }>;
  /** Per member that delivered or dropped anything, with the machine it runs on. */
  readonly members: Record<
    string,
    { machine: string | null; delivered: number; drops: Partial<Record<DropReason, number>> }
  >;
  readonly drops: Partial<Record<DropReason, number>>;
  readonly rows: readonly {
    member: string;
    table: string;
    row: number | "default";
    at: string | null;
    rule: string;
    hits: number;
  }[];
  readonly elapsedSeconds: number;
  readonly packetsPerSecond: number;
  /** With --updates: each update, and the first packet processed after it (src/run/updates.ts). */
  readonly updates?: readonly AppliedUpdate[];
  /** strata run --analyze: the properties of the starting description (each update's are in `updates`). */
  readonly analysis?: AnalysisAt;
  /** strata serve: each --port, what went through it and what was lost on the way in (src/serve/port-counters.ts). */
  readonly ports?: readonly PortSummary[];
  /** Set when bad input ended an input early: the first such input's error (each is in `inputs` too). */
  readonly error?: string;
  /**
   * The CRC-32 (8 hex digits, ./checksum.ts) of every other file the run wrote in --out (each
   * recording, trace.jsonl), by its name there, computed as it was written: strata trace and
   * strata view --run check the files they read against it (src/engine/digests.ts).
   */
  readonly crc32?: Readonly<Record<string, string>>;
}

/**
 * A live port of strata serve: frames received and sent, and frames that arrived on its interface
 * and never reached the emulation, by where they were dropped (null: this system does not count it).
 */
export interface PortSummary {
  /** The --port flag: ENDPOINT=IFACE. */
  readonly port: string;
  /** NETWORK:EXTERNAL. */
  readonly endpoint: string;
  readonly interface: string;
  readonly received: number;
  readonly sent: number;
  /** Received frames cut to the snapshot length. */
  readonly truncated: number;
  /** Received frames on an external link that only leaves the network (not injected). */
  readonly ignored: number;
  /** Frames the emulation sent out of the port that did not go: the port was closed, its queue full, or the interface
   * refused them. */
  readonly unsent: number;
  /** Dropped by the interface before any capture (its rx_dropped counter, libpcap's ps_ifdrop). */
  readonly droppedByInterface: number | null;
  /** Received by the interface and never passed on by the port process: the capture buffer was full (libpcap's
   * ps_drop), or the port was closed. */
  readonly droppedByCapture: number | null;
  /** Passed on by the port process while the emulation took no frames (starting or stopping). */
  readonly droppedByStrata: number;
}

/**
 * Whether a packet on link `l` leaves the network: the link has no receivers and its sender does
 * not implement it by a session of an underlay (a virtual link, layering), where the packet goes on.
 */
export function leaves(compiled: CompiledSpec, l: CompiledLink): boolean {
  if (l.receivers.length > 0) return false;
  const rows = l.sender >= 0 ? (compiled.members[l.sender]?.tables.transmit?.rows ?? []) : [];
  return !rows.some(
    (r) =>
      r.action.name === "external-session" &&
      (((r.match.value[0] ?? 0) << 8) | (r.match.value[1] ?? 0)) === l.senderOutLink,
  );
}

/** Name for drops that happened before any member held the packet. */
export const OUTSIDE = "(outside)";

/**
 * A data plane's counters, read out as plain data: what a summary is made of.
 * Every one is a sum, so the counters of several data planes (worker threads
 * that each ran part of the packets) add up to those of one that ran them all.
 */
export interface Counters {
  injected: number;
  copied: number;
  /** By link index. */
  readonly linkPackets: number[];
  readonly linkBytes: number[];
  /** By member index. */
  readonly delivered: number[];
  /** By member index + 1 (0: outside any member), by drop reason. */
  readonly drops: number[][];
  /** By table id, by data-plane entry index. */
  readonly hits: Map<number, number[]>;
}

/**
 * The data plane's counters. `only`: packets injected and copied ("packets"), and the drops too ("drops"), the rest
 * left empty: what a caller that runs a few packets at a time reads after each, without every table's hits.
 */
export function readCounters(dp: DataPlane, installed: Installed, only?: "packets" | "drops"): Counters {
  const compiled = installed.compiled;
  const x = dp.exports;
  // Addresses come back as i32: one past 2 GiB (a description of many members) would be negative.
  const drops = (i: number): number[] =>
    Array.from(new BigUint64Array(dp.mem.u8.buffer, x.memberDrops(i) >>> 0, DROP_REASONS.length), Number);
  if (only !== undefined)
    return {
      injected: x.packetsInjected(),
      copied: x.packetsCopied(),
      ...{ linkPackets: [], linkBytes: [], delivered: [], hits: new Map() },
      drops: only === "drops" ? [-1, ...compiled.members.map((m) => m.index)].map(drops) : [],
    };
  return {
    injected: x.packetsInjected(),
    copied: x.packetsCopied(),
    linkPackets: compiled.links.map((l) => x.linkPackets(l.index)),
    linkBytes: compiled.links.map((l) => x.linkBytes(l.index)),
    delivered: compiled.members.map((m) => x.memberDelivered(m.index)),
    drops: [-1, ...compiled.members.map((m) => m.index)].map(drops),
    hits: new Map(compiled.tables.map((t) => [t.id, [...installed.tables.hits(t)]])),
  };
}

/** Adds `more` into `into` (the same description's counters). */
export function addCounters(into: Counters, more: Counters): void {
  const add = (a: number[], b: readonly number[]): void => b.forEach((v, i) => (a[i] = (a[i] ?? 0) + v));
  into.injected += more.injected;
  into.copied += more.copied;
  add(into.linkPackets, more.linkPackets);
  add(into.linkBytes, more.linkBytes);
  add(into.delivered, more.delivered);
  more.drops.forEach((d, i) => add((into.drops[i] ??= []), d));
  for (const [id, h] of more.hits) {
    const mine = into.hits.get(id);
    if (mine === undefined) into.hits.set(id, [...h]);
    else add(mine, h);
  }
}

export function summarize(
  counters: Counters,
  installed: Installed,
  inputs: readonly InputStats[],
  elapsedSeconds: number,
): Summary {
  const compiled: CompiledSpec = installed.compiled;
  const { links, exited } = linksOf(compiled, counters);
  const { members, delivered, drops, dropped, deliveredTotal } = membersOf(compiled, counters);
  const injected = counters.injected;
  const error = inputs.find((i) => i.error !== undefined)?.error?.message;
  return {
    spec: compiled.spec.file,
    inputs: inputs.map((i) => ({
      endpoint: i.endpoint,
      file: i.file,
      packets: i.packets,
      linkTypes: [...i.linkTypes],
      adapted: [...i.adapted],
      ...(i.error !== undefined ? { error: i.error.message } : {}),
    })),
    packets: { injected, copies: counters.copied, delivered: deliveredTotal, dropped, exited },
    links,
    delivered,
    members,
    drops,
    rows: rowsHit(installed, counters),
    elapsedSeconds,
    packetsPerSecond: elapsedSeconds > 0 ? Math.round(injected / elapsedSeconds) : 0,
    ...(error !== undefined ? { error } : {}),
  };
}

/** summary.json's links (both directions of a link together, those a packet crossed), and the packets that left the
 * network. */
function linksOf(compiled: CompiledSpec, counters: Counters): { links: Summary["links"]; exited: number } {
  const links: Summary["links"] = {};
  let exited = 0;
  for (const l of compiled.links) {
    const packets = counters.linkPackets[l.index] ?? 0;
    const entry = (links[l.qualified] ??= { packets: 0, bytes: 0, file: null });
    entry.packets += packets;
    entry.bytes += counters.linkBytes[l.index] ?? 0;
    if (l.recorded && entry.packets > 0) entry.file = `${LINKS_DIR}/${l.qualified}.pcap`;
    if (leaves(compiled, l)) exited += packets;
  }
  for (const [name, l] of Object.entries(links)) if (l.packets === 0) delete links[name];
  return { links, exited };
}

/** summary.json's members, deliveries and drops (each member's, then those outside any), with their totals. */
function membersOf(
  compiled: CompiledSpec,
  counters: Counters,
): Pick<Summary, "members" | "delivered" | "drops"> & { dropped: number; deliveredTotal: number } {
  const drops: Partial<Record<DropReason, number>> = {};
  const members: Summary["members"] = {};
  const delivered: Summary["delivered"] = {};
  let dropped = 0;
  let deliveredTotal = 0;
  const readDrops = (i: number): Partial<Record<DropReason, number>> => {
    const counts = counters.drops[i + 1] ?? [];
    const out: Partial<Record<DropReason, number>> = {};
    DROP_REASONS.forEach((reason, k) => {
      const n = counts[k] ?? 0;
      if (n === 0) return;
      out[reason] = n;
      drops[reason] = (drops[reason] ?? 0) + n;
      dropped += n;
    });
    return out;
  };
  for (const m of compiled.members) {
    const d = counters.delivered[m.index] ?? 0;
    const memberDrops = readDrops(m.index);
    deliveredTotal += d;
    if (d > 0) delivered[m.qualified] = { packets: d, file: `${DELIVERED_DIR}/${m.qualified}.pcap` };
    if (d > 0 || Object.keys(memberDrops).length > 0)
      members[m.qualified] = { machine: compiled.machines[m.machine] ?? "", delivered: d, drops: memberDrops };
  }
  const outside = readDrops(-1);
  if (Object.keys(outside).length > 0) members[OUTSIDE] = { machine: null, delivered: 0, drops: outside };
  return { members, delivered, drops, dropped, deliveredTotal };
}

/** summary.json's rows: each description row a packet hit, with its hits. */
function rowsHit(installed: Installed, counters: Counters): Summary["rows"][number][] {
  const compiled = installed.compiled;
  const rows: Summary["rows"][number][] = [];
  for (const t of compiled.tables) {
    const hits = counters.hits.get(t.id) ?? [];
    const entries = installed.entries.get(t.id) ?? [];
    t.rows.forEach((r, k) => {
      const n = hits[entries[k] ?? -1] ?? 0;
      if (n === 0) return;
      rows.push({
        member: compiled.members[t.member]?.qualified ?? "",
        table: t.role,
        row: r.row < 0 ? "default" : r.row,
        at: r.at?.path ?? null,
        rule: r.text,
        hits: n,
      });
    });
  }
  return rows;
}
