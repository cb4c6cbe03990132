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
import type { Shared, SharedWalk } from "./shared-walk.js";
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
      if (v.decrements && arrival !== "self") return undefined;
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
  return { members: Int32Array.from(members), arrivals, groupOf: Int32Array.from(groupOf), groups };
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
