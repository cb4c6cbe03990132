// Where the data plane's recording ring goes: the engine's sinks. The ring
// holds pcap records, a recording at a time, and is read after each batch (or
// when it is full), never a packet at a time. Numbered in the ring, in order:
//   - the description's recordings (./recordings.ts: one per recorded link name
//     and per delivering member), to a RecordingSink: --out's files, or a
//     worker thread's chunk buffers;
//   - one per exit, an external link's outbound direction: its packets go to
//     the exit listeners (a live port sends them out of its interface), and to
//     the link's file too: a two-way external link's file holds both
//     directions, merged in timestamp order after each batch;
//   - with deliveries, one per receiving member, in tagged records that carry
//     the in-link each packet came on (src/wasm/deliveries.ts): to the delivery
//     listeners (the P4Runtime server's PacketIn), and, without their tags, to
//     the member's delivered/ file.

import type { CompiledLink, CompiledNetwork, CompiledSpec } from "../control/compiled.js";
import { excerpt, UsageError } from "../errors.js";
import { RECORD_HEADER_LEN as PCAP_REC_LEN } from "../pcap/pcap-layout.js";
import { RECORDING_TAG_LEN, LINK_MODES } from "../wasm/abi.js";
import { forEachTagged, tagDeliveries } from "../wasm/deliveries.js";
import type { DataPlane } from "../wasm/module.js";
import type { MemoryLender, RecordingTargets } from "../wasm/runner.js";
import { lend, settle, unlend } from "./file-writer.js";
import { assignRecordings } from "./recordings.js";
import { leaves } from "./summary.js";

/** Where the description's recordings go: recording c's records, data[start .. start+len), a view on linear memory. */
export type RecordingSink = Pick<RecordingTargets, "write">;

