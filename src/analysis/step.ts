// The step of every walk over header classes: from a state at a member's
// table to the states after it — which rows of the table match the class,
// what each row's action does (seed Figure 7: acquire, forward, transmit,
// receive; §5.3's hand-overs to a shared member), and the state it leaves.
// Two walks are driven by it, and differ only in what a state is and what
// they keep: ./walk.ts follows one class inside one component for the
// model's relations and the loop search (a state: the hop values; the
// decrements and links crossed in its fields), ./explore.ts follows a
// packet's stack of headers across layers from one endpoint (a state: the
// stack, and what the injected packet must be). Crossing a link, where each
// keeps what it has seen, is their own.

import type { Arrival } from "../model/rows.js";
import type { TableRole } from "../wasm/abi.js";
import { decrement } from "./hops.js";
import { type HeaderRole, transmitRow, type Walkable } from "./members.js";
import type { Hit, IndexedRow, TableIndex } from "./tables.js";

/** Whether member `v` lowers the hop limit of what it forwards from `arrival`: what came in on a link, not what it
 * sends itself. The step's rule, for the walks that look a step ahead too (./origin-groups.ts). */
export const decrementsFrom = (v: { readonly decrements: boolean }, arrival: Arrival): boolean =>
  v.decrements && arrival !== "self";

/** The hop values a forward that decrements passes on from `hops` (0n: none, each one's limit run out). */
export const passedOn = (hops: bigint): bigint => decrement(hops).next;

/** One step of a path: a row that matched (or a table that missed), or a link crossed. */
export type Step =
  | { readonly kind: "row"; readonly member: number; readonly role: TableRole; readonly row: number }
  | { readonly kind: "miss"; readonly member: number; readonly role: TableRole }
  | { readonly kind: "link"; readonly link: number };

/** The tables a class can miss in: a black hole. */
export type HoleTable = "acquire" | "forward" | "receive" | "transmit";

/** What a row drops for: a forward row's drop (or no out-link), the TTL run out, a physical out-link with no link; or
 * what an update took down (docs/updates.md): the link it is sent onto, the member it reaches or is forwarded by. */
export type RowDrop = "forward-drop" | "ttl-expired" | "no-link" | "link-down" | "member-down";

/** A transmit row's session: the underlay member on the same machine sends it (ExternalSession, seed §5.2.1). */
export interface ViaSession {
  readonly network: string;
  readonly session: number;
}

/**
 * The step, for walks whose state is `S`. A walk says what a state is (the class and hop values the tables read, and
 * how a row that takes some of the values narrows it), what it keeps of a path, and what happens at the ends: a miss,
 * a drop, a delivery, a link to cross.
 */
export abstract class Stepper<S> {
  protected readonly analysis: Walkable;
  /** Per member and out-link, linkOut's answers. */
  readonly #sendsOn: number[][] = [];
  /** #rows' lists, one a depth of the step's recursion, used again: a new list a lookup was most of what a fabric's
   * walk allocated. */
  readonly #lists: Hit[][] = [];
  #depth = 0;

  constructor(analysis: Walkable) {
    this.analysis = analysis;
  }

  /** The header class the state's tables read. */
  protected abstract atom(s: S): number;
  /** Its hop values. */
  protected abstract hops(s: S): bigint;
  /** The state with only `hops` of its values (a row took those). */
  protected abstract narrow(s: S, hops: bigint): S;
  /**
   * The state after forwarding lowered the hop limit: `expired` fell off, `next` go on (each one lower). A walk that
   * keeps the decrements in its own fields, not in S, counts one here and takes it back in restored().
   */
  protected abstract decremented(s: S, expired: bigint, next: bigint): S;
  /** The transmits of what decremented() gave are done. */
  protected restored(): void {}
  /** A row is taken: the path goes on through it, until leave(). */
  protected abstract enter(member: number, role: TableRole, row: number): void;
  protected abstract leave(): void;
  /** The table has no row for `miss` of the values (arrival: the in-link, or the out-link for transmit). */
  protected abstract missed(s: S, member: number, table: HoleTable, arrival: Arrival, miss: bigint): void;
  /** A row drops it (`row` −1: no row, a physical out-link with no link). */
  protected abstract dropped(s: S, member: number, reason: RowDrop, row: number): void;
  /** The shared member a hand-over goes to (undefined: none the walk follows). */
  protected abstract partner(member: number): number | undefined;
  /** An acquire row takes it. */
  protected abstract acquired(s: S, member: number): void;
  /** A receive row takes it. */
  protected abstract received(s: S, member: number, row: IndexedRow): void;
  /** It leaves on `link` (−1: the out-link has none), physically or, with `via`, in an underlay's session. */
  protected abstract leaves(s: S, member: number, link: number, via: ViaSession | undefined): void;
  /** A forward row copies it to several out-links. */
  protected replicated(_member: number, _row: IndexedRow): void {}

