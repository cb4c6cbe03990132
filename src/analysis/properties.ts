// The model's properties, each holding or failing with counterexamples:
//
//   No_routing_loops                        seed §2.7: no class comes back to a link
//   Fully_reachable                         every member reaches every other
//   Only_unicast_forwarding                 no forward row that wins replicates
//   Network_satisfies_communication_demands §3.4: what a member sends and another receives gets there (+ demands:)
//   Only_authentic_traffic_delivered        §3.4: what is delivered carries its sender's name as source
//   Effective_reachability_is_symmetric     §3.4: whoever is reached effectively reaches back
//   Underlay_satisfies_layering_demands     §5.2.3: each session that implements an overlay link carries it
//   the inclusions of Figure 9              §5.1.2, §5.3.3: effective ⊆ plain; a part ⊆ its composition
//
// The traffic properties are read as the model states them (the Alloy model's
// net.als and traffic.als), over the headers send rows attach; a member's
// traffic to itself is no demand on the network (the model's No_self_sessions
// is a property of its own).
//
// When the budget ran out (./budget.ts) a property is checked over what was
// walked: a counterexample found is one, but one that holds there is only
// known to hold when what it says cannot change with more (every member pair
// reached); otherwise it is `unknown`.

import type { Analysis, Component, ComponentKind } from "./analysis.js";
import { componentName } from "./members.js";
import { orCut, type Stop } from "./budget.js";
import { ComponentRelation, type LimitAt } from "./relations.js";
import {
  type Delivery,
  layeringDemands,
  type Mishap,
  receivesEffectively,
  sendsEffectively,
  type TrafficRelation,
  trafficRelation,
} from "./traffic.js";
import { type Step, Walker } from "./walk.js";
import { Words } from "./words.js";
import { demandsNote, statedDemands } from "./demands.js";

export interface PropertyResult {
  /** The model's name for it. */
  readonly name: string;
  readonly holds: boolean;
  /** Why it holds trivially, or what it was checked over. */
  readonly note?: string;
  /** The first counterexamples, one line each. */
  readonly counterexamples: readonly string[];
  /** Counterexamples not listed. */
  readonly more: number;
  /** The analysis was cut short before it could tell (`holds` is then false, with no counterexample). */
  readonly unknown?: true;
}

export interface ComponentReport {
  readonly kind: ComponentKind;
  readonly name: string;
  readonly networks: readonly string[];
  readonly design: string;
  readonly members: number;
  /** Distinct names among the members: fewer than `members` where members of a subduction share a name (the seed's
   * relations are over names; strata's pairs and tuples are over members, network.member). */
  readonly names: number;
  /** The relation's size: (class, origin, member) tuples, and the pairs of distinct members some class joins. */
  readonly reachable: { readonly tuples: number; readonly pairs: number; readonly of: number };
  readonly effective: { readonly sessions: number; readonly deliveries: number };
  readonly properties: readonly PropertyResult[];
  /** Every class and session walked; false: the budget ran out, and `walked` says how far it got. */
  readonly complete: boolean;
  readonly walked: { readonly classes: number; readonly of: number };
}

export interface AnalysisReport {
  readonly file: string;
  /** Every property holds. */
  readonly ok: boolean;
  /** Header classes, by design (when their building stopped: how many it had made). */
  readonly classes: Readonly<Record<string, number>>;
  readonly components: readonly ComponentReport[];
  readonly layering: PropertyResult;
  readonly inclusions: readonly PropertyResult[];
  /** Everything was checked; false: the budget ran out (`stop`), and what was checked is here. */
  readonly complete: boolean;
  readonly stop?: Stop;
}

/** The relations of every component: kept so queries and updates can use them. */
export interface Relations {
  readonly relation: ReadonlyMap<Component, ComponentRelation>;
  readonly traffic: ReadonlyMap<Component, TrafficRelation>;
}

/** Counterexamples listed per property; No_routing_loops puts only these in words (a class's take a diagram walk). */
const SHOWN = 5;

/** Every component's relations, each as far as the budget allows (none when the classes were not built). */
export function computeRelations(a: Analysis): Relations {
  return {
    relation: new Map(a.components.map((c) => [c, new ComponentRelation(a, c)])),
    traffic: new Map(a.components.map((c) => [c, trafficRelation(a, c)])),
  };
}

