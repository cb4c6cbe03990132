// The model's one-step relation, walked for one header class inside one
// component (./analysis.ts): seed §2.6.2's `reachable` — a member transmits a
// header on an out-link (its forward table maps it there from some in-link or
// from itself), and every member that acquires it after zero or more steps
// (acquire `forward`, forward table, transmit) is reached — with §5.3's
// hand-overs in a subduction group (`do: shared`, `out: shared`, in-link
// `shared`). A virtual link is a link here, as in the model: how the underlay
// carries it is the layering demand's business.
//
// What the walk meets is reported as events: acquisitions (the relation's
// tuples), receptions (the traffic model's end), misses (black holes), drops,
// replication and loops. The hop-limit values travel with the class as a set
// (./hops.ts): forwarding in a `ttl: decrement` network lowers them, and the
// relation's tuples give them as the origin transmitted them.
//
// The walk also counts links crossed, as the data plane does (its hop limit,
// `strata run --hop-limit`): every crossing is one, and a virtual link costs
// what carrying it costs — one, and the crossings of the underlay session
// that implements it (Analysis.linkCost). A crossing past the limit is the
// data plane's `loop` drop. A state first met on a longer path may be walked
// again from a shorter one, but only when the limit cut something below it;
// without such a cut the walk is the same as one that counts nothing. The
// recursion goes one link deeper per crossing, so its depth is bounded by the
// hop limit, not by the description.

import type { Arrival } from "../model/rows.js";
import type { TableRole } from "../wasm/abi.js";
import { type Component, HEADER_ROLES, type MemberView, type Walkable } from "./members.js";
import { decrement, undecrement } from "./hops.js";
import type { Hit, IndexedRow } from "./tables.js";

/** One step of a path: a row that matched (or a table that missed), or a link crossed. */
export type Step =
  | { readonly kind: "row"; readonly member: number; readonly role: TableRole; readonly row: number }
  | { readonly kind: "miss"; readonly member: number; readonly role: TableRole }
  | { readonly kind: "link"; readonly link: number };

export type HoleTable = "acquire" | "forward" | "receive" | "transmit";

/** A class dropped because a table has no row for it: a black hole. */
export interface Hole {
  readonly member: number;
  readonly table: HoleTable;
  /** The in-link it arrived on (acquire, forward), or the out-link it was to leave on (transmit). */
  readonly port: Arrival;
  readonly hops: bigint;
}

export type DropReason = "forward-drop" | "ttl-expired" | "no-link" | "loop";

export interface Drop {
  readonly member: number;
  readonly reason: DropReason;
  readonly row: number;
  readonly hops: bigint;
  /** `loop` (the hop limit): the link whose crossing went past it, and the crossings it would have made. */
  readonly link?: number;
  readonly crossings?: number;
}

export interface WalkEvents {
  /** `member` acquires the class (any acquire row): a tuple of the relation; `hops` as the origin transmitted them. */
  acquired?(origin: number, member: number, hops: bigint): void;
  /** `member` receives it: acquire `receive` or `both`, and a receive row (the traffic model's end); `crossings`: links
   * crossed to get there. */
  received?(origin: number, member: number, hops: bigint, row: IndexedRow, path: () => Step[], crossings: number): void;
  hole?(origin: number, hole: Hole, path: () => Step[]): void;
  drop?(origin: number, drop: Drop, path: () => Step[]): void;
  /** A forward row sends the class on several out-links. */
  replicated?(member: number, row: IndexedRow): void;
  /** The class comes back to `link` (`bounded`: with lower hop limits, so the TTL ends it). */
  loop?(origin: number, link: number, hops: bigint, bounded: boolean, path: () => Step[]): void;
}

const ROW = 1;
const MISS = 2;
const LINK = 3;
const ROLES: readonly TableRole[] = ["acquire", "forward", "transmit", "send", "receive"];

/** Whether some active row of the member's header tables takes only some hop-limit values (it matches the TTL). */
function takesSomeHops(v: MemberView): boolean {
  return HEADER_ROLES.some((role) => {
    const t = v.tables[role];
    return t !== undefined && t.rows.some((r, i) => t.isActive(i) && r.hops !== t.space.allHops);
  });
}

/** Where walks of the relation start: a member forwarding from these in-links (or itself). */
export interface Origin {
  readonly member: number;
  readonly arrivals: readonly Arrival[];
}

/** Hop values walked from a state with `crossings` links behind them, where the hop limit cut the walk below. */
interface CutVisit {
  readonly crossings: number;
  hops: bigint;
}

