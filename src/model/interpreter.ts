// The reference: the model's semantics (seed §2.5 Figure 2, §3.1 Figure 4,
// §4.2–4.3, §5 Figure 7; DESIGN.md §1–2) run one packet at a time, by plain
// recursion, on the description's rows as written — never on the compiled
// tables, so that a compiler mistake is not shared by the two sides the
// differential tests compare. From the compiled spec it takes only numbers
// (members, links, tables, which compiled row stands for which written row),
// so that its counters and outputs line up with the data plane's. It is
// written to be obviously right, not fast: rows are scanned in order, and
// every header is parsed afresh where it is looked at.

import type { CompiledSpec } from "../control/compiled.js";
import type { Injection } from "../control/install.js";
import type { RowSpec, TableSpec } from "../description/types.js";
import { DROP_REASONS, type DropReason, type TableRole } from "../wasm/abi.js";
import type { Parsed } from "./headers.js";
import { type Arrival, winner } from "./rows.js";
import { type Member, Topology } from "./topology.js";

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
  /** Hits per compiled row, by table id. */
  readonly hits: Map<number, number[]>;
}

/** A packet in flight: its bytes never change in place (TTL, push and pop make new views), so copies can share them. */
interface Pkt {
  readonly bytes: Uint8Array;
  readonly origLen: number;
  readonly hops: number;
  readonly input: RefInput;
  readonly number: number;
}

/** Layering: after crossing its virtual link, the packet goes to this underlay member's send table in this session. */
interface Via {
  readonly member: number;
  readonly session: number;
}

export function interpret(
  compiled: CompiledSpec,
  injections: readonly Injection[],
  inputs: readonly RefInput[],
  first: number,
  options: RefOptions,
): RefResult {
  return new Reference(compiled, injections, options).run(inputs, first);
}

class Reference {
  readonly #c: CompiledSpec;
  readonly #t: Topology;
  readonly #injections: readonly Injection[];
  readonly #options: RefOptions;
  readonly #result: RefResult;
  /** Copies made of the current input packet (numbers 1, 2, … in creation order). */
  #copies = 0;

