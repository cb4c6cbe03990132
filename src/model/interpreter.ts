// The reference: the model's table semantics (seed §2.5 Figure 2, §3.1 Figure
// 4, §4.2–4.3; DESIGN.md §1–2) run directly on a CompiledSpec, one packet at a
// time, by plain recursion. It is written to be obviously right, not fast: tables
// are scanned row by row, and every header is parsed afresh where it is looked at.
// The wasm pipeline must agree with it output for output and count for count.

import type { CompiledMember, CompiledNetwork, CompiledSpec, CompiledTable } from "../control/compiled.js";
import type { Injection } from "../control/install.js";
import { DROP_REASONS, type DropReason, PORT_SELF } from "../wasm/abi.js";
import type { EntryMatch } from "../wasm/tables.js";
import { buildHeader, decrementHopLimit, type Fields, keyVector, parseHeader } from "./headers.js";

export interface RefInput {
  readonly bytes: Uint8Array;
  readonly origLen: number;
  readonly tsSec: number;
  readonly tsNsec: number;
  /** Index into the injections. */
  readonly endpoint: number;
}

export interface RefOutput {
  readonly kind: "link" | "deliver";
  /** Link index (kind link) or member index (kind deliver). */
  readonly target: number;
  readonly bytes: Uint8Array;
  readonly origLen: number;
  readonly tsSec: number;
  readonly tsNsec: number;
  readonly packet: number;
}

export interface RefOptions {
  /** Links a packet may cross; crossing one more is a loop. */
  readonly hopLimit: number;
  /** Copies one input packet may make. */
  readonly copyLimit: number;
}

export interface RefResult {
  readonly outputs: RefOutput[];
  /** Drop counts by member index (−1: before any member), then by DROP_REASONS index. */
  readonly drops: Map<number, number[]>;
  readonly delivered: number[];
  readonly linkPackets: number[];
  /** Hits per row, by table id. */
  readonly hits: Map<number, number[]>;
}

/** A packet in flight: its bytes never change in place (TTL and send make new ones), so copies can share them. */
interface Pkt {
  readonly bytes: Uint8Array;
  readonly origLen: number;
  readonly hops: number;
  readonly input: RefInput;
  readonly number: number;
}

export function interpret(compiled: CompiledSpec, injections: readonly Injection[], inputs: readonly RefInput[], first: number, options: RefOptions): RefResult {
  return new Reference(compiled, injections, options).run(inputs, first);
}

/** Whether a row's match holds for a key: masked bytes equal, and range fields within their bounds. */
export function rowMatches(t: CompiledTable, m: EntryMatch, key: Uint8Array): boolean {
  for (let i = 0; i < t.keyLen; i++) if (((key[i] ?? 0) & (m.mask[i] ?? 0)) !== m.value[i]) return false;
  if (t.kind !== "range") return true;
  return t.fields.every((f) => {
    if (f.kind !== "range") return true;
    const k = key.subarray(f.offset, f.offset + f.len);
    return compare(k, (m.lo ?? new Uint8Array(t.keyLen)).subarray(f.offset, f.offset + f.len)) >= 0 && compare(k, (m.hi ?? new Uint8Array(t.keyLen)).subarray(f.offset, f.offset + f.len)) <= 0;
  });
}

/** Big-endian byte strings of one length compare as the numbers they hold. */
function compare(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return (a[i] ?? 0) - (b[i] ?? 0);
  return 0;
}

const ones = (mask: Uint8Array): number => mask.reduce((n, byte) => n + [...byte.toString(2)].filter((c) => c === "1").length, 0);

/** The winning row's index, or −1. LPM: longest prefix; ternary, range, optional: highest priority, then the earlier row; exact: the one row. */
export function bestRow(t: CompiledTable, key: Uint8Array): number {
  let best = -1;
  t.rows.forEach((r, i) => {
    if (!rowMatches(t, r.match, key)) return;
    const b = t.rows[best]?.match;
    if (b === undefined) best = i;
    else if (t.kind === "lpm" ? ones(r.match.mask) > ones(b.mask) : t.kind !== "exact" && r.match.priority > b.priority) best = i;
  });
  return best;
}

class Reference {
  readonly #c: CompiledSpec;
  readonly #injections: readonly Injection[];
  readonly #options: RefOptions;
  readonly #result: RefResult;
  /** Copies made of the current input packet (numbers 1, 2, … in creation order). */
  #copies = 0;