export function report(a: Analysis, r: Relations = computeRelations(a)): AnalysisReport {
  const w = new Words(a);
  const components = a.components.map((c) => componentReport(a, c, r, w));
  const layering = a.built ? layeringProperty(a, w) : unknown("Underlay_satisfies_layering_demands");
  const inclusions = inclusionProperties(a, r, w);
  const classes: Record<string, number> = {};
  for (const s of a.spaces.all()) classes[s.design.name] = s.built ? s.atoms().length : s.made;
  const ok = [...components.flatMap((c) => c.properties), layering, ...inclusions].every((p) => p.holds);
  const stop = a.budget.stopped;
  return {
    file: a.compiled.spec.file,
    ok,
    classes,
    components,
    layering,
    inclusions,
    complete: stop === undefined,
    ...(stop === undefined ? {} : { stop }),
  };
}

/**
 * The properties a running emulation keeps (`strata serve --analyze`): every component's and the
 * layering demand; Figure 9's inclusions, theorems that hold of any tables, are left to the report.
 */
export function currentProperties(a: Analysis, r: Relations): PropertyResult[] {
  const w = new Words(a);
  const components = a.components.flatMap((c) =>
    componentReport(a, c, r, w).properties.map((p) => ({ ...p, name: `${p.name} (${c.name})` })),
  );
  return [...components, a.built ? layeringProperty(a, w) : unknown("Underlay_satisfies_layering_demands")];
}

function result(name: string, lines: readonly string[], note?: string): PropertyResult {
  return {
    name,
    holds: lines.length === 0,
    ...(note === undefined ? {} : { note }),
    counterexamples: lines.slice(0, SHOWN),
    more: Math.max(0, lines.length - SHOWN),
  };
}

/** A property the budget left no room to check. */
function unknown(name: string): PropertyResult {
  return { name, holds: false, counterexamples: [], more: 0, unknown: true };
}

/** A property checked over part of what it ranges over: its counterexamples are real, its holding is not. */
function partial(p: PropertyResult, complete: boolean): PropertyResult {
  return complete || !p.holds ? p : { ...unknown(p.name), ...(p.note === undefined ? {} : { note: p.note }) };
}

function componentReport(a: Analysis, c: Component, r: Relations, w: Words): ComponentReport {
  const rel = r.relation.get(c);
  const traffic = r.traffic.get(c);
  if (rel === undefined || traffic === undefined) throw new Error(`no relations for ${c.name}`);
  const pairs = rel.pairs;
  const properties = [partial(noRoutingLoops(rel, w), rel.complete), fullyReachable(a, rel, w)];
  if (c.kind === "network") properties.push(onlyUnicast(a, c, w));
  properties.push(
    partial(communicationDemands(a, c, traffic, w), traffic.complete),
    partial(authentic(a, c, traffic, w), traffic.complete),
    traffic.complete ? symmetric(traffic, w) : unknown("Effective_reachability_is_symmetric"),
  );
  return {
    kind: c.kind,
    name: c.name,
    networks: c.networks,
    design: c.space.design.name,
    members: c.members.length,
    names: new Set(c.members.map((m) => a.member(m).member.spec.nameValue)).size,
    reachable: { tuples: rel.tuples, pairs: pairs.reached, of: pairs.all },
    effective: { sessions: traffic.sessions.length, deliveries: traffic.deliveries.length },
    properties,
    complete: rel.complete && traffic.complete,
    walked: rel.walked,
  };
}

function noRoutingLoops(rel: ComponentRelation, w: Words): PropertyResult {
  const space = rel.component.space;
  const loops = rel.loops();
  const lines = loops
    .slice(0, SHOWN)
    .map(
      (l) =>
        `${w.header(space, l.atom, l.hops)}${l.bounded ? " (until the TTL runs out)" : ""}: ${w.path(l.path)} again`,
    );
  return { ...result("No_routing_loops", lines), more: Math.max(0, loops.length - SHOWN) };
}

/** Pairs only grow as classes are walked: holding over part of them is holding; failing there is not failing. */
function fullyReachable(a: Analysis, rel: ComponentRelation, w: Words): PropertyResult {
  const silent = new Set(rel.silent());
  // Where the hop limit stopped what an origin sends: the reason it reaches no one, or not that member.
  const limited = new Map<number, LimitAt>();
  for (const l of rel.limits()) if (!limited.has(l.origin)) limited.set(l.origin, l);
  const why = (m0: number): string => {
    const l = limited.get(m0);
    return l === undefined ? "" : ` (${limitText(w, l)})`;
  };
  const lines = [...silent].map(
    (m) =>
      `${w.member(m)} reaches no other member` +
      `${sendsOnNoLink(a, m) ? " (no forward row of it puts a header on a link)" : why(m)}`,
  );
  const missing = rel.missingPairs(SHOWN, (m0) => silent.has(m0));
  for (const [m0, m1] of missing.pairs) lines.push(`no header goes from ${w.member(m0)} to ${w.member(m1)}${why(m0)}`);
  const shown = result("Fully_reachable", lines);
  const holds = silent.size === 0 && missing.count === 0;
  if (!holds && !rel.complete) return unknown("Fully_reachable");
  return { ...shown, holds, more: shown.more + missing.count - missing.pairs.length };
}

