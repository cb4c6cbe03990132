// The origins of Walker.reach (./walk.ts) whose first step is the same for
// every header class: a member whose forward table finds the same rows for
// every class (a host's "everything out") and sends each on a link with one
// receiver. Members whose first steps cross to the same receivers with the same
// hop values — the hosts under one leaf — form a group: per class its first
// member is walked, and when each acquisition it crossed to was walked for any
// in-link (./shared-walk.ts: findForAny), every other member of the group
// reaches what the first reached, told once for them all, not walked member by
// member. Otherwise each is walked as any origin is. In a dense leaf-spine of
// 20,000 members this leaves a few hundred origins a class to walk, not 20,000.

import type { Arrival } from "../model/rows.js";
import type { Component, Walkable } from "./members.js";
import { holds, type Shared, type SharedWalk } from "./shared-walk.js";
import { decrementsFrom, passedOn } from "./step.js";
import type { Hit } from "./tables.js";

/** A link an origin's walk crosses first, to its one receiver `receiver` (on in-link `inLink`) with `hops`. */
export interface FirstCrossing {
  readonly link: number;
  readonly receiver: number;
  readonly inLink: number;
  readonly hops: bigint;
  readonly cost: number;
}

export interface OriginGroup {
  /** The members, in the component's order: the first is walked. */
  readonly members: Int32Array;
  /** Per member, its first crossings in the order its walk makes them: the same receivers and hops for each. */
  readonly crossings: readonly (readonly FirstCrossing[])[];
  /** Per first crossing, the links the members after the first cross there. */
  readonly followerLinks: readonly ReadonlySet<number>[];
}

/** relation()'s origins, found once for the classes walked together (the tables do not change in between). */
export interface OriginGroups {
  /** The component's members with a forward table, in order. */
  readonly members: Int32Array;
  /** Per member of `members`: the arrivals walked from it (the in-links its table tells apart, then itself). */
  readonly arrivals: readonly (readonly Arrival[])[];
  /** Per member of `members`: its group (−1: none). */
  readonly groupOf: Int32Array;
  readonly groups: readonly OriginGroup[];
  /** Per class, the origins whose first step meets only what was walked before. */
  readonly steps: FirstSteps;
}

/** What Walker.reach tells of a group's followers, `origins[from..)`, that reach what its first member reached:
 * `members[0..count)`, some more than once. */
export type ReachedAlike = (origins: Int32Array, from: number, members: Int32Array, count: number) => void;

/** How a group's followers go for one class: told with the first ("alike"), walked each ("apart"), or the walk from one
 * would come back to its own link ("inexact": reach() cannot say). */
export type Following = "alike" | "apart" | "inexact";

/** The first crossings of a walk from member `m` from `arrivals`, the same for every class, and a key saying them (the
 * in-links and links aside); undefined when its first step depends on the class or does more than cross links. */
function firstCrossings(
  a: Walkable,
  linkOut: LinkOut,
  c: Component,
  m: number,
  arrivals: readonly Arrival[],
): { key: string; crossings: FirstCrossing[] } | undefined {
  const v = a.member(m);
  const t = v.tables.forward;
  if (t === undefined || !t.sameForEveryClass || v.transmit !== undefined || v.partner !== undefined) return undefined;
  if (a.memberDown(m)) return undefined;
  const crossings: FirstCrossing[] = [];
  const key: string[] = [];
  const hits: Hit[] = [];
  for (const arrival of arrivals) {
    hits.length = 0;
    // Any class: the table finds the same rows for each.
    t.lookup(arrival, 0, v.space.allHops, hits);
    key.push("|");
    for (const h of hits) {
      const action = h.row.row.action;
      if (action.kind === "drop") continue;
      if (action.kind !== "out") return undefined;
      // Forwarding what came in lowers the hop limit: the step's to work out (./step.ts), not grouped.
      if (decrementsFrom(v, arrival)) return undefined;
      const hops = h.hops;
      for (const outLink of action.outLinks) {
        const link = linkOut(m, outLink);
        if (link < 0 || a.linkDown(link)) return undefined;
        const receivers = a.topology.link(link).receivers;
        const r = receivers[0];
        if (r === undefined || receivers.length !== 1 || c.has[r.member] !== 1) return undefined;
        const cost = a.linkCost(link, 0);
        crossings.push({ link, receiver: r.member, inLink: r.inLink, hops, cost });
        key.push(`${r.member}/${cost}/${hops.toString(36)}`);
      }
    }
  }
  return { key: key.join(" "), crossings };
}

/** The link `member` sends on with identifier `outLink` (−1: none), as the walk finds it (Stepper.linkOut). */
export type LinkOut = (member: number, outLink: number) => number;