  constructor(compiled: CompiledSpec, injections: readonly Injection[], options: RefOptions) {
    this.#c = compiled;
    this.#injections = injections;
    this.#options = options;
    this.#result = {
      outputs: [],
      drops: new Map(),
      delivered: compiled.members.map(() => 0),
      linkPackets: compiled.links.map(() => 0),
      hits: new Map(compiled.tables.map((t) => [t.id, t.rows.map(() => 0)])),
    };
  }

  run(inputs: readonly RefInput[], first: number): RefResult {
    inputs.forEach((input, i) => {
      this.#copies = 0;
      const p: Pkt = { bytes: input.bytes, origLen: input.origLen, hops: 0, input, number: first + i };
      const ep = this.#injections[input.endpoint];
      if (ep === undefined) throw new Error(`no injection ${input.endpoint}`);
      if (ep.kind === "link") this.#link(p, ep.link);
      else if (ep.kind === "self") this.#forward(p, ep.member, PORT_SELF);
      else this.#send(p, ep.member, ep.session);
    });
    return this.#result;
  }

  #member(i: number): CompiledMember {
    const m = this.#c.members[i];
    if (m === undefined) throw new Error(`no member ${i}`);
    return m;
  }

  #network(member: number): CompiledNetwork {
    const net = this.#c.networks[this.#member(member).network];
    if (net === undefined) throw new Error(`member ${member} has no network`);
    return net;
  }

  #drop(member: number, reason: DropReason): void {
    let counts = this.#result.drops.get(member);
    if (counts === undefined) {
      counts = DROP_REASONS.map(() => 0);
      this.#result.drops.set(member, counts);
    }
    counts[DROP_REASONS.indexOf(reason)] = (counts[DROP_REASONS.indexOf(reason)] ?? 0) + 1;
  }

  #output(kind: RefOutput["kind"], target: number, p: Pkt): void {
    this.#result.outputs.push({ kind, target, bytes: p.bytes, origLen: p.origLen, tsSec: p.input.tsSec, tsNsec: p.input.tsNsec, packet: p.number });
  }

  /** Looks `key` up in `t` (absent: a miss) and counts the hit; the row, or undefined. */
  #lookup(t: CompiledTable | undefined, key: Uint8Array): CompiledTable["rows"][number] | undefined {
    if (t === undefined) return undefined;
    const i = bestRow(t, key);
    if (i < 0) return undefined;
    const hits = this.#result.hits.get(t.id);
    if (hits !== undefined) hits[i] = (hits[i] ?? 0) + 1;
    return t.rows[i];
  }

  /** The member's view of the packet: its header fields, or undefined (a bad header). */
  #fields(member: number, p: Pkt): Fields | undefined {
    return parseHeader(this.#network(member).spec.design, p.bytes);
  }

  /**
   * A fan-out of `n` at `member`: element 0 is the packet itself; elements 1…
   * are copies, numbered now in list order. A copy past the limit is not made.
   * Returns, per element, whether it goes on.
   */
  #fan(member: number, n: number): boolean[] {
    const base = this.#copies;
    this.#copies += n - 1;
    return Array.from({ length: n }, (_, k) => {
      if (k === 0 || base + k <= this.#options.copyLimit) return true;
      this.#drop(member, "replication-limit");
      return false;
    });
  }

  /** Crossing link `li`, transmitted by its sender (or arriving from outside). */
  #link(p: Pkt, li: number): void {
    const l = this.#c.links[li];
    if (l === undefined) throw new Error(`no link ${li}`);
    if (p.hops >= this.#options.hopLimit) return this.#drop(l.sender, "loop");
    if (l.captured) this.#output("link", li, p);
    this.#result.linkPackets[li] = (this.#result.linkPackets[li] ?? 0) + 1;
    const q = { ...p, hops: p.hops + 1 };
    if (l.mode === "anycast" && l.receivers.length > 1) throw new Error("anycast chooses a receiver by hash: the reference does not model it");
    // Allcast (seed §4.3): a copy for every receiver, in list order.
    const go = l.receivers.length > 1 ? this.#fan(l.sender, l.receivers.length) : [true];
    l.receivers.forEach((r, k) => {
      if (go[k] === true) this.#acquire(q, r.member, r.port);
    });
  }

  #acquire(p: Pkt, member: number, inLink: number): void {
    const f = this.#fields(member, p);
    if (f === undefined) return this.#drop(member, "bad-header");
    const row = this.#lookup(this.#member(member).tables.acquire, keyVector(this.#network(member).layout, inLink, f));
    switch (row?.action.name) {
      case undefined:
        return this.#drop(member, "acquire-miss");
      case "forward":
        return this.#forward(p, member, inLink);
      case "receive":
        return this.#receive(p, member);
      case "both": {
        const [, toReceive] = this.#fan(member, 2);
        this.#forward(p, member, inLink);
        if (toReceive === true) this.#receive(p, member);
        return;
      }
      default:
        throw new Error(`acquire action ${String(row?.action.name)} is outside the reference`);
    }
  }

  #forward(p: Pkt, member: number, inLink: number): void {
    const f = this.#fields(member, p);
    if (f === undefined) return this.#drop(member, "bad-header");
    const net = this.#network(member);
    const row = this.#lookup(this.#member(member).tables.forward, keyVector(net.layout, inLink, f));
    if (row === undefined) return this.#drop(member, "forward-miss");
    if (row.action.name === "drop" || row.ports.length === 0) return this.#drop(member, "forward-drop");
    if (row.action.name !== "out") throw new Error(`forward action ${row.action.name} is outside the reference`);
    let q = p;
    // The design's forwarding side effect, once before replication; a packet the member sent itself was not forwarded by it.
    if (net.spec.decrementTtl && inLink !== PORT_SELF) {
      const bytes = decrementHopLimit(net.spec.design, p.bytes);
      if (bytes === undefined) return this.#drop(member, "ttl-expired");
      q = { ...p, bytes };
    }
    const go = this.#fan(member, row.ports.length);
    row.ports.forEach((port, k) => {
      if (go[k] === true) this.#transmit(q, member, port);
    });
  }

  #transmit(p: Pkt, member: number, outLink: number): void {
    const key = new Uint8Array(8);
    new DataView(key.buffer).setUint16(0, outLink);
    const row = this.#lookup(this.#member(member).tables.transmit, key);
    if (row === undefined) return this.#drop(member, "transmit-miss");
    if (row.action.name !== "physical") throw new Error(`transmit action ${row.action.name} is outside the reference`);
    const links = this.#c.links.filter((l) => l.sender === member && l.senderPort === outLink);
    if (links.length > 1) throw new Error(`member ${member} sends ${links.length} links on identifier ${outLink}: the model does not say which`);
    const link = links[0];
    if (link === undefined) return this.#drop(member, "no-link");
    this.#link(p, link.index);
  }

  #receive(p: Pkt, member: number): void {
    const f = this.#fields(member, p);
    if (f === undefined) return this.#drop(member, "bad-header");
    // The receive table keys on the header alone (seed §3.1): no in-link.
    const row = this.#lookup(this.#member(member).tables.receive, keyVector(this.#network(member).layout, 0, f));
    if (row === undefined) return this.#drop(member, "receive-miss");
    if (row.action.name !== "deliver") throw new Error(`receive action ${row.action.name} is outside the reference`);
    this.#output("deliver", member, p);
    this.#result.delivered[member] = (this.#result.delivered[member] ?? 0) + 1;
  }

  /** The machine sends in session `session`: attach the session's header (seed Figure 4), then forward from self. */
  #send(p: Pkt, member: number, session: number): void {
    const t = this.#member(member).tables.send;
    const key = new Uint8Array(8);
    new DataView(key.buffer).setUint32(0, session);
    const row = this.#lookup(t, key);
    if (row === undefined) return this.#drop(member, "send-miss");
    // The header as the description wrote it, not as the compiler encoded it.
    const action = t?.spec?.rows[row.row]?.action;
    if (action?.kind !== "push") throw new Error(`send row ${row.row} has no header`);
    const design = this.#network(member).spec.design;
    // IPv4's total length and IPv6's payload length are 16-bit fields: a longer payload cannot be stated.
    const room = design.name === "ipv4" ? 0xffff - 20 : design.name === "ipv6" ? 0xffff : Infinity;
    if (p.origLen > room) return this.#drop(member, "too-long");
    const header = buildHeader(design, action.header, p.origLen);
    const bytes = new Uint8Array(header.length + p.bytes.length);
    bytes.set(header);
    bytes.set(p.bytes, header.length);
    this.#forward({ ...p, bytes, origLen: p.origLen + header.length }, member, PORT_SELF);
  }
}