/** Why the hop limit stopped a class: the path to the crossing past it, and how many links that makes. */
export function limitText(w: Words, l: { link: number; crossings: number; path: readonly Step[] }): string {
  const a = w.analysis;
  const costs = a.topology.link(l.link).receivers.map((_, i) => a.linkCost(l.link, i));
  // A cost past the limit is a session the limit cut inside the underlay: how far past is not known.
  const crossings = costs.some((c) => c > a.hopLimit) ? `more than ${a.hopLimit}` : `${l.crossings}`;
  const layers = costs.some((c) => c > 1) || l.crossings > l.path.filter((s) => s.kind === "link").length;
  return (
    `the hop limit (${a.hopLimit} links) drops it as a loop: with ${w.path(l.path)} it would cross ${crossings} ` +
    `links${layers ? ", every layer's counted" : ""}`
  );
}

/** Whether a member's forward table has no active row that sends on an out-link. */
function sendsOnNoLink(a: Analysis, m: number): boolean {
  const t = a.member(m).tables.forward;
  return (
    t === undefined ||
    !t.rows.some((r) => t.isActive(r.index) && r.row.action.kind === "out" && r.row.action.outLinks.length > 0)
  );
}

function onlyUnicast(a: Analysis, c: Component, w: Words): PropertyResult {
  const lines: string[] = [];
  const replicating = (m: number): number =>
    a.member(m).tables.forward?.rows.filter((r) => r.row.action.kind === "out" && r.row.action.outLinks.length > 1)
      .length ?? 0;
  const rows = c.members.reduce((n, m) => n + replicating(m), 0);
  a.budget.stage(`checking Only_unicast_forwarding in network ${c.name}`, rows, "rows");
  for (const m of c.members) {
    const v = a.member(m);
    const t = v.tables.forward;
    if (t === undefined) continue;
    for (const r of t.rows) {
      const act = r.row.action;
      if (!t.isActive(r.index) || act.kind !== "out" || act.outLinks.length < 2) continue;
      if (!a.budget.take()) return partial(result("Only_unicast_forwarding", lines), false);
      // Replication only where the row wins for some header and in-link (in-links no row names are alike).
      const arrivals = r.row.in !== undefined ? [r.row.in] : ["self" as const, ...t.distinctArrivals(v.inLinks)];
      // Whether it wins is diagram work, which cannot stop half-way: past the budget, the property is not known.
      const wins = orCut(
        a.budget,
        () => t.wins(r, arrivals),
        () => undefined,
      );
      if (wins === undefined) return partial(result("Only_unicast_forwarding", lines), false);
      if (wins)
        lines.push(
          `${w.member(m)} forward row ${r.index} (${rowText(a, m, r.index)}) copies to ` +
            `out-links ${act.outLinks.join(", ")}`,
        );
    }
  }
  return result("Only_unicast_forwarding", lines);
}

function rowText(a: Analysis, member: number, row: number): string {
  return a.compiled.members[member]?.tables.forward?.rows.find((r) => r.row === row)?.text ?? `row ${row}`;
}

/** What happened to a session's header instead, in a few words. */
export function mishapText(w: Words, x: Mishap | Delivery): string {
  if ("member" in x && "row" in x && !("kind" in x)) {
    const act = x.row.row.action;
    return (
      `received by ${w.member(x.member)} (receive ` +
      `row ${x.row.index}${act.kind === "link" ? `: into ${act.network} link ${act.ident}` : ""})`
    );
  }
  const m = x as Mishap;
  if (m.kind === "hole" && m.hole !== undefined) {
    const link =
      m.hole.link === undefined ? "" : ` (${m.hole.table === "transmit" ? "out" : "in"}-link ${String(m.hole.link)})`;
    return `dropped at ${w.member(m.hole.member)}: no ${m.hole.table} row for it${link}: ${w.path(m.path)}`;
  }
  if (m.kind === "drop" && m.drop?.reason === "loop")
    return `dropped at ${w.member(m.drop.member)}: ${limitText(w, {
      link: m.drop.link ?? -1,
      crossings: m.drop.crossings ?? 0,
      path: m.path,
    })}`;
  if (m.kind === "drop" && m.drop !== undefined)
    return `dropped at ${w.member(m.drop.member)} (${m.drop.reason}): ${w.path(m.path)}`;
  return `loops: ${w.path(m.path)}`;
}

