// The questions `strata analyze` answers besides the properties: which header
// classes go from one endpoint to a member and by which rows (and where the
// others end), the loops, the black holes, the members nothing reaches, and
// whether two descriptions are equivalent (seed §2.8: the same `reachable`
// relation; Bridging Closure, §5.1.3, says a bridged set is equivalent to one
// network).

import { formatValue } from "../description/notation.js";
import type { Analysis, Component } from "./analysis.js";
import type { HeaderSpace } from "./header-space.js";
import { explore, type PathEvent, type Start, type StartLevel } from "./explore.js";
import type { Relations } from "./properties.js";
import { ComponentRelation } from "./relations.js";
import { sessionsOf, type TrafficRelation, trafficRelation } from "./traffic.js";
import { type Step, Walker } from "./walk.js";
import { Words } from "./words.js";

/** One class of packets from the start, and what it does at the member asked about. */
export interface Route {
  /** The packet's classes, outermost first. */
  readonly start: string;
  /** Acquired there; delivered there too. */
  readonly delivered: boolean;
  /** The path to the member's acquire (or, not reaching it, to where it ends). */
  readonly path: string;
  /** Not reaching it: how it ends ("dropped at lanA.r (acquire-miss)"). */
  readonly end?: string;
  /** Reaching it: what its packets do after the member's acquire, by the part of the class that does it (forwarded on,
   * dropped there, delivered elsewhere); none when they end there. */
  readonly after?: readonly { readonly start: string; readonly end: string }[];
  readonly approximate: boolean;
}

export interface RouteAnswer {
  readonly from: string;
  readonly to: string;
  readonly reach: readonly Route[];
  readonly miss: readonly Route[];
  /** Every path was walked; false: the search took its budget of steps first, and found these. */
  readonly complete: boolean;
  /** Steps the search took (explore.ts). */
  readonly steps: number;
}

/** The stage a stop while the answers are put in words is said to be in. */
const WORDING = "putting the classes found in words";

const startKey = (levels: readonly (StartLevel | undefined)[]): string =>
  levels.map((l) => (l === undefined ? "*" : `${l.space.design.name}:${l.atom}:${l.hops}`)).join("|");

/** How a class's paths ended: the first, and every way as words. */
interface Ends {
  readonly first: PathEvent;
  readonly texts: Set<string>;
}

function noteEnd(ends: Map<string, Ends>, key: string, e: PathEvent, text: string): void {
  const known = ends.get(key);
  if (known === undefined) ends.set(key, { first: e, texts: new Set([text]) });
  else known.texts.add(text);
}

function endText(w: Words, e: PathEvent): string {
  if (e.kind === "drop") return `dropped at ${w.member(e.member)} (${e.reason ?? "?"})`;
  if (e.kind === "exit") return `leaves on ${w.link(e.link)}`;
  if (e.kind === "loop") return `loops back to ${w.link(e.link)}`;
  return `delivered to ${w.member(e.member)}`;
}

/** Whether every packet of class `part` is in class `whole` (the walk only narrows a class: the same header class at
 * each level, hop counts a subset). */
function covers(whole: readonly (StartLevel | undefined)[], part: readonly (StartLevel | undefined)[]): boolean {
  return whole.every((l, i) => {
    const p = part[i];
    if (l === undefined) return true;
    return p !== undefined && p.space === l.space && p.atom === l.atom && (p.hops & ~l.hops) === 0n;
  });
}

/**
 * The classes that go from `start` to member `to`, and those that do not, with their paths (the
 * data plane's hop limit bounds loops; `budget`, the steps the search may take).
 */