/** A link on which packets leave the emulation: an external link's outbound direction. */
export interface Exit {
  /** Index among the engine's exits. */
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
export type ExitListener = (
  exit: Exit,
  data: Uint8Array,
  start: number,
  len: number,
  tsSec: number,
  tsNsec: number,
) => void;

/**
 * A packet delivered to `member` (its index) on in-link identifier `inLink`: `data[start .. start+len)`
 * is a view on linear memory, valid only during the call (copy what you keep).
 */
export type DeliveryListener = (
  member: number,
  inLink: number,
  data: Uint8Array,
  start: number,
  len: number,
  tsSec: number,
  tsNsec: number,
) => void;

/** Where an external link's two directions are: packets arriving (its endpoint number) and leaving. */
export interface ExternalEnd {
  readonly name: string;
  readonly network: CompiledNetwork;
  /** Index into the engine's endpoints, when packets can arrive on it. */
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

/** The external link `text` names ("network:external"; the network may be left out when there is one); UsageError if
 * none. */
export function resolveExternal(compiled: CompiledSpec, text: string, label = `'${excerpt(text)}'`): ExternalLink {
  const colon = text.indexOf(":");
  const networks = compiled.networks;
  const network =
    colon < 0
      ? networks.length === 1
        ? networks[0]
        : undefined
      : networks.find((n) => n.name === text.slice(0, colon));
  const name = colon < 0 ? text : text.slice(colon + 1);
  const externals = [
    ...new Set(
      compiled.links.filter((l) => l.external !== undefined).map((l) => `${networks[l.network]?.name}:${l.external}`),
    ),
  ];
  const list = externals.length === 0 ? "the description has none" : `external links: ${externals.join(", ")}`;
  if (network === undefined) {
    const why = colon < 0 ? "names no network" : `names no network of the description`;
    throw new UsageError(`${label} ${why}: write NETWORK:EXTERNAL (${list})`);
  }
  const links = compiled.links.filter((l) => l.network === network.index && l.external === name);
  if (links.length === 0)
    throw new UsageError(`${label}: network ${network.name} has no external link '${excerpt(name)}' (${list})`);
  const inbound = links.find((l) => l.sender < 0);
  const outbound = links.find((l) => l.sender >= 0);
  return {
    name: `${network.name}:${name}`,
    network,
    ...(inbound !== undefined ? { inbound } : {}),
    ...(outbound !== undefined ? { outbound } : {}),
  };
}

/** The exits of `compiled`: every external link's outbound direction on which packets leave. */
export function exitsOf(compiled: CompiledSpec): Exit[] {
  const exits: Exit[] = [];
  for (const l of compiled.links) {
    const network = compiled.networks[l.network];
    if (l.external === undefined || l.sender < 0 || network === undefined || !leaves(compiled, l)) continue;
    exits.push({ index: exits.length, name: `${network.name}:${l.external}`, network, link: l });
  }
  return exits;
}

/** What the sinks hand on: packets leaving on exits, and deliveries. */
export interface Emit {
  readonly exit: ExitListener;
  readonly deliver: DeliveryListener;
}

/** Hands each packet to every listener there is when it comes (the lists may change between batches). */
export function emitTo(exits: readonly ExitListener[], deliveries: readonly DeliveryListener[]): Emit {
  return {
    exit: (...args) => {
      for (const f of exits) f(...args);
    },
    deliver: (...args) => {
      for (const f of deliveries) f(...args);
    },
  };
}

export interface SinksOptions {
  /** Where the description's recordings go (none: they are not recorded). */
  readonly recordings?: RecordingSink;
  /** The exits whose packets go to `emit.exit` (none: they are recorded only as the description says). */
  readonly exits: readonly Exit[];
  /** Hand every receiving member's deliveries to `emit.deliver`, with their in-links. */
  readonly deliveries: boolean;
  readonly emit: Emit;
}

const FILE_WRITER_LENDER: MemoryLender = { lend, unlend, settle };

/** The data plane's recording ring, read out to the sinks (see the top of this file for its numbering). */
export class Sinks implements RecordingTargets {
  readonly count: number;
  /** The file writer may write the records handed on where they lie in the data plane's memory. */
  readonly lender: MemoryLender = FILE_WRITER_LENDER;
  readonly #recordings: RecordingSink | undefined;
  readonly #recordingCount: number;
  readonly #exits: readonly Exit[];
  /** Per exit: the recording its records also go to (−1 none). */
  readonly #exitRecording: number[];
  /** Recordings whose records wait for settle(): those shared with an exit. */
  readonly #pending = new Map<number, Uint8Array[]>();
  readonly #shared = new Set<number>();
  readonly #emit: Emit;
  /** Per tagged delivery buffer (from recordingCount + exits): its member, and that member's recording (−1 none). */
  readonly #deliveries: { member: number; recording: number }[] = [];

