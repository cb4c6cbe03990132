// The traffic model (seed §3): what members are expected to send — the headers
// their send rows attach — and to receive — what their acquire table takes
// with `receive` and their receive table has a row for. `effectivelyReachable`
// (§3.3) is `reachable` narrowed to paths that start with an effective send
// (the forward table takes the header from the member itself) and end with an
// effective receive. Layering's demand on an underlay (§5.2.3) is the same
// walk for the session that implements each overlay link: the session's
// header must reach the far end's attachment and be popped into the overlay
// on the link's identifier there.

import type { Arrival } from "../model/rows.js";
import type { Link, Receiver } from "../model/topology.js";
import type { Analysis, Component, MemberView } from "./analysis.js";
import { componentName, keyedRows, largestOf, type Session, sessionAt, sessionOf, transmitRow } from "./members.js";
import type { Hit, IndexedRow } from "./tables.js";
import { type Drop, type Hole, type Step, Walker } from "./walk.js";

export type { Session } from "./members.js";

/** A tuple of `effectivelyReachable`: the session's header, in class `atom`, received by `member`. */
export interface Delivery {
  readonly session: Session;
  readonly atom: number;
  readonly hops: bigint;
  readonly member: number;
  readonly row: IndexedRow;
  readonly path: readonly Step[];
}

/** What else a session's header met: a black hole, a drop or a loop, with the path there. */
export interface Mishap {
  readonly session: Session;
  readonly atom: number;
  readonly kind: "hole" | "drop" | "loop";
  readonly hole?: Hole;
  readonly drop?: Drop;
  readonly link?: number;
  readonly path: readonly Step[];
}

export interface TrafficRelation {
  readonly component: Component;
  /** The sessions walked: every one, unless the budget ran out (`complete` false). */
  readonly sessions: readonly Session[];
  readonly complete: boolean;
  readonly deliveries: readonly Delivery[];
  readonly mishaps: readonly Mishap[];
}

/** Every active send row of the component's members. */
export function sessionsOf(a: Analysis, members: readonly number[]): Session[] {
  const out: Session[] = [];
  for (const m of members) {
    const v = a.member(m);
    if (v.send === undefined) continue;
    for (const { index, row } of keyedRows(v.send))
      if (row.action.kind === "push" && row.session !== undefined)
        out.push(sessionOf(v, index, row.session, row.action.header));
  }
  return out;
}

/** `effectivelyReachable` over a component: each session's header walked from its sender, while the budget allows. */
export function trafficRelation(a: Analysis, c: Component): TrafficRelation {
  const all = sessionsOf(a, c.members);
  const sessions: Session[] = [];
  const deliveries: Delivery[] = [];
  const mishaps: Mishap[] = [];
  const walker = new Walker(a);
  a.budget.stage(`walking the traffic model in ${componentName(c)}`, all.length, "sessions");
  for (const s of all) {
    if (!a.budget.take()) break;
    sessions.push(s);
    walkSession(walker, c, s, deliveries, mishaps);
  }
  return { component: c, sessions, complete: sessions.length === all.length, deliveries, mishaps };
}

/** A session's header walked, each of its classes, from its sender through c: what it meets is added to `deliveries`
 * and `mishaps`. `crossings`: the overlay links crossed before it, which count against the hop limit (./costs.ts). */
function walkSession(
  walker: Walker,
  c: Component,
  s: Session,
  deliveries: Delivery[],
  mishaps: Mishap[],
  crossings = 0,
): void {
  for (const atom of s.atoms) {
    walker.from(
      c,
      atom,
      s.member,
      "self",
      s.hops,
      {
        received: (_, member, hops, row, path) =>
          deliveries.push({ session: s, atom, hops, member, row, path: path() }),
        hole: (_, hole, path) => mishaps.push({ session: s, atom, kind: "hole", hole, path: path() }),
        drop: (_, drop, path) => mishaps.push({ session: s, atom, kind: "drop", drop, path: path() }),
        loop: (_, link, _hops, _bounded, path) => mishaps.push({ session: s, atom, kind: "loop", link, path: path() }),
      },
      crossings,
    );
  }
}

/** Whether `v` effectively sends class `atom` from itself: its forward table puts it on some out-link. */
export function sendsEffectively(v: MemberView, atom: number, hops: bigint): boolean {
  return winsOut(v, "self", atom, hops);
}

function winsOut(v: MemberView, arrival: Arrival, atom: number, hops: bigint): boolean {
  const hits: Hit[] = [];
  v.tables.forward?.lookup(arrival, atom, hops, hits);
  return hits.some((h) => h.row.row.action.kind === "out" && h.row.row.action.outLinks.length > 0);
}

/** Whether `v` effectively receives class `atom` (seed §3.3 effectiveReceive): some in-link's acquire row says receive,
 * and a receive row takes it. */