export function routes(
  a: Analysis,
  start: Start,
  from: string,
  to: number,
  options: { hopLimit: number; budget: number; atoms?: readonly number[]; hops?: bigint },
): RouteAnswer {
  const w = new Words(a);
  const reach = new Map<string, { e: PathEvent; delivered: boolean }>();
  // Per start: the first way it ended, and every way (a search may find millions of paths); `afterwards`, the same for
  // the ends of paths that went through the member's acquire (what happened after it got there).
  const ends = new Map<string, Ends>();
  const afterwards = new Map<string, Ends>();
  const passedTo = (path: readonly Step[]): boolean =>
    path.some((s) => s.kind === "row" && s.member === to && s.role === "acquire");
  const { complete, steps } = explore(
    a,
    start,
    {
      hopLimit: options.hopLimit,
      budget: options.budget,
      ...(options.atoms === undefined ? {} : { atoms: options.atoms }),
      ...(options.hops === undefined ? {} : { hops: options.hops }),
    },
    (e) => {
      const key = startKey(e.start);
      if (e.member === to && (e.kind === "acquire" || e.kind === "deliver")) {
        const was = reach.get(key);
        if (was === undefined) reach.set(key, { e, delivered: e.kind === "deliver" });
        else if (e.kind === "deliver") reach.set(key, { e: was.e, delivered: true });
      } else if (e.kind === "drop" || e.kind === "exit" || e.kind === "loop" || e.kind === "deliver") {
        noteEnd(passedTo(e.path) ? afterwards : ends, key, e, endText(w, e));
      }
    },
  );
  // Where a stop in the words below is said to be (they cannot stop half-way: ./words.ts).
  a.budget.stage(WORDING, reach.size + ends.size + afterwards.size, "header classes");
  const after = new Map<string, { start: string; end: string }[]>();
  for (const { first: e, texts } of afterwards.values()) {
    const into = [...reach].find(([, r]) => covers(r.e.start, e.start))?.[0];
    if (into === undefined) continue;
    after.set(into, [...(after.get(into) ?? []), { start: w.start(e.start), end: [...texts].join("; ") }]);
  }
  const reached: Route[] = [...reach].map(([key, { e, delivered }]) => {
    const then = after.get(key);
    return {
      start: w.start(e.start),
      delivered,
      path: w.path(e.path),
      ...(then === undefined ? {} : { after: then }),
      approximate: e.approximate,
    };
  });
  const missed: Route[] = [];
  for (const [key, { first: e, texts }] of ends) {
    if (reach.has(key) || [...reach.keys()].some((k) => k.startsWith(`${key}|`))) continue;
    missed.push({
      start: w.start(e.start),
      delivered: false,
      path: w.path(e.path),
      end: [...texts].join("; "),
      approximate: e.approximate,
    });
  }
  return { from, to: w.member(to), reach: reached, miss: missed, complete, steps };
}

/** The component each network is analysed in for queries: its largest composition. */
export function largest(a: Analysis): Component[] {
  const out: Component[] = [];
  for (const c of [...a.components].sort((x, y) => rank(y) - rank(x)))
    if (!c.networks.every((n) => out.some((o) => o.networks.includes(n)))) out.push(c);
  return out.sort((x, y) => a.components.indexOf(x) - a.components.indexOf(y));
}

const rank = (c: Component): number => (c.kind === "subduction" ? 2 : c.kind === "bridged" ? 1 : 0);

export interface Finding {
  readonly component: string;
  readonly header: string;
  readonly at: string;
  readonly path: string;
}

export function loops(a: Analysis, r: Relations): Finding[] {
  const w = new Words(a);
  a.budget.stage(WORDING, 0, "header classes");
  return largest(a).flatMap((c) =>
    (r.relation.get(c)?.loops() ?? []).map((l) => ({
      component: c.name,
      header: w.header(c.space, l.atom, l.hops),
      at: `${w.link(l.link)}${l.bounded ? " (until the TTL runs out)" : ""}`,
      path: w.path(l.path),
    })),
  );
}

/** Classes that enter a member and are dropped by a miss: from forwarding, from outside, and in the traffic model's
 * sessions. */