function communicationDemands(a: Analysis, c: Component, traffic: TrafficRelation, w: Words): PropertyResult {
  const stated = statedDemands(a, c, w);
  if (traffic.sessions.length === 0 && stated === undefined)
    return result("Network_satisfies_communication_demands", [], "no send rows: no demands");
  const lines: string[] = [...(stated?.lines ?? [])];
  for (const s of traffic.sessions) {
    const sender = a.member(s.member);
    for (const atom of s.atoms) {
      if (!sendsEffectively(sender, atom, s.hops)) continue;
      for (const m1 of c.members) {
        if (m1 === s.member || !receivesEffectively(a.member(m1), atom, s.hops)) continue;
        if (traffic.deliveries.some((d) => d.session === s && d.atom === atom && d.member === m1)) continue;
        const instead = [
          ...traffic.mishaps.filter((x) => x.session === s && x.atom === atom),
          ...traffic.deliveries.filter((d) => d.session === s && d.atom === atom),
        ].map((x) => mishapText(w, x));
        lines.push(
          `${w.member(s.member)} sends ${w.header(c.space, atom, s.hops)} (session ${s.session}) ` +
            `and ${w.member(m1)} receives it, but it does not get there: ${instead[0] ?? "it is sent on no link"}`,
        );
      }
    }
  }
  const note = demandsNote(stated, traffic.sessions.length);
  return partial(result("Network_satisfies_communication_demands", lines, note), stated?.complete !== false);
}

function authentic(a: Analysis, c: Component, traffic: TrafficRelation, w: Words): PropertyResult {
  const src = c.space.design.srcField;
  if (src === undefined)
    return result("Only_authentic_traffic_delivered", [], `${c.space.design.name} headers name no sender`);
  const lines = traffic.deliveries.flatMap((d) => {
    const sender = a.member(d.session.member).member.spec;
    const written = d.session.header.get(src);
    if (written === sender.nameValue) return [];
    return [
      `${w.member(d.session.member)} (${sender.name}) sends ` +
        `session ${d.session.session} with ` +
        `${c.space.formatMatch(new Map([[src, { kind: "exact" as const, value: written ?? 0n }]]))}, ` +
        `and ${w.member(d.member)} receives it`,
    ];
  });
  return result("Only_authentic_traffic_delivered", [...new Set(lines)]);
}

/**
 * Seed §3.4: "holds if and only if all the effective sessions are two-way": whoever a member
 * reaches effectively reaches it back, with some header (a reply need not mirror every field:
 * a VXLAN sender picks its own UDP source port).
 */
function symmetric(traffic: TrafficRelation, w: Words): PropertyResult {
  const space = traffic.component.space;
  const reached = new Set(traffic.deliveries.map((d) => `${d.session.member}>${d.member}`));
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const x of traffic.deliveries) {
    const key = `${x.session.member}>${x.member}`;
    if (seen.has(key) || x.session.member === x.member) continue;
    seen.add(key);
    if (!reached.has(`${x.member}>${x.session.member}`))
      lines.push(
        `${w.member(x.session.member)} reaches ${w.member(x.member)} with ` +
          `${w.header(space, x.atom, x.session.hops)} (session ${x.session.session}), ` +
          `and no session of ${w.member(x.member)} reaches ${w.member(x.session.member)}`,
      );
  }
  return result(
    "Effective_reachability_is_symmetric",
    lines,
    traffic.deliveries.length === 0 ? "no session reaches a receiver" : undefined,
  );
}

function layeringProperty(a: Analysis, w: Words): PropertyResult {
  const { demands, complete } = layeringDemands(a, (x) => mishapText(w, x));
  const lines: string[] = [];
  for (const d of demands) {
    const l = a.topology.link(d.link);
    const what =
      `${w.link(d.link)} (${w.member(d.sender)} → ` +
      `${l.receivers.map((r) => w.member(r.member)).join(", ")}) via ${d.underlay} session ${d.session}`;
    if (d.problem !== undefined) {
      lines.push(`${what}: ${d.problem}`);
      continue;
    }
    for (const r of d.receivers)
      if (!r.met)
        lines.push(
          `${what}: expected ${r.expected}; ` +
            `instead ${r.instead.length === 0 ? "it is sent on no link" : r.instead.join("; ")}`,
        );
  }
  return partial(
    result(
      "Underlay_satisfies_layering_demands",
      lines,
      demands.length === 0
        ? "no overlay link is implemented by a session"
        : `${demands.length} overlay links implemented by sessions`,
    ),
    complete,
  );
}