export class Walker {
  readonly #a: Walkable;
  readonly #hopLimit: number;
  #c!: Component;
  #atom = 0;
  #ev: WalkEvents = {};
  #origin = -1;
  /** Per (link, decrements so far): the hop values already walked from it, for this origin. */
  readonly #visited = new Map<number, bigint>();
  /** Per (link, decrements so far): the walks from it that the hop limit cut (walked again from fewer crossings). */
  readonly #cutVisits = new Map<number, CutVisit[]>();
  /** Crossings the hop limit refused so far: a walk below which this grew was cut. */
  #cuts = 0;
  /** Links on the current path, with the hop values they carried. */
  readonly #onStack = new Map<number, bigint>();
  /** Per link on the current path: the TTL decrements behind it when it was first crossed. */
  readonly #stackDecrements = new Map<number, number>();
  /** The current path, three numbers a step, in the first #pathLen (a typed array: no array shrinking per step). */
  #path = new Int32Array(3 * 64);
  #pathLen = 0;

  constructor(a: Walkable) {
    this.#a = a;
    this.#hopLimit = a.hopLimit;
  }

  /**
   * Every origin of the relation for one class: each member from each in-link and itself, then each inbound external
   * link (origin −1). In-links no forward row names lead to the same walk: one of them stands for the others.
   * `pairs: false` when only what the class meets matters (loops, black holes), not which origin reaches whom: the
   * origins then share what was walked, and each state is walked once for the class, not once per origin. `origins`:
   * only these (loopOrigins), and nothing from outside.
   */
  relation(
    c: Component,
    atom: number,
    ev: WalkEvents,
    o: { readonly pairs?: boolean; readonly origins?: readonly Origin[] } = {},
  ): void {
    const pairs = o.pairs ?? true;
    this.#begin(c, atom, ev);
    if (!pairs) this.#from(-1);
    const from = (member: number, v: MemberView, arrivals: readonly Arrival[]): void => {
      if (pairs) this.#from(member);
      else this.#origin = member;
      for (const arrival of arrivals) this.#forward(v, arrival, c.space.allHops, 0, true, 0);
    };
    if (o.origins !== undefined) {
      for (const { member, arrivals } of o.origins) from(member, this.#a.member(member), arrivals);
      return;
    }
    for (const m of c.members) {
      const v = this.#a.member(m);
      const t = v.tables.forward;
      if (t === undefined) continue;
      from(m, v, t.distinctArrivals(v.inLinks));
      this.#forward(v, "self", c.space.allHops, 0, true, 0);
    }
    for (const l of this.#a.inbound(c)) {
      if (pairs) this.#from(-1);
      else this.#origin = -1;
      this.#cross(l, c.space.allHops, 0, 0);
    }
  }

  /**
   * The origins that meet every loop of a component: a loop passes only through members that pass on what they
   * receive, so it comes in by an in-link such a member sends on (Walkable.loopLinks); what members send themselves,
   * and what hosts and the outside send them, are in no loop. The same for every class: found once.
   */
  loopOrigins(c: Component): Origin[] | "all" {
    // Where the TTL is decremented and a row takes only some of its values, a class may go round only with values no
    // member passes on (a TTL of 255, which only a sender's packet has): every origin is walked.
    if (c.decrements && c.members.some((m) => takesSomeHops(this.#a.member(m)))) return "all";
    const out: Origin[] = [];
    for (const m of c.members) {
      const t = this.#a.member(m).tables.forward;
      const arrivals = t?.distinctArrivals(this.#a.loopLinks(m)) ?? [];
      if (arrivals.length > 0) out.push({ member: m, arrivals });
    }
    return out;
  }

  /** One origin: `member` forwards the class from `arrival` (itself: `self`), with these hop values, `crossings` links
   * behind it. */
  from(
    c: Component,
    atom: number,
    member: number,
    arrival: Arrival,
    hops: bigint,
    ev: WalkEvents,
    crossings = 0,
  ): void {
    this.#begin(c, atom, ev);
    this.#from(member);
    this.#forward(this.#a.member(member), arrival, hops, 0, true, crossings);
  }

  #begin(c: Component, atom: number, ev: WalkEvents): void {
    // A walk cut off by a stack that ran out leaves its path behind.
    this.#onStack.clear();
    this.#stackDecrements.clear();
    this.#pathLen = 0;
    this.#c = c;
    this.#atom = atom;
    this.#ev = ev;
  }

  #from(origin: number): void {
    this.#origin = origin;
    this.#visited.clear();
    if (this.#cutVisits.size > 0) this.#cutVisits.clear();
  }

  #pathThunk = (): Step[] => {
    const out: Step[] = [];
    const p = this.#path;
    for (let i = 0; i < this.#pathLen; i += 3) {
      const kind = p[i];
      const a = p[i + 1] ?? 0;
      const b = p[i + 2] ?? 0;
      if (kind === LINK) out.push({ kind: "link", link: a });
      else if (kind === MISS) out.push({ kind: "miss", member: a, role: ROLES[b] ?? "acquire" });
      else out.push({ kind: "row", member: a, role: ROLES[b % 8] ?? "acquire", row: Math.floor(b / 8) });
    }
    return out;
  };

  #push(kind: number, a: number, b: number): void {
    if (this.#pathLen + 3 > this.#path.length) {
      const grown = new Int32Array(this.#path.length * 2);
      grown.set(this.#path);
      this.#path = grown;
    }
    this.#path[this.#pathLen] = kind;
    this.#path[this.#pathLen + 1] = a;
    this.#path[this.#pathLen + 2] = b;
    this.#pathLen += 3;
  }

  #pop(): void {
    this.#pathLen -= 3;
  }

  #row(member: number, role: TableRole, row: number): void {
    this.#push(ROW, member, row * 8 + ROLES.indexOf(role));
  }

  #miss(member: number, role: TableRole, hole: Hole): void {
    if (this.#ev.hole === undefined) return;
    this.#push(MISS, member, ROLES.indexOf(role));
    this.#ev.hole(this.#origin, hole, this.#pathThunk);
    this.#pop();
  }

  /** Crosses `link` with `crossings` links behind: each receiver in the component acquires what the hop limit lets
   * through. */
  #cross(link: number, hops: bigint, d: number, crossings: number): void {
    const c = this.#c;
    const stacked = this.#onStack.get(link);
    if (stacked !== undefined) {
      // Back on a link of the path: the same values go round for ever; lower ones (a TTL decremented since the link was
      // crossed) until they expire.
      const same = stacked & hops;
      if (same !== 0n || c.decrements) {
        if (this.#ev.loop !== undefined) {
          const bounded = same === 0n || d > (this.#stackDecrements.get(link) ?? d);
          this.#push(LINK, link, 0);
          this.#ev.loop(this.#origin, link, undecrement(hops, d), bounded, this.#pathThunk);
          this.#pop();
        }
      }
    }
    const key = link * 512 + d;
    const fresh = this.#fresh(key, hops, crossings);
    if (fresh === 0n) return;
    const cutsBefore = this.#cuts;
    this.#onStack.set(link, (stacked ?? 0n) | fresh);
    if (stacked === undefined) this.#stackDecrements.set(link, d);
    this.#push(LINK, link, 0);
    const l = this.#a.topology.link(link);
    l.receivers.forEach((r, i) => {
      if (c.has[r.member] !== 1) return;
      const after = crossings + this.#a.linkCost(link, i);
      if (after > this.#hopLimit) {
        // The data plane drops it on this link as a loop: its hop limit is reached.
        this.#cuts++;
        const at = l.sender >= 0 ? l.sender : r.member;
        const drop: Drop = { member: at, reason: "loop", row: -1, hops: undecrement(fresh, d), link, crossings: after };
        this.#ev.drop?.(this.#origin, drop, this.#pathThunk);
        return;
      }
      this.#acquire(this.#a.member(r.member), r.inLink, fresh, d, after);
    });
    this.#pop();
    if (stacked === undefined) {
      this.#onStack.delete(link);
      this.#stackDecrements.delete(link);
    } else this.#onStack.set(link, stacked);
    if (this.#cuts !== cutsBefore || this.#cutVisits.size > 0)
      this.#walked(key, fresh, crossings, this.#cuts !== cutsBefore);
  }

  /**
   * The hop values of `hops` still to walk from state `key` with `crossings` links behind: those never walked from it,
   * and those walked from it with more crossings where the hop limit cut the walk. Values left out because a walk
   * from them was cut count as a cut here too.
   */
  #fresh(key: number, hops: bigint, crossings: number): bigint {
    const seen = this.#visited.get(key) ?? 0n;
    let covered = seen;
    const cut = this.#cutVisits.get(key);
    if (cut !== undefined) {
      for (const v of cut) {
        if (v.crossings > crossings) covered &= ~v.hops;
        else if ((v.hops & hops) !== 0n) this.#cuts++;
      }
    }
    const fresh = hops & ~covered;
    if (fresh !== 0n) this.#visited.set(key, seen | fresh);
    return fresh;
  }

  /** `hops` were walked from `key` with `crossings` behind: a cut walk is kept (fewer crossings may go further), and
   * cut walks with as many crossings or more are superseded. */
  #walked(key: number, hops: bigint, crossings: number, cut: boolean): void {
    const list = this.#cutVisits.get(key);
    if (list !== undefined) for (const v of list) if (v.crossings >= crossings) v.hops &= ~hops;
    if (!cut) return;
    if (list === undefined) this.#cutVisits.set(key, [{ crossings, hops }]);
    else list.push({ crossings, hops });
  }

  #acquire(v: MemberView, port: number, hops: bigint, d: number, crossings: number): void {
    const hits: Hit[] = [];
    const t = v.tables.acquire;
    const miss = t === undefined ? hops : t.lookup(port, this.#atom, hops, hits);
    if (miss !== 0n)
      this.#miss(v.index, "acquire", { member: v.index, table: "acquire", port, hops: undecrement(miss, d) });
    for (const h of hits) {
      this.#ev.acquired?.(this.#origin, v.index, undecrement(h.hops, d));
      this.#row(v.index, "acquire", h.row.index);
      const a = h.row.row.action;
      if (a.kind === "forward" || a.kind === "both") this.#forward(v, port, h.hops, d, false, crossings);
      if (a.kind === "receive" || a.kind === "both") this.#receive(v, h.hops, d, crossings);
      if (a.kind === "shared-acquire" && v.partner !== undefined && this.#c.shared && this.#c.has[v.partner] === 1) {
        // SharedAcquire (seed §5.3.2): as if it arrived at the overlay's end of the shared link.
        this.#acquire(this.#a.member(v.partner), port, h.hops, d, crossings);
      }
      this.#pop();
    }
  }

  #receive(v: MemberView, hops: bigint, d: number, crossings: number): void {
    const hits: Hit[] = [];
    const t = v.tables.receive;
    const miss = t === undefined ? hops : t.lookup(undefined, this.#atom, hops, hits);
    if (miss !== 0n)
      this.#miss(v.index, "receive", {
        member: v.index,
        table: "receive",
        port: undefined,
        hops: undecrement(miss, d),
      });
    if (this.#ev.received === undefined) return;
    for (const h of hits) {
      this.#row(v.index, "receive", h.row.index);
      this.#ev.received(this.#origin, v.index, undecrement(h.hops, d), h.row, this.#pathThunk, crossings);
      this.#pop();
    }
  }