export function blackHoles(a: Analysis, r: Relations): Finding[] {
  const w = new Words(a);
  a.budget.stage(WORDING, 0, "header classes");
  const out: Finding[] = [];
  const seen = new Set<string>();
  for (const c of largest(a)) {
    for (const h of r.relation.get(c)?.holes() ?? []) {
      const key = `${h.hole.member}/${h.hole.table}/${String(h.hole.link)}/${h.atom}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({
        component: c.name,
        header: w.header(c.space, h.atom, h.hole.hops),
        at: holeAt(w, h.hole.member, h.hole.table, h.hole.link),
        path: w.path(h.path),
      });
    }
    out.push(...sessionHoles(a, c, r.traffic.get(c), w, seen));
  }
  return out;
}

/** The black holes the traffic model's sessions fall into: a header a send row attaches, dropped by a miss. */
function sessionHoles(
  a: Analysis,
  c: Component,
  traffic: TrafficRelation | undefined,
  w: Words,
  seen = new Set<string>(),
): Finding[] {
  const out: Finding[] = [];
  for (const m of traffic?.mishaps ?? []) {
    if (m.kind !== "hole" || m.hole === undefined) continue;
    const key = `${m.hole.member}/${m.hole.table}/${String(m.hole.link)}/${m.atom}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({
      component: c.name,
      header:
        `${w.header(c.space, m.atom, m.session.hops)} (${w.member(m.session.member)} session ` +
        `${m.session.session})`,
      at: holeAt(w, m.hole.member, m.hole.table, m.hole.link),
      path: w.path(m.path),
    });
  }
  return out;
}

/**
 * What `strata check` warns of (the cheap properties): the classes that loop, and the black holes
 * of the traffic model's sessions, in each network's largest composition.
 */
export function cheapFindings(a: Analysis): {
  readonly loops: Finding[];
  readonly sessionHoles: Finding[];
  /** Header classes walked for loops, and how many there are (fewer when the budget ran out). */
  readonly walked: { readonly classes: number; readonly of: number };
} {
  const w = new Words(a);
  const comps = largest(a);
  const relation = new Map(comps.map((c) => [c, new ComponentRelation(a, c, { loopsOnly: true })]));
  const traffic = new Map(comps.map((c) => [c, trafficRelation(a, c)]));
  const walked = { classes: 0, of: 0 };
  for (const rel of relation.values()) {
    walked.classes += rel.walked.classes;
    walked.of += rel.walked.of;
  }
  return {
    loops: loops(a, { relation, traffic }),
    sessionHoles: comps.flatMap((c) => sessionHoles(a, c, traffic.get(c), w)),
    walked,
  };
}

/** Where a black hole is: "lan.sw: no forward row (in-link 1)". */
export function holeAt(w: Words, member: number, table: string, link: unknown): string {
  return (
    `${w.member(member)}: ` +
    `no ${table} row${link === undefined ? "" : ` (${table === "transmit" ? "out" : "in"}-link ${String(link)})`}`
  );
}

/** Members no other member and nothing from outside reaches. */
export function unreachable(
  a: Analysis,
  r: Relations,
): { readonly component: string; readonly members: readonly string[] }[] {
  const w = new Words(a);
  return largest(a).flatMap((c) => {
    const ms = r.relation.get(c)?.unreachable() ?? [];
    return ms.length === 0 ? [] : [{ component: c.name, members: ms.map((m) => w.member(m)) }];
  });
}

export interface Equivalence {
  /** No difference found; when not `complete`, only over the classes compared. */
  readonly holds: boolean;
  /** Every class compared (the budget allowed it). */
  readonly complete: boolean;
  /** Tuples one has and the other lacks, in words: the first few. */
  readonly reachable: readonly string[];
  readonly effective: readonly string[];
  readonly more: number;
}

/**
 * Network equivalence (seed §2.8): the same `reachable` relation, members known by their names
 * (addresses), over each design's header classes; and the same `effectivelyReachable`. Each
 * network is taken in its bridged set, as the model's Bridging Closure compares them. `b` must
 * share `a`'s header spaces.
 */
export function equivalence(a: Analysis, b: Analysis, shown = 5): Equivalence {
  const sides = [a, b].map((x) => ({ x, w: new Words(x), comps: largest(x).map((c) => c) }));
  const lines: string[] = [];
  const effLines: string[] = [];
  let complete = true;
  for (const space of a.spaces.all()) {
    const atoms = space.atoms();
    a.budget.stage(`comparing the ${space.design.name} header classes`, atoms.length, "header classes");
    for (const atom of atoms) {
      if (!a.budget.take()) {
        complete = false;
        break;
      }
      const maps = sides.map(({ x, comps }) => acquiredPairs(x, comps, space, atom));
      const [ma, mb] = maps;
      if (ma === undefined || mb === undefined) continue;
      const files = [a.compiled.spec.file, b.compiled.spec.file];
      for (const [k, v] of ma)
        if (mb.get(k)?.hops !== v.hops)
          lines.push(
            `${v.text} with ${sides[0]?.w.header(space, atom, v.hops & ~(mb.get(k)?.hops ?? 0n))}: ` +
              `in ${files[0]}, not in ${files[1]}`,
          );
      for (const [k, v] of mb)
        if (ma.get(k)?.hops !== v.hops)
          lines.push(
            `${v.text} with ${sides[1]?.w.header(space, atom, v.hops & ~(ma.get(k)?.hops ?? 0n))}: ` +
              `in ${files[1]}, not in ${files[0]}`,
          );
    }
  }
  // The traffic model: deliveries of each session's header, by the members' names.
  const [ea, eb] = sides.map(({ x, comps }) => deliveriesByName(x, comps));
  if (ea !== undefined && eb !== undefined) {
    for (const [k, v] of ea) if (!eb.has(k)) effLines.push(`${v}: in ${a.compiled.spec.file} only`);
    for (const [k, v] of eb) if (!ea.has(k)) effLines.push(`${v}: in ${b.compiled.spec.file} only`);
  }
  return {
    holds: lines.length + effLines.length === 0,
    complete,
    reachable: lines.slice(0, shown),
    effective: effLines.slice(0, shown),
    more: Math.max(0, lines.length - shown) + Math.max(0, effLines.length - shown),
  };
}

/** A member as equivalence knows it across two descriptions: by its design and name (address). */
function nameForComparing(x: Analysis, m: number): string {
  const v = x.member(m);
  return `${v.space.design.name}:${formatValue(v.member.spec.nameValue, v.space.design.nameKind)}`;
}

/** Who reaches whom with one header class in x's components of `space`, keyed by their names: the hops they
 * get there in, and the pair as text. */
function acquiredPairs(
  x: Analysis,
  comps: readonly Component[],
  space: HeaderSpace,
  atom: number,
): Map<string, { hops: bigint; text: string }> {
  const out = new Map<string, { hops: bigint; text: string }>();
  const walker = new Walker(x);
  for (const c of comps) {
    if (c.space !== space) continue;
    walker.relation(c, atom, {
      acquired: (origin, member, hops) => {
        if (origin < 0) return;
        const k = `${nameForComparing(x, origin)}>${nameForComparing(x, member)}`;
        out.set(k, {
          hops: (out.get(k)?.hops ?? 0n) | hops,
          text: `${x.member(origin).member.qualified} → ${x.member(member).member.qualified}`,
        });
      },
    });
  }
  return out;
}

/** The traffic model of x's components: each delivery of a session's header, keyed by the members' names. */
function deliveriesByName(x: Analysis, comps: readonly Component[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const c of comps) {
    const walker = new Walker(x);
    for (const session of sessionsOf(x, c.members)) {
      for (const atom of session.atoms) {
        walker.from(c, atom, session.member, "self", session.hops, {
          received: (_, member) =>
            out.set(
              `${nameForComparing(x, session.member)}>${nameForComparing(x, member)}/${c.space.design.name}:${atom}`,
              `${x.member(session.member).member.qualified} → ${x.member(member).member.qualified} (session ` +
                `${session.session})`,
            ),
        });
      }
    }
  }
  return out;
}