  /** Numbers the ring in `dp` for these sinks. */
  constructor(dp: DataPlane, compiled: CompiledSpec, options: SinksOptions) {
    const plan = options.recordings === undefined ? [] : assignRecordings(compiled, dp);
    this.#recordings = options.recordings;
    this.#recordingCount = plan.length;
    this.#exits = options.exits;
    this.#emit = options.emit;
    const x = dp.exports;
    // Which recording each recorded link writes to, by link name.
    const byName = new Map<string, number>();
    plan.forEach((p, c) => {
      if (p.member === undefined) byName.set(p.name, c);
    });
    this.#exitRecording = options.exits.map((e) => byName.get(e.link.qualified) ?? -1);
    for (const r of this.#exitRecording) if (r >= 0) this.#shared.add(r);
    for (const e of options.exits) {
      const l = e.link;
      // The data plane writes a link's packets only when it is recorded: an exit always is.
      if (!l.recorded)
        x.linkSet(
          l.index,
          l.network,
          e.network.spec.design.id,
          l.sender,
          l.senderOutLink,
          LINK_MODES.indexOf(l.mode),
          0,
          1,
        );
      x.linkSetRecording(l.index, this.#recordingCount + e.index);
    }
    if (options.deliveries) {
      for (const m of compiled.members) {
        if (m.tables.receive === undefined) continue;
        const c = this.#recordingCount + options.exits.length + this.#deliveries.length;
        this.#deliveries.push({ member: m.index, recording: plan.findIndex((p) => p.member === m.index) });
        tagDeliveries(dp, m.index, c);
      }
    }
    this.count = this.#recordingCount + options.exits.length + this.#deliveries.length;
  }

  /** Whether records go to listeners, which want them after every batch. */
  get live(): boolean {
    return this.#exits.length > 0 || this.#deliveries.length > 0;
  }

  write(c: number, data: Uint8Array, start: number, len: number): void {
    if (c < this.#recordingCount) {
      if (this.#shared.has(c)) this.#keep(c, data, start, len);
      else this.#recordings?.write(c, data, start, len);
      return;
    }
    const delivery = this.#deliveries[c - this.#recordingCount - this.#exits.length];
    if (delivery !== undefined) return this.#delivered(delivery, data, start, len);
    const exit = this.#exits[c - this.#recordingCount];
    if (exit === undefined) return;
    const view = new DataView(data.buffer, data.byteOffset);
    for (let r = start; r + PCAP_REC_LEN <= start + len;) {
      const capLen = view.getUint32(r + 8, true);
      this.#emit.exit(exit, data, r + PCAP_REC_LEN, capLen, view.getUint32(r, true), view.getUint32(r + 4, true));
      r += PCAP_REC_LEN + capLen;
    }
    const recording = this.#exitRecording[exit.index] ?? -1;
    if (recording >= 0) this.#keep(recording, data, start, len);
  }

  /** Tagged delivery records: to the listeners, and untagged (plain pcap records) to the member's recording. */
  #delivered(d: { member: number; recording: number }, data: Uint8Array, start: number, len: number): void {
    const records = forEachTagged(data, start, len, (inLink, bytes, at, n, sec, nsec) =>
      this.#emit.deliver(d.member, inLink, bytes, at, n, sec, nsec),
    );
    const sink = this.#recordings;
    if (d.recording < 0 || sink === undefined || records === 0) return;
    const plain = new Uint8Array(len - records * RECORDING_TAG_LEN);
    let at = 0;
    forEachTagged(data, start, len, (_inLink, bytes, from, n) => {
      // The record header sits just before the tag.
      const head = from - RECORDING_TAG_LEN - PCAP_REC_LEN;
      plain.set(bytes.subarray(head, head + PCAP_REC_LEN), at);
      plain.set(bytes.subarray(from, from + n), at + PCAP_REC_LEN);
      at += PCAP_REC_LEN + n;
    });
    sink.write(d.recording, plain, 0, at);
  }

  #keep(c: number, data: Uint8Array, start: number, len: number): void {
    let list = this.#pending.get(c);
    if (list === undefined) {
      list = [];
      this.#pending.set(c, list);
    }
    list.push(data.slice(start, start + len));
  }

  /** Writes the records held back for recordings shared with an exit, merged by timestamp (stable: arrival order on
   * ties). */
  settle(): void {
    for (const [c, chunks] of this.#pending) {
      if (chunks.length === 0) continue;
      const records: { ts: bigint; order: number; chunk: Uint8Array; at: number; len: number }[] = [];
      for (const chunk of chunks) {
        const view = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        for (let r = 0; r + PCAP_REC_LEN <= chunk.length;) {
          const len = PCAP_REC_LEN + view.getUint32(r + 8, true);
          records.push({
            ts: BigInt(view.getUint32(r, true)) * 1_000_000_000n + BigInt(view.getUint32(r + 4, true)),
            order: records.length,
            chunk,
            at: r,
            len,
          });
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
      this.#recordings?.write(c, merged, 0, merged.length);
      chunks.length = 0;
    }
  }
}