  /** Forwarding at `v` from `arrival`; at an origin a miss is no black hole (the origin never had the packet). */
  #forward(v: MemberView, arrival: Arrival, hops: bigint, d: number, origin: boolean, crossings: number): void {
    const hits: Hit[] = [];
    const t = v.tables.forward;
    const miss = t === undefined ? hops : t.lookup(arrival, this.#atom, hops, hits);
    if (miss !== 0n && !origin)
      this.#miss(v.index, "forward", { member: v.index, table: "forward", port: arrival, hops: undecrement(miss, d) });
    for (const h of hits) {
      this.#row(v.index, "forward", h.row.index);
      const a = h.row.row.action;
      if (a.kind === "shared-forward") {
        // SharedForward: the underlay's shared member forwards it, marked as handed over.
        if (v.partner !== undefined && this.#c.shared && this.#c.has[v.partner] === 1)
          this.#forward(this.#a.member(v.partner), "shared", h.hops, d, origin, crossings);
      } else if (a.kind === "drop" || (a.kind === "out" && a.outLinks.length === 0)) {
        this.#drop(v, "forward-drop", h.row.index, h.hops, d);
      } else if (a.kind === "out") {
        let go = h.hops;
        let dd = d;
        if (v.decrements && arrival !== "self") {
          const { next, expired } = decrement(go);
          if (expired !== 0n) this.#drop(v, "ttl-expired", h.row.index, expired, d);
          go = next;
          // The relation's header is what the origin transmits: its own decrement comes before.
          if (!origin) dd = d + 1;
        }
        if (a.outLinks.length > 1) this.#ev.replicated?.(v.index, h.row);
        if (go !== 0n) for (const port of a.outLinks) this.#transmit(v, port, go, dd, crossings);
      }
      this.#pop();
    }
  }

  #drop(v: MemberView, reason: DropReason, row: number, hops: bigint, d: number): void {
    this.#ev.drop?.(this.#origin, { member: v.index, reason, row, hops: undecrement(hops, d) }, this.#pathThunk);
  }

  #transmit(v: MemberView, port: number, hops: bigint, d: number, crossings: number): void {
    const t = v.transmit;
    let physical: boolean;
    if (t === undefined) {
      // No transmit table written: every out-link is physical (docs/spec.md).
      if (this.#a.topology.sends(v.index, port).length === 0)
        return this.#miss(v.index, "transmit", {
          member: v.index,
          table: "transmit",
          port,
          hops: undecrement(hops, d),
        });
      physical = true;
    } else {
      const i = t.spec.rows.findIndex((r, k) => r.out === port && t.active[k] === true);
      const row = t.spec.rows[i];
      if (row === undefined)
        return this.#miss(v.index, "transmit", {
          member: v.index,
          table: "transmit",
          port,
          hops: undecrement(hops, d),
        });
      physical = row.action.kind === "physical";
      this.#row(v.index, "transmit", i);
    }
    const [link] = this.#a.topology.sends(v.index, port);
    if (link === undefined) {
      if (physical) this.#drop(v, "no-link", -1, hops, d);
    } else {
      this.#cross(link.index, hops, d, crossings);
    }
    if (t !== undefined) this.#pop();
  }
}
