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
//
// The step at each table is ./step.ts's, the walk across layers' too
// (./explore.ts); what is this walk's own is a crossing: the states walked,
// the links on the path (loops), and the hop limit's count.

import type { Arrival } from "../model/rows.js";
import type { TableRole } from "../wasm/abi.js";
import { type Component, takesSomeHops, type Walkable } from "./members.js";
import { undecrement } from "./hops.js";
import { following, type OriginGroups, type ReachedAlike } from "./origin-groups.js";
import { type Reached, SharedWalk, tellsInLinks } from "./shared-walk.js";
import { WalkPath } from "./walk-path.js";
import { WalkVisits } from "./walk-visits.js";
import { type HoleTable, type RowDrop, type Step, Stepper, type ViaSession } from "./step.js";
import type { IndexedRow } from "./tables.js";

export type { HoleTable, Step } from "./step.js";
export type { Reached } from "./shared-walk.js";

/** A class dropped because a table has no row for it: a black hole. */
export interface Hole {
  readonly member: number;
  readonly table: HoleTable;
  /** The in-link it arrived on (acquire, forward), or the out-link it was to leave on (transmit). */
  readonly link: Arrival;
  readonly hops: bigint;
}

export type DropReason = RowDrop | "loop";

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

/** Where walks of the relation start: a member forwarding from these in-links (or itself). */
export interface Origin {
  readonly member: number;
  readonly arrivals: readonly Arrival[];
}

/** Thrown to leave reach() where only relation()'s walk says what happens: a link met again, the hop limit reached. */
const INEXACT = new Error("the walk met a loop or the hop limit");

/**
 * The walk's state is the class's hop values (the step's `S`); the rest of where it is, kept in fields and put back as
 * the recursion returns: decrements since the origin transmitted the class, links crossed, and whether it is at the
 * origin still.
 */
export class Walker extends Stepper<bigint> {
  readonly #hopLimit: number;
  #c!: Component;
  #atom = 0;
  #ev: WalkEvents = {};
  #origin = -1;
  /** TTL decrements since the origin transmitted the class. */
  #d = 0;
  /** Links crossed, the layers' below counted (the hop limit's count). */
  #crossings = 0;
  /** At the origin's forward table still: a miss there is no black hole (the origin never had the packet). */
  #atOrigin = false;
  /** Per (link, decrements so far): what this origin's walk has walked from it. */
  readonly #visits = new WalkVisits();
  /** Links on the current path, with the hop values they carried. */
  readonly #onStack = new Map<number, bigint>();
  /** Per link on the current path: the TTL decrements behind it when it was first crossed. */
  readonly #stackDecrements = new Map<number, number>();
  /** The current path. */
  readonly #path = new WalkPath();
  /** reach(): the class's acquisitions walked, and what the current origin reached. */
  #shared: SharedWalk | undefined;
  #sharedKept: SharedWalk | undefined;
  /** #reachGrouped's groups whose followers are told with their first member, for the class being walked. */
  #alike = new Uint8Array(0);

  constructor(a: Walkable) {
    super(a);
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
    o: { readonly pairs?: boolean; readonly origins?: readonly Origin[]; readonly reached?: Reached } = {},
  ): void {
    const pairs = o.pairs ?? true;
    this.#begin(c, atom, ev);
    if (!pairs) this.#from(-1);
    const from = (member: number): void => {
      if (pairs) this.#from(member);
      else this.#origin = member;
      this.#shared?.origin();
    };
    const told = (origin: number): void => {
      if (this.#shared !== undefined) o.reached?.(origin, this.#shared.reached, this.#shared.reachedLen);
    };
    if (o.origins !== undefined) {
      for (const { member, arrivals } of o.origins) {
        from(member);
        for (const arrival of arrivals) this.#start(c.space.allHops, member, arrival, 0);
      }
      return;
    }
    for (const m of c.members) {
      const v = this.analysis.member(m);
      const t = v.tables.forward;
      if (t === undefined) continue;
      from(m);
      for (const arrival of t.distinctArrivals(v.inLinks)) this.#start(c.space.allHops, m, arrival, 0);
      this.#start(c.space.allHops, m, "self", 0);
      told(m);
    }
    this.#fromOutside(c, from, told);
  }

  /** The origins outside the component: each inbound link (origin −1). */
  #fromOutside(c: Component, from: (member: number) => void, told: (origin: number) => void): void {
    for (const l of this.analysis.inbound(c)) {
      if (this.analysis.linkDown(l)) continue; // what comes from outside on it never arrives
      from(-1);
      this.#d = 0;
      this.#crossings = 0;
      this.#atOrigin = false;
      this.#cross(l, c.space.allHops);
      told(-1);
    }
  }