export function receivesEffectively(v: MemberView, atom: number, hops: bigint): boolean {
  const hits: Hit[] = [];
  const acquires = v.inLinks.some((inLink) => {
    hits.length = 0;
    v.tables.acquire?.lookup(inLink, atom, hops, hits);
    return hits.some((h) => h.row.row.action.kind === "receive" || h.row.row.action.kind === "both");
  });
  if (!acquires) return false;
  hits.length = 0;
  v.tables.receive?.lookup(undefined, atom, hops, hits);
  return hits.length > 0;
}

/** One overlay link (one direction) implemented by an underlay session, and whether the underlay carries it. */
export interface LayeringDemand {
  /** The overlay link (one direction). */
  readonly link: number;
  /** The overlay member that transmits on it, and the underlay. */
  readonly sender: number;
  readonly underlay: string;
  readonly session: number;
  /** Why it cannot even start (no attached member, no send row), or undefined. */
  readonly problem?: string;
  /** Per receiver of the link: met, or what happened to the session's header instead. */
  readonly receivers: readonly {
    readonly member: number;
    readonly met: boolean;
    readonly expected: string;
    readonly instead: readonly string[];
    readonly path?: readonly Step[];
  }[];
}

/**
 * Underlay_satisfies_layering_demands (seed §5.2.3): for each overlay link a transmit row
 * implements by a session, the session's header, sent by the sender's attachment in the underlay,
 * is received by each receiver's attachment, whose receive row hands it to the overlay on the
 * link's identifier there. The underlay is walked as the largest composition it is part of.
 */
export function layeringDemands(
  a: Analysis,
  describe: (step: Mishap | Delivery) => string,
): { readonly demands: LayeringDemand[]; readonly complete: boolean } {
  const out: LayeringDemand[] = [];
  const walker = new Walker(a);
  a.budget.stage("checking the layering demands", a.topology.links.length, "links");
  for (const l of a.topology.links) {
    if (!a.budget.take()) return { demands: out, complete: false };
    if (l === undefined || l.sender < 0 || l.receivers.length === 0) continue;
    const demand = layeringDemand(a, walker, l, describe);
    if (demand !== undefined) out.push(demand);
  }
  return { demands: out, complete: true };
}

/** One overlay link's demand on its underlay, or undefined when no session implements the link. */
function layeringDemand(
  a: Analysis,
  walker: Walker,
  l: Link,
  describe: (step: Mishap | Delivery) => string,
): LayeringDemand | undefined {
  const v = a.member(l.sender);
  const action = transmitRow(v, l.senderOutLink)?.row.action;
  if (action?.kind !== "session") return undefined;
  const { network: underlay, session } = action;
  const base = { link: l.index, sender: l.sender, underlay, session };
  let u0: number;
  try {
    u0 = a.topology.attachment(underlay, l.sender);
  } catch {
    return { ...base, problem: `${underlay} has no member on ${v.member.qualified}'s machine`, receivers: [] };
  }
  const u = a.member(u0);
  const s = sessionAt(u, session);
  if (s === undefined) {
    return { ...base, problem: `${u.member.qualified} has no send row for session ${session}`, receivers: [] };
  }
  const c = largestOf(a, u0);
  const deliveries: Delivery[] = [];
  const mishaps: Mishap[] = [];
  // The overlay link's crossing counts against the hop limit, before the session's (./costs.ts).
  if (c !== undefined) walkSession(walker, c, s, deliveries, mishaps, 1);
  const receivers = l.receivers.map((r) => receiverMet(a, r, underlay, s, deliveries, mishaps, describe));
  return { ...base, receivers };
}

/** Whether the session's header reached receiver r's attachment in the underlay and was popped into the overlay on
 * the link's identifier there; if not, what happened to it instead. */
function receiverMet(
  a: Analysis,
  r: Receiver,
  underlay: string,
  s: Session,
  deliveries: readonly Delivery[],
  mishaps: readonly Mishap[],
  describe: (step: Mishap | Delivery) => string,
): LayeringDemand["receivers"][number] {
  const overlay = a.member(r.member).member.network.name;
  const expected = `${overlay}.${r.inLink}`;
  let u1: number | undefined;
  try {
    u1 = a.topology.attachment(underlay, r.member);
  } catch {
    u1 = undefined;
  }
  const popsHere = (d: Delivery): boolean =>
    d.member === u1 &&
    d.row.row.action.kind === "link" &&
    d.row.row.action.network === overlay &&
    d.row.row.action.ident === r.inLink;
  // Met when every class of the session's header is popped there (the hop value it was sent with is one).
  const met = u1 !== undefined && s.atoms.every((atom) => deliveries.some((d) => d.atom === atom && popsHere(d)));
  const instead = met ? [] : [...deliveries.filter((d) => !popsHere(d)), ...mishaps].map(describe);
  const first = met ? undefined : (mishaps[0]?.path ?? deliveries.find((d) => !popsHere(d))?.path);
  return {
    member: r.member,
    met,
    expected:
      u1 === undefined
        ? `a member of ${underlay} on ${a.member(r.member).member.qualified}'s machine`
        : `${a.member(u1).member.qualified} receive → link ${expected}`,
    instead,
    ...(first === undefined ? {} : { path: first }),
  };
}