/** The relation's tuples for one class: "origin>member" → hop values (origin −1 left out). */
function tuples(a: Analysis, c: Component, atom: number): Map<string, bigint> {
  const out = new Map<string, bigint>();
  new Walker(a).relation(c, atom, {
    acquired: (origin, member, hops) => {
      if (origin < 0) return;
      const k = `${origin}>${member}`;
      out.set(k, (out.get(k) ?? 0n) | hops);
    },
  });
  return out;
}

const deliveryKey = (d: Delivery): string => `${d.session.member}/${d.session.row}/${d.atom}/${d.hops}>${d.member}`;

function inclusionProperties(a: Analysis, r: Relations, w: Words): PropertyResult[] {
  const out: PropertyResult[] = [];
  const relName = (c: Component): string =>
    c.kind === "network" ? "reachable" : c.kind === "bridged" ? "reachableWithBridging" : "reachabilityWithSubduction";
  // effectivelyReachable ⊆ reachable, in every component.
  for (const c of a.components) {
    const traffic = r.traffic.get(c);
    if (traffic === undefined || traffic.deliveries.length === 0) continue;
    const cache = new Map<number, Map<string, bigint>>();
    const lines: string[] = [];
    let walked = traffic.complete;
    a.budget.stage(`checking the inclusions in ${componentName(c)}`, traffic.deliveries.length, "deliveries");
    for (const d of traffic.deliveries) {
      let t = cache.get(d.atom);
      if (t === undefined) {
        if (!a.budget.take()) {
          walked = false;
          break;
        }
        t = tuples(a, c, d.atom);
        cache.set(d.atom, t);
      }
      const have = t.get(`${d.session.member}>${d.member}`) ?? 0n;
      if ((have & d.hops) !== d.hops)
        lines.push(`${w.member(d.session.member)} → ${w.member(d.member)} with ${w.header(c.space, d.atom, d.hops)}`);
    }
    out.push(partial(result(`effective ${relName(c)} ⊆ ${relName(c)} (${c.name})`, lines), walked));
  }
  // A part's relation ⊆ its composition's (seed Figure 6 and Figure 9).
  for (const c of a.components) {
    if (c.kind === "network") continue;
    const parts = a.components.filter(
      (p) =>
        p !== c &&
        p.networks.every((n) => c.networks.includes(n)) &&
        (c.kind === "bridged"
          ? p.kind === "network"
          : p.kind === "bridged" ||
            (p.kind === "network" &&
              !a.components.some((b) => b.kind === "bridged" && b.networks.includes(p.networks[0] ?? "")))),
    );
    const lines: string[] = [];
    const atoms = c.space.atoms();
    a.budget.stage(`checking the inclusions in ${componentName(c)}`, atoms.length, "header classes");
    let walked = true;
    for (const atom of atoms) {
      if (!a.budget.take()) {
        walked = false;
        break;
      }
      const whole = tuples(a, c, atom);
      for (const p of parts) {
        for (const [k, hops] of tuples(a, p, atom)) {
          if (((whole.get(k) ?? 0n) & hops) === hops) continue;
          const [m0, m1] = k.split(">").map(Number);
          lines.push(
            `${w.member(m0 ?? -1)} → ${w.member(m1 ?? -1)} with ${w.header(c.space, atom, hops)} is ` +
              `in ${relName(p)} (${p.name}), not in ${relName(c)} (${c.name})`,
          );
        }
      }
    }
    const name = `${parts.map((p) => `${relName(p)} (${p.name})`).join(" ∪ ")} ⊆ ${relName(c)} (${c.name})`;
    out.push(partial(result(name, lines), walked));
    const whole = new Set((r.traffic.get(c)?.deliveries ?? []).map(deliveryKey));
    const effLines = parts.flatMap((p) =>
      (r.traffic.get(p)?.deliveries ?? [])
        .filter((d) => !whole.has(deliveryKey(d)))
        .map(
          (d) =>
            `${w.member(d.session.member)} → ${w.member(d.member)} (session ${d.session.session}) in ${p.name}, ` +
            `not in ${c.name}`,
        ),
    );
    const effComplete = parts.every((p) => r.traffic.get(p)?.complete === true) && r.traffic.get(c)?.complete === true;
    out.push(partial(result(`effective: ${parts.map((p) => p.name).join(" ∪ ")} ⊆ ${c.name}`, effLines), effComplete));
  }
  return out;
}