  /**
   * relation()'s walk with `pairs`, each member's acquisition walked once for the class, whatever origin meets it
   * (./shared-walk.ts): what an origin reaches is told once for it (`reached`), not member by member. Its holes are
   * relation()'s, each first met from the same origin by the same path. A class that comes back to a link or meets the
   * hop limit, where what happens depends on the path, is left to relation(): false, its events so far thrown away.
   */
  reach(
    c: Component,
    atom: number,
    ev: WalkEvents,
    reached: Reached,
    grouped?: { readonly groups: OriginGroups; readonly alike: ReachedAlike },
  ): boolean {
    // One for the component's classes, cleared a class (a new one a class was 300 KB zeroed at 20,000 members).
    const links = this.analysis.topology.links.length;
    const kept = this.#sharedKept;
    this.#shared = kept?.fits(c.has.length, links) === true ? kept : new SharedWalk(c.has.length, links);
    this.#shared.clear(grouped?.groups);
    this.#sharedKept = this.#shared;
    try {
      if (grouped === undefined) this.relation(c, atom, ev, { reached });
      else this.#reachGrouped(this.#shared, c, atom, ev, reached, grouped);
      return true;
    } catch (err) {
      if (err !== INEXACT) throw err;
      return false;
    } finally {
      this.#shared = undefined;
    }
  }