/** The origins of component `c` and their groups. */
export function originGroups(a: Walkable, linkOut: LinkOut, c: Component): OriginGroups {
  const members: number[] = [];
  const arrivals: (readonly Arrival[])[] = [];
  const groupOf: number[] = [];
  const byKey = new Map<string, { members: number[]; crossings: FirstCrossing[][] }>();
  const keyOf: (string | undefined)[] = [];
  for (const m of c.members) {
    const v = a.member(m);
    const t = v.tables.forward;
    if (t === undefined) continue;
    const from: Arrival[] = [...t.distinctArrivals(v.inLinks), "self"];
    const first = firstCrossings(a, linkOut, c, m, from);
    members.push(m);
    arrivals.push(from);
    keyOf.push(first?.key);
    if (first === undefined) continue;
    const g = byKey.get(first.key);
    if (g === undefined) byKey.set(first.key, { members: [m], crossings: [first.crossings] });
    else {
      g.members.push(m);
      g.crossings.push(first.crossings);
    }
  }
  const groups: OriginGroup[] = [];
  const index = new Map<string, number>();
  for (const [key, g] of byKey) {
    if (g.members.length < 2) continue;
    index.set(key, groups.length);
    const followers = g.crossings.slice(1);
    const followerLinks = (g.crossings[0] ?? []).map((_, i) => new Set(followers.map((xs) => xs[i]?.link ?? -1)));
    groups.push({ members: Int32Array.from(g.members), crossings: g.crossings, followerLinks });
  }
  for (const key of keyOf) groupOf.push(key === undefined ? -1 : (index.get(key) ?? -1));
  const steps = new FirstSteps(a, linkOut, c);
  return { members: Int32Array.from(members), arrivals, groupOf: Int32Array.from(groupOf), groups, steps };
}

/**
 * After the group's first member was walked for a class: whether the others reach what it reached. They do when each
 * acquisition its first crossings led to was walked for any in-link (so that every member's walk finds it again), and
 * no walk from it comes back to another member's link; the hop limit was met by the first member's walk already.
 */
export function following(shared: SharedWalk, g: OriginGroup, acquiredKey: (member: number) => number): Following {
  const first = g.crossings[0] ?? [];
  const found: Shared[] = [];
  for (const x of first) {
    const s = shared.findForAny(acquiredKey(x.receiver), x.hops);
    if (s === undefined) return "apart";
    found.push(s);
  }
  // A walk from what the first crossed to that crosses a follower's own link there: that follower's walk comes back.
  for (let i = 0; i < found.length; i++) {
    const links = g.followerLinks[i];
    for (const link of found[i]?.links ?? []) if (links?.has(link) === true) return "inexact";
  }
  return "alike";
}

/** The acquisitions an origin's first step meets for one class, by SharedWalk key, hop values, in-link (−1: a link's
 * receivers together), the link crossed to them and the links behind when they are met; and a signature of them. */
interface FirstStep {
  keys: number[];
  hops: bigint[];
  inLinks: number[];
  links: number[];
  behind: number[];
  sig: number[];
}

/** Origins of one class whose first steps met these acquisitions, walked before. */
interface Told {
  readonly found: readonly Shared[];
  readonly origins: number[];
}

/**
 * The origins of one class (Walker.reach) whose first step — a forward table's lookup for the class, then links
 * crossed — meets only acquisitions walked for the class before: what they reach is what those reached, told together
 * at the end of the class, not walked origin by origin. In a dense leaf-spine every leaf but one sends a class up to
 * the same spines, and every spine down to the same leaf: a class's step is looked up at each leaf and spine, and
 * what comes after it is walked once. A step that does more than cross links (a transmit table, a hand-over, a link or
 * member taken down) is walked as any is.
 */
export class FirstSteps {
  readonly #a: Walkable;
  readonly #linkOut: LinkOut;
  readonly #c: Component;
  readonly #hits: Hit[] = [];
  /** Hop-value sets by a small number, for the signatures: the few a walk meets, compared in turn. */
  readonly #hopSets: bigint[] = [];
  /** This class's origins told together, by their step's signature. */
  readonly #told = new Map<number, Told[]>();
  readonly #step: FirstStep = { keys: [], hops: [], inLinks: [], links: [], behind: [], sig: [] };
  readonly #found: Shared[] = [];
  #reached = new Int32Array(64);
  /** Origins told without a walk. */
  told = 0;

  constructor(a: Walkable, linkOut: LinkOut, c: Component) {
    this.#a = a;
    this.#linkOut = linkOut;
    this.#c = c;
  }

  /** A new class: nothing to tell. */
  clear(): void {
    this.#told.clear();
  }