  constructor(compiled: CompiledSpec, injections: readonly Injection[], options: RefOptions) {
    this.#c = compiled;
    this.#t = new Topology(compiled);
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
      if (ep.kind === "link") this.#cross(p, ep.link, this.#t.link(ep.link).sender);
      else if (ep.kind === "self") this.#forward(p, ep.member, "self");
      else this.#send(p, ep.member, ep.session);
    });
    return this.#result;
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
    this.#result.outputs.push({
      kind,
      target,
      bytes: p.bytes,
      origLen: p.origLen,
      tsSec: p.input.tsSec,
      tsNsec: p.input.tsNsec,
      packet: p.number,
    });
  }

  /**
   * Counts a hit on row `row` of the member's `role` table: the compiled row
   * that stands for it (written rows by their index; the rows the compiler
   * adds for an absent transmit table, one per out-link, in ascending order).
   */
  #hit(m: Member, role: TableRole, row: number, defaultRow = -1): void {
    const t = this.#c.members[m.index]?.tables[role];
    const made = t?.rows.flatMap((r, i) => (r.row === row ? [i] : [])) ?? [];
    const i = row >= 0 ? made[0] : made[defaultRow];
    const hits = t === undefined ? undefined : this.#result.hits.get(t.id);
    if (i === undefined || hits === undefined)
      throw new Error(
        `the compiled spec has no row for ${m.qualified}.${role}[${row >= 0 ? row : `default ${defaultRow}`}]`,
      );
    hits[i] = (hits[i] ?? 0) + 1;
  }

  /** The winning row of a header table (acquire, forward, receive), counted; undefined: no row matches. */
  #lookup(m: Member, role: "acquire" | "forward" | "receive", inLink: Arrival, h: Parsed): RowSpec | undefined {
    const t: TableSpec | undefined = m.tables[role];
    if (t === undefined) return undefined;
    const i = winner(m.design, t, inLink, h.fields);
    if (i < 0) return undefined;
    this.#hit(m, role, i);
    return t.rows[i];
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

  /**
   * Crossing link `li`, transmitted by member `from` (−1: from outside): one
   * hop, counted and recorded. A virtual link (`via`) is implemented by an
   * underlay session: the packet, as it crossed, goes to that send table.
   */
  #cross(p: Pkt, li: number, from: number, via?: Via): void {
    const l = this.#t.link(li);
    if (p.hops >= this.#options.hopLimit) return this.#drop(from, "loop");
    if (l.recorded) this.#output("link", li, p);
    this.#result.linkPackets[li] = (this.#result.linkPackets[li] ?? 0) + 1;
    const q = { ...p, hops: p.hops + 1 };
    if (via !== undefined) return this.#send(q, via.member, via.session);
    if (l.mode === "anycast" && l.receivers.length > 1)
      throw new Error("anycast chooses a receiver by hash: the reference does not model it");
    // Allcast (seed §4.3): a copy for every receiver, in list order.
    const go = l.receivers.length > 1 ? this.#fan(from, l.receivers.length) : [true];
    l.receivers.forEach((r, k) => {
      if (go[k] === true) this.#acquire(q, r.member, r.inLink);
    });
  }

  #acquire(p: Pkt, member: number, inLink: number): void {
    const m = this.#t.member(member);
    const h = m.design.parse(p.bytes);
    if (h === undefined) return this.#drop(member, "bad-header");
    const row = this.#lookup(m, "acquire", inLink, h);
    if (row === undefined) return this.#drop(member, "acquire-miss");
    const a = row.action;
    switch (a.kind) {
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
      case "shared-acquire":
        // Subduction (seed §5.3.2): as if it arrived at the overlay's end of the shared link, unchanged.
        return this.#acquire(p, this.#t.partner(member), inLink);
      default:
        throw new Error(`an acquire row does ${a.kind}`);
    }
  }

  #forward(p: Pkt, member: number, inLink: number | "self" | "shared"): void {
    const m = this.#t.member(member);
    const h = m.design.parse(p.bytes);
    if (h === undefined) return this.#drop(member, "bad-header");
    const row = this.#lookup(m, "forward", inLink, h);
    if (row === undefined) return this.#drop(member, "forward-miss");
    const a = row.action;
    if (a.kind === "drop" || (a.kind === "out" && a.outLinks.length === 0)) return this.#drop(member, "forward-drop");
    // Subduction: the underlay's shared member forwards it, marked as handed over (in-link `shared`).
    if (a.kind === "shared-forward") return this.#forward(p, this.#t.partner(member), "shared");
    if (a.kind !== "out") throw new Error(`a forward row does ${a.kind}`);
    let q = p;
    // The design's forwarding side effect, once before replication; a packet the member sent itself was not forwarded
    // by it.
    if (m.network.decrementTtl && inLink !== "self" && m.design.decrementHopLimit !== undefined) {
      const bytes = m.design.decrementHopLimit(p.bytes);
      if (bytes === undefined) return this.#drop(member, "ttl-expired");
      q = { ...p, bytes };
    }
    const go = this.#fan(member, a.outLinks.length);
    a.outLinks.forEach((port, k) => {
      if (go[k] === true) this.#transmit(q, member, port);
    });
  }

  #transmit(p: Pkt, member: number, outLink: number): void {
    const m = this.#t.member(member);
    let action: RowSpec["action"];
    if (m.tables.transmit === undefined) {
      // No transmit table written: every out-link is physical (docs/spec.md).
      const k = this.#t.outLinks(member).indexOf(outLink);
      if (k < 0) return this.#drop(member, "transmit-miss");
      this.#hit(m, "transmit", -1, k);
      action = { kind: "physical" };
    } else {
      const i = m.tables.transmit.rows.findIndex((r) => r.out === outLink);
      const row = m.tables.transmit.rows[i];
      if (row === undefined) return this.#drop(member, "transmit-miss");
      this.#hit(m, "transmit", i);
      action = row.action;
    }
    const links = this.#t.sends(member, outLink);
    if (links.length > 1)
      throw new Error(
        `${m.qualified} sends ${links.length} links on identifier ${outLink}: the model does not say which`,
      );
    const [link] = links;
    switch (action.kind) {
      case "physical":
        if (link === undefined) return this.#drop(member, "no-link");
        return this.#cross(p, link.index, member);
      case "session": {
        // ExternalSession (seed §5.2.1): the underlay member on this machine sends it in the session.
        const via = { member: this.#t.attachment(action.network, member), session: action.session };
        if (link === undefined) return this.#send(p, via.member, via.session);
        return this.#cross(p, link.index, member, via);
      }
      default:
        throw new Error(`a transmit row does ${action.kind}`);
    }
  }

  #receive(p: Pkt, member: number): void {
    const m = this.#t.member(member);
    const h = m.design.parse(p.bytes);
    if (h === undefined) return this.#drop(member, "bad-header");
    // The receive table keys on the header alone (seed §3.1): no in-link.
    const row = this.#lookup(m, "receive", undefined, h);
    if (row === undefined) return this.#drop(member, "receive-miss");
    const a = row.action;
    switch (a.kind) {
      case "deliver":
        this.#output("deliver", member, p);
        this.#result.delivered[member] = (this.#result.delivered[member] ?? 0) + 1;
        return;
      case "link": {
        // ExternalLink (seed §5.2.1): this network's header comes off; what is inside arrives at the overlay member on
        // link `ident`.
        const overlay = this.#t.member(this.#t.attachment(a.network, member));
        let bytes = p.bytes.subarray(h.len);
        let origLen = Math.max(p.origLen - h.len, 0);
        // Bytes past the length the inner header states are padding of this layer (an Ethernet frame's minimum size).
        const stated = overlay.design.statedLen?.(bytes);
        if (stated !== undefined) {
          bytes = bytes.subarray(0, stated);
          origLen = Math.min(origLen, stated);
        }
        return this.#acquire({ ...p, bytes, origLen }, overlay.index, a.ident);
      }
      default:
        throw new Error(`a receive row does ${a.kind}`);
    }
  }

  /** The machine sends in session `session`: attach the session's header as its send row writes it (seed Figure 4),
   * then forward from self. */
  #send(p: Pkt, member: number, session: number): void {
    const m = this.#t.member(member);
    const rows = m.tables.send?.rows ?? [];
    const i = rows.findIndex((r) => r.session === session);
    const row = rows[i];
    if (row === undefined) return this.#drop(member, "send-miss");
    this.#hit(m, "send", i);
    if (row.action.kind !== "push") throw new Error(`a send row does ${row.action.kind}`);
    // A header whose length field cannot hold the payload would describe another packet.
    if (p.origLen > m.design.maxPayload(row.action.header)) return this.#drop(member, "too-long");
    const header = m.design.build(row.action.header, p.origLen);
    const bytes = new Uint8Array(header.length + p.bytes.length);
    bytes.set(header);
    bytes.set(p.bytes, header.length);
    this.#forward({ ...p, bytes, origLen: p.origLen + header.length }, member, "self");
  }
}