  /** reach()'s walk from the origins of `groups` (./origin-groups.ts): a group's followers told with its first member
   * (`alike`) when they reach what it reached, else walked each as relation() walks them, in the same order. */
  #reachGrouped(
    shared: SharedWalk,
    c: Component,
    atom: number,
    ev: WalkEvents,
    reached: Reached,
    o: { readonly groups: OriginGroups; readonly alike: ReachedAlike },
  ): void {
    this.#begin(c, atom, ev);
    const { members, arrivals, groupOf, groups, steps } = o.groups;
    if (this.#alike.length < groups.length) this.#alike = new Uint8Array(groups.length);
    const alike = this.#alike.fill(0, 0, groups.length);
    steps.clear();
    for (let i = 0; i < members.length; i++) {
      const g = groupOf[i] ?? -1;
      if (g >= 0 && alike[g] === 1) continue;
      const m = members[i] ?? -1;
      if (g < 0 && steps.skips(m, arrivals[i] ?? [], atom, shared, this.#hopLimit)) continue;
      this.#from(m);
      shared.origin();
      for (const arrival of arrivals[i] ?? []) this.#start(c.space.allHops, m, arrival, 0);
      reached(m, shared.reached, shared.reachedLen);
      const group = groups[g];
      if (group === undefined || group.members[0] !== m) continue;
      // The first crossings are made at the origin: no TTL decrement counted yet.
      const f = following(shared, group, (r) => r * 512);
      if (f === "inexact") throw INEXACT;
      if (f === "alike") {
        alike[g] = 1;
        o.alike(group.members, 1, shared.reached, shared.reachedLen);
      }
    }
    steps.tell(o.alike);
    const from = (member: number): void => {
      this.#from(member);
      shared.origin();
    };
    this.#fromOutside(c, from, (origin) => reached(origin, shared.reached, shared.reachedLen));
  }

  /**
   * The origins that meet every loop of a component: a loop passes only through members that pass on what they
   * receive, so it comes in by an in-link such a member sends on (Walkable.loopLinks); what members send themselves,
   * and what hosts and the outside send them, are in no loop. The same for every class: found once.
   */
  loopOrigins(c: Component): Origin[] | "all" {
    // Where the TTL is decremented and a row takes only some of its values, a class may go round only with values no
    // member passes on (a TTL of 255, which only a sender's packet has): every origin is walked.
    if (c.decrements && c.members.some((m) => takesSomeHops(this.analysis.member(m)))) return "all";
    const out: Origin[] = [];
    for (const m of c.members) {
      const t = this.analysis.member(m).tables.forward;
      const arrivals = t?.distinctArrivals(this.analysis.loopLinks(m)) ?? [];
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
    this.#start(hops, member, arrival, crossings);
  }

  #begin(c: Component, atom: number, ev: WalkEvents): void {
    // A walk cut off by a stack that ran out leaves its path behind.
    this.#onStack.clear();
    this.#stackDecrements.clear();
    this.#path.clear();
    this.#c = c;
    this.#atom = atom;
    this.#ev = ev;
  }

  #from(origin: number): void {
    this.#origin = origin;
    this.#visits.clear();
  }

  /** The origin `member` forwards the class from `arrival` with `crossings` links behind. */
  #start(hops: bigint, member: number, arrival: Arrival, crossings: number): void {
    this.#d = 0;
    this.#crossings = crossings;
    this.#atOrigin = true;
    this.forward(hops, member, arrival);
  }

  protected atom(): number {
    return this.#atom;
  }

  protected hops(hops: bigint): bigint {
    return hops;
  }

  protected narrow(_hops: bigint, taken: bigint): bigint {
    return taken;
  }

  /** The relation's header is what the origin transmits: its own decrement comes before. */
  protected decremented(_hops: bigint, _expired: bigint, next: bigint): bigint {
    if (!this.#atOrigin) this.#d++;
    return next;
  }

  protected override restored(): void {
    if (!this.#atOrigin) this.#d--;
  }

  protected enter(member: number, role: TableRole, row: number): void {
    this.#path.row(member, role, row);
  }

  protected leave(): void {
    this.#path.pop();
  }

  /** A black hole, but not at an origin's forward table: the origin never had the packet. */
  protected missed(_hops: bigint, member: number, table: HoleTable, arrival: Arrival, miss: bigint): void {
    if (this.#shared !== undefined && typeof arrival === "number" && table !== "transmit")
      this.#shared.inLinkHole = true;
    if (this.#ev.hole === undefined || (table === "forward" && this.#atOrigin)) return;
    this.#path.miss(member, table);
    this.#ev.hole(this.#origin, { member, table, link: arrival, hops: undecrement(miss, this.#d) }, this.#path.steps);
    this.#path.pop();
  }

  protected dropped(hops: bigint, member: number, reason: RowDrop, row: number): void {
    this.#ev.drop?.(this.#origin, { member, reason, row, hops: undecrement(hops, this.#d) }, this.#path.steps);
  }

  /** A hand-over is a step within a subduction group, to a partner in the component. */
  protected partner(member: number): number | undefined {
    const p = this.analysis.member(member).partner;
    return p !== undefined && this.#c.shared && this.#c.has[p] === 1 ? p : undefined;
  }

  protected acquired(hops: bigint, member: number): void {
    if (this.#shared !== undefined) this.#shared.acquired(member);
    else this.#ev.acquired?.(this.#origin, member, undecrement(hops, this.#d));
  }

  protected received(hops: bigint, member: number, row: IndexedRow): void {
    this.#ev.received?.(this.#origin, member, undecrement(hops, this.#d), row, this.#path.steps, this.#crossings);
  }

  protected override replicated(member: number, row: IndexedRow): void {
    this.#ev.replicated?.(member, row);
  }

  /** A virtual link is a link here, as in the model: how its session is carried is the layering demand's business. */
  protected leaves(hops: bigint, _member: number, link: number, _via: ViaSession | undefined): void {
    if (link >= 0) this.#cross(link, hops);
  }

  /** Crosses `link` with the walk's crossings behind: each receiver in the component acquires what the hop limit lets
   * through. */
  #cross(link: number, hops: bigint): void {
    if (this.#shared !== undefined) return this.#crossShared(this.#shared, link, hops);
    const d = this.#d;
    const crossings = this.#crossings;
    const atOrigin = this.#atOrigin;
    const c = this.#c;
    const stacked = this.#onStack.get(link);
    if (stacked !== undefined) {
      // Back on a link of the path: the same values go round for ever; lower ones (a TTL decremented since the link was
      // crossed) until they expire.
      const same = stacked & hops;
      if (same !== 0n || c.decrements) {
        if (this.#ev.loop !== undefined) {
          const bounded = same === 0n || d > (this.#stackDecrements.get(link) ?? d);
          this.#path.link(link);
          this.#ev.loop(this.#origin, link, undecrement(hops, d), bounded, this.#path.steps);
          this.#path.pop();
        }
      }
    }
    const key = link * 512 + d;
    const fresh = this.#visits.fresh(key, hops, crossings);
    if (fresh === 0n) return;
    const cutsBefore = this.#visits.cuts;
    this.#onStack.set(link, (stacked ?? 0n) | fresh);
    if (stacked === undefined) this.#stackDecrements.set(link, d);
    this.#path.link(link);
    const l = this.analysis.topology.link(link);
    l.receivers.forEach((r, i) => {
      if (c.has[r.member] !== 1) return;
      const after = crossings + this.analysis.linkCost(link, i);
      if (after > this.#hopLimit) {
        // The data plane drops it on this link as a loop: its hop limit is reached.
        this.#visits.cuts++;
        const at = l.sender >= 0 ? l.sender : r.member;
        const drop: Drop = { member: at, reason: "loop", row: -1, hops: undecrement(fresh, d), link, crossings: after };
        this.#ev.drop?.(this.#origin, drop, this.#path.steps);
        return;
      }
      this.#crossings = after;
      this.#atOrigin = false;
      this.acquire(fresh, r.member, r.inLink);
      this.#crossings = crossings;
      this.#atOrigin = atOrigin;
    });
    this.#path.pop();
    if (stacked === undefined) {
      this.#onStack.delete(link);
      this.#stackDecrements.delete(link);
    } else this.#onStack.set(link, stacked);
    if (this.#visits.cuts !== cutsBefore || this.#visits.anyCut)
      this.#visits.walked(key, fresh, crossings, this.#visits.cuts !== cutsBefore);
  }

  /** reach()'s crossing: each receiver acquires it, and what a link's receivers reach is kept for them together when
   * they are several (every leaf's anycast link to the same spines: found once, not spine by spine), as for an
   * acquisition. A link on the path, or a crossing past the hop limit, ends it. */
  #crossShared(shared: SharedWalk, link: number, hops: bigint): void {
    if (shared.onPath(link)) throw INEXACT;
    const crossings = this.#crossings;
    const c = this.#c;
    const atOrigin = this.#atOrigin;
    const l = this.analysis.topology.link(link);
    shared.enter(link);
    this.#path.link(link);
    const key = l.receivers.length > 1 ? shared.together(link, this.#d, this.analysis, c) : undefined;
    const known = key === undefined ? undefined : shared.find(key, hops, -1);
    if (known !== undefined && !shared.reuse(known, crossings, this.#hopLimit)) throw INEXACT;
    const opened = key === undefined || known !== undefined ? undefined : shared.open(key, crossings);
    for (let i = 0; i < l.receivers.length && known === undefined; i++) {
      const r = l.receivers[i];
      if (r === undefined || c.has[r.member] !== 1) continue;
      const after = crossings + this.analysis.linkCost(link, i);
      if (after > this.#hopLimit) throw INEXACT;
      if (after > shared.deepest) shared.deepest = after;
      this.#crossings = after;
      this.#atOrigin = false;
      this.acquire(hops, r.member, r.inLink);
      this.#crossings = crossings;
      this.#atOrigin = atOrigin;
    }
    if (opened !== undefined) shared.close(opened, hops, -1, false);
    this.#path.pop();
    shared.leave();
  }

  /**
   * reach()'s acquisition: one walked for the class before, with the same hop values as many TTL decrements from the
   * origin (from any in-link, when the member's tables tell none apart and no in-link's black hole is below), is not
   * walked again: what it reached is reached from here. Unless the walk from here would come back to a link on the
   * path, or cross more links than the hop limit: then reach() ends.
   */
  protected override acquire(hops: bigint, member: number, inLink: number): void {
    const shared = this.#shared;
    if (shared === undefined) return super.acquire(hops, member, inLink);
    const key = member * 512 + this.#d;
    const crossings = this.#crossings;
    const known = shared.find(key, hops, inLink);
    if (known !== undefined) {
      if (!shared.reuse(known, crossings, this.#hopLimit)) throw INEXACT;
      return;
    }
    const opened = shared.open(key, crossings);
    super.acquire(hops, member, inLink);
    shared.close(opened, hops, inLink, tellsInLinks(this.analysis.member(member)));
  }
}