  /**
   * Whether member `m`, walked for class `atom` from `arrivals`, would reach only what acquisitions walked before
   * reached: its first step crosses links only, to acquisitions found in `shared` that the walk would reuse (none
   * crosses the link it came by, none more links than `hopLimit`). It is told with the others that met the same, then.
   */
  skips(m: number, arrivals: readonly Arrival[], atom: number, shared: SharedWalk, hopLimit: number): boolean {
    if (!this.#stepOf(m, arrivals, atom, shared) || !this.#foundAll(shared, hopLimit)) return false;
    const found = this.#found;
    let hash = 0;
    for (const x of this.#step.sig) hash = (Math.imul(hash, 31) + x) | 0;
    const list = this.#told.get(hash);
    const same = list?.find((t) => sameShared(t.found, found));
    if (same !== undefined) same.origins.push(m);
    else if (list !== undefined) list.push({ found: [...found], origins: [m] });
    else this.#told.set(hash, [{ found: [...found], origins: [m] }]);
    this.told++;
    return true;
  }

  /** Each acquisition of #step found in `shared`, in #found, and reused as the walk would reuse it there: none crosses
   * the link it came by, or more links than `hopLimit`. */
  #foundAll(shared: SharedWalk, hopLimit: number): boolean {
    const s = this.#step;
    const found = this.#found;
    found.length = 0;
    for (let k = 0; k < s.keys.length; k++) {
      const link = s.links[k] ?? -1;
      const f = shared.find(s.keys[k] ?? 0, s.hops[k] ?? 0n, s.inLinks[k] ?? -1);
      if (f === undefined || (s.behind[k] ?? 0) + f.depth > hopLimit || holds(f.links, link)) return false;
      found.push(f);
    }
    return true;
  }

  /** Member `m`'s first step for class `atom` from `arrivals`, in #step; false when it does more than cross links to
   * receivers in the component (a miss is no black hole at an origin: it never had the packet). */
  #stepOf(m: number, arrivals: readonly Arrival[], atom: number, shared: SharedWalk): boolean {
    const a = this.#a;
    const v = a.member(m);
    const t = v.tables.forward;
    if (t === undefined || v.transmit !== undefined || a.memberDown(m)) return false;
    const s = this.#step;
    s.keys.length = s.hops.length = s.inLinks.length = s.links.length = s.behind.length = s.sig.length = 0;
    const hits = this.#hits;
    for (const arrival of arrivals) {
      while (hits.length > 0) hits.pop();
      t.lookup(arrival, atom, this.#c.space.allHops, hits);
      s.sig.push(-1);
      for (const h of hits) {
        const action = h.row.row.action;
        if (action.kind === "drop") continue;
        if (action.kind !== "out") return false;
        // Forwarding from an in-link decrements; the walk counts no decrement at its origin (d stays 0).
        const next = decrementsFrom(v, arrival) ? passedOn(h.hops) : h.hops;
        if (next === 0n) continue;
        for (const outLink of action.outLinks) if (!this.#crossing(m, outLink, next, shared)) return false;
      }
    }
    return true;
  }

  /** The crossing of member `m`'s out-link `outLink` with `hops`, added to #step; false when it is not a crossing to
   * receivers in the component. */
  #crossing(m: number, outLink: number, hops: bigint, shared: SharedWalk): boolean {
    const a = this.#a;
    const link = this.#linkOut(m, outLink);
    if (link < 0 || a.linkDown(link)) return false;
    const receivers = a.topology.link(link).receivers;
    const r = receivers[0];
    if (r === undefined) return false;
    const s = this.#step;
    if (receivers.length > 1) {
      // Walker's #crossShared: the receivers' acquisitions together, met before the crossing is counted.
      s.keys.push(shared.together(link, 0, a, this.#c));
      s.inLinks.push(-1);
      s.behind.push(0);
    } else {
      if (this.#c.has[r.member] !== 1) return false;
      s.keys.push(r.member * 512);
      s.inLinks.push(r.inLink);
      s.behind.push(a.linkCost(link, 0));
    }
    let id = this.#hopSets.indexOf(hops);
    if (id < 0) {
      // A signature only sorts the origins into buckets: ids given again after a reset cost a bucket, not a result.
      if (this.#hopSets.length >= 64) this.#hopSets.length = 0;
      id = this.#hopSets.push(hops) - 1;
    }
    s.hops.push(hops);
    s.links.push(link);
    s.sig.push(s.keys[s.keys.length - 1] ?? 0, id);
    return true;
  }

  /** Tells the origins skips() took what they reach: their acquisitions' members, in the order they met them. */
  tell(alike: ReachedAlike): void {
    for (const list of this.#told.values())
      for (const t of list) {
        let n = 0;
        for (const f of t.found) {
          if (n + f.members.length > this.#reached.length) {
            const grown = new Int32Array(2 * (n + f.members.length));
            grown.set(this.#reached.subarray(0, n));
            this.#reached = grown;
          }
          this.#reached.set(f.members, n);
          n += f.members.length;
        }
        alike(Int32Array.from(t.origins), 0, this.#reached, n);
      }
  }
}

/** Whether two lists hold the very same acquisitions. */
function sameShared(x: readonly Shared[], y: readonly Shared[]): boolean {
  if (x.length !== y.length) return false;
  for (let k = 0; k < x.length; k++) if (x[k] !== y[k]) return false;
  return true;
}