  /** The link `member` sends on with identifier `outLink` (−1: none): Topology.sends, found once (a walk transmits on
   * the same out-links class after class). */
  linkOut(member: number, outLink: number): number {
    const row = (this.#sendsOn[member] ??= []);
    let link = row[outLink];
    if (link === undefined) row[outLink] = link = this.analysis.topology.sends(member, outLink)[0]?.index ?? -1;
    return link;
  }

  /** The rows of the member's header table that win for the state; the hop values no row takes are a miss. */
  #rows(s: S, member: number, role: HeaderRole, t: TableIndex | undefined, arrival: Arrival): Hit[] {
    const hits = (this.#lists[this.#depth] ??= []);
    // Emptied by pop, not by setting its length: that would let its storage go, and the next push make it again.
    while (hits.length > 0) hits.pop();
    const miss = t === undefined ? this.hops(s) : t.lookup(arrival, this.atom(s), this.hops(s), hits);
    if (miss !== 0n) this.missed(s, member, role, arrival, miss);
    return hits;
  }

  /** Row `h` taken: the state narrowed to the values it takes, and the path through it until leave(). */
  #take(s: S, member: number, role: HeaderRole, h: Hit): S {
    const q = this.narrow(s, h.hops);
    this.enter(member, role, h.row.index);
    return q;
  }

  /** `member` acquires it from `inLink`: forwards it on, receives it, or hands it to its shared partner. */
  protected acquire(s: S, member: number, inLink: number): void {
    if (this.analysis.memberDown(member)) return this.dropped(s, member, "member-down", -1);
    // By index: an iterator a table looked up is an allocation, millions of them in a fabric's walk. The list is this
    // depth's (#lists) until the loop is done.
    const hits = this.#rows(s, member, "acquire", this.analysis.member(member).tables.acquire, inLink);
    this.#depth++;
    try {
      this.#acquireHits(s, member, inLink, hits);
    } finally {
      this.#depth--;
    }
  }

  /** acquire()'s rows that take it, each in turn. */
  #acquireHits(s: S, member: number, inLink: number, hits: readonly Hit[]): void {
    for (let k = 0; k < hits.length; k++) {
      const h = hits[k] as Hit;
      const q = this.#take(s, member, "acquire", h);
      this.acquired(q, member);
      const a = h.row.row.action;
      if (a.kind === "forward" || a.kind === "both") this.forward(q, member, inLink);
      if (a.kind === "receive" || a.kind === "both") this.receive(q, member);
      if (a.kind === "shared-acquire") {
        // SharedAcquire (seed §5.3.2): as if it arrived at the overlay's end of the shared link.
        const p = this.partner(member);
        if (p !== undefined) this.acquire(q, p, inLink);
      }
      this.leave();
    }
  }

  /** `member` forwards it from `arrival`: drops it, hands it to its shared partner, or transmits it on out-links. */
  protected forward(s: S, member: number, arrival: Arrival): void {
    if (this.analysis.memberDown(member)) return this.dropped(s, member, "member-down", -1);
    const v = this.analysis.member(member);
    const decrements = decrementsFrom(v, arrival);
    const hits = this.#rows(s, member, "forward", v.tables.forward, arrival);
    this.#depth++;
    try {
      this.#forwardHits(s, member, decrements, hits);
    } finally {
      this.#depth--;
    }
  }

  /** forward()'s rows that take it, each in turn. */
  #forwardHits(s: S, member: number, decrements: boolean, hits: readonly Hit[]): void {
    for (let k = 0; k < hits.length; k++) {
      const h = hits[k] as Hit;
      const q = this.#take(s, member, "forward", h);
      const a = h.row.row.action;
      if (a.kind === "drop" || (a.kind === "out" && a.outLinks.length === 0)) {
        this.dropped(q, member, "forward-drop", h.row.index);
      } else if (a.kind === "shared-forward") {
        // SharedForward: the underlay's shared member forwards it, marked as handed over.
        const p = this.partner(member);
        if (p !== undefined) this.forward(q, p, "shared");
      } else if (a.kind === "out") {
        let go: S | undefined = q;
        if (decrements) {
          const { next, expired } = decrement(this.hops(q));
          if (expired !== 0n) this.dropped(this.narrow(q, expired), member, "ttl-expired", h.row.index);
          go = next === 0n ? undefined : this.decremented(q, expired, next);
        }
        if (a.outLinks.length > 1) this.replicated(member, h.row);
        if (go !== undefined) for (const outLink of a.outLinks) this.transmit(go, member, outLink);
        if (decrements && go !== undefined) this.restored();
      }
      this.leave();
    }
  }

  /** `member` transmits it on `outLink`: its transmit row says how (no transmit table: every out-link is physical). */
  protected transmit(s: S, member: number, outLink: number): void {
    const v = this.analysis.member(member);
    const link = this.linkOut(member, outLink);
    let via: ViaSession | undefined;
    if (v.transmit === undefined) {
      if (link < 0) return this.missed(s, member, "transmit", outLink, this.hops(s));
    } else {
      const t = transmitRow(v, outLink);
      if (t === undefined) return this.missed(s, member, "transmit", outLink, this.hops(s));
      this.enter(member, "transmit", t.index);
      if (t.row.action.kind === "session") via = t.row.action;
    }
    if (via === undefined && link < 0) this.dropped(s, member, "no-link", -1);
    else if (link >= 0 && this.analysis.linkDown(link)) this.dropped(s, member, "link-down", -1);
    else this.leaves(s, member, link, via);
    if (v.transmit !== undefined) this.leave();
  }

  /** `member` receives it: each receive row that takes it delivers it or pops it into an overlay. */
  protected receive(s: S, member: number): void {
    const hits = this.#rows(s, member, "receive", this.analysis.member(member).tables.receive, undefined);
    this.#depth++;
    try {
      for (let k = 0; k < hits.length; k++) {
        const h = hits[k] as Hit;
        this.received(this.#take(s, member, "receive", h), member, h.row);
        this.leave();
      }
    } finally {
      this.#depth--;
    }
  }
}
