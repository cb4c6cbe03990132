// Random composed descriptions for the differential tests (seed §5): networks
// layered two or three deep, subducted (a shared link, with do: shared,
// out: shared and in: shared rows) and bridged (links between networks of one
// design, some implemented by sessions of an underlay at both ends). As in ./cases.ts, a case is a recipe of small
// numbers resolved by
// plain functions, so that every recipe gives a description and fast-check can
// shrink any part of it alone.
//
// Each description has planned rows — routes over every network's links, the
// sessions that implement virtual links and the receive rows that pop them,
// the hand-overs between shared members — so that packets travel between the
// networks, and random rows around them (./cases.ts memberTables) that
// sometimes come first and hide them: packets are dropped at every step too.

import fc from "fast-check";
import { formatValue } from "../../../src/description/notation.js";
import type { DesignDef } from "../../../src/wire/designs.js";
import {
  at,
  DESIGN_CHOICES,
  design,
  type Extra,
  memberName,
  type MemberRecipe,
  memberTables,
  nat,
  type PlannedRow,
  pool,
  type Ports,
  tablesRecipe,
  type Yaml,
} from "./cases.js";

const linkPlan = fc.record({
  a: nat(7),
  b: nat(7),
  mode: nat(3),
  under: nat(3),
  shared: fc.boolean(),
  other: nat(3),
  capture: nat(9),
});

export const composedRecipe = fc.record({
  kind: fc.constantFrom("layered", "subducted", "bridged"),
  /** DESIGN_CHOICES, by level (layered) or for the networks (subducted, bridged). */
  designs: fc.array(nat(5), { minLength: 3, maxLength: 3 }),
  machines: fc.integer({ min: 2, max: 4 }),
  /** Layered: levels; bridged: networks. */
  levels: fc.integer({ min: 2, max: 3 }),
  /** Which machines host a member of each network, as bits. */
  hosts: fc.array(nat(15), { minLength: 3, maxLength: 3 }),
  links: fc.array(fc.array(linkPlan, { minLength: 1, maxLength: 5 }), { minLength: 3, maxLength: 3 }),
  /** Random rows around the planned ones, by member. */
  members: fc.array(tablesRecipe(2), { minLength: 12, maxLength: 12 }),
  picks: fc.array(nat(63), { minLength: 8, maxLength: 8 }),
});
export type ComposedRecipe = typeof composedRecipe extends fc.Arbitrary<infer T> ? T : never;
type LinkPlan = ComposedRecipe["links"][number][number];

interface Member {
  readonly key: string;
  readonly name: bigint;
  readonly machine?: string;
}

/** Rows a member's plan needs, gathered while links are laid. */
interface Planned {
  acquire: PlannedRow[];
  forward: PlannedRow[];
  receive: PlannedRow[];
  transmit: Map<number, Yaml>;
  send: Yaml[];
  sharedIns: number[];
  sharedOuts: number[];
  overlayShared: boolean;
  externalLinks: string[];
}

/** One hop of a route: `from` sends on identifier `out` to `to` (members as "network.key"). */
interface Hop {
  readonly from: string;
  readonly out: number;
  readonly to: string;
}

class Net {
  readonly design: DesignDef;
  readonly members: Member[] = [];
  readonly links: Yaml[] = [];
  /** Groups declared nonlocal: a group with a receiver in another network must be. */
  readonly nonlocal: string[] = [];
  readonly ports = new Map<string, Ports>();
  readonly plans = new Map<string, Planned>();
  readonly #next = new Map<string, number>();

  constructor(
    readonly name: string,
    readonly choice: (typeof DESIGN_CHOICES)[number],
    /** The first link identifier at each member. */
    readonly identBase = 1,
  ) {
    this.design = design(choice.header);
  }

  add(m: Member): Member {
    this.members.push(m);
    this.ports.set(m.key, { ins: [], outs: [] });
    return m;
  }

  member(key: string): Member {
    const m = this.members.find((x) => x.key === key);
    if (m === undefined) throw new Error(`${this.name} has no member ${key}`);
    return m;
  }

  onMachine(machine: string): Member | undefined {
    return this.members.find((m) => machineOf(m) === machine);
  }

  ident(key: string): number {
    const i = this.#next.get(key) ?? this.identBase;
    this.#next.set(key, i + 1);
    return i;
  }

  port(key: string): Ports {
    const p = this.ports.get(key);
    if (p === undefined) throw new Error(`${this.name} has no member ${key}`);
    return p;
  }

  plan(key: string): Planned {
    let p = this.plans.get(key);
    if (p === undefined) {
      p = {
        acquire: [],
        forward: [],
        receive: [],
        transmit: new Map(),
        send: [],
        sharedIns: [],
        sharedOuts: [],
        overlayShared: false,
        externalLinks: [],
      };
      this.plans.set(key, p);
    }
    return p;
  }

  text(v: bigint): string {
    return formatValue(v, this.design.nameKind);
  }
}

const machineOf = (m: Member): string => m.machine ?? m.key;

/** The field a pushed header says what it carries in, which receive rows tell overlay links apart by. */
const TAG_FIELD: Record<string, string> = { ethernet: "type", ipv4: "proto", ipv6: "next", cna: "overlay" };

/** The text of a composed description, as JSON (which is YAML), as specText writes it. */
export function composedText(r: ComposedRecipe): string {
  const nets = r.kind === "layered" ? layered(r) : r.kind === "subducted" ? subducted(r) : bridged(r);
  let k = 0;
  const networks: Yaml = {};
  for (const net of nets.all) {
    const d = net.design;
    const names = nets.names(net);
    const tables: Yaml = {};
    for (const m of net.members) {
      const p = net.plans.get(m.key);
      const extra: Extra =
        p === undefined
          ? {}
          : {
              acquire: p.acquire,
              forward: p.forward,
              receive: p.receive,
              ...(p.transmit.size > 0 ? { transmit: p.transmit } : {}),
              send: p.send,
              sharedIns: p.sharedIns,
              sharedOuts: p.sharedOuts,
              overlayShared: p.overlayShared,
              externalLinks: p.externalLinks,
            };
      const t = memberTables(d, names, net.port(m.key), at(r.members, k++) as MemberRecipe, extra);
      if (Object.keys(t).length > 0) tables[m.key] = t;
    }
    networks[net.name] = {
      header: net.choice.header,
      ...(net.choice.ttl !== undefined ? { ttl: net.choice.ttl } : {}),
      members: Object.fromEntries(
        net.members.map((m) => [
          m.key,
          { name: net.text(m.name), ...(m.machine !== undefined ? { machine: m.machine } : {}) },
        ]),
      ),
      links: net.links,
      ...(net.nonlocal.length > 0 ? { nonlocal: net.nonlocal } : {}),
      tables,
    };
  }
  return JSON.stringify({ networks }, null, 1);
}

interface Built {
  readonly all: readonly Net[];
  /** The names rows and packets of a network draw on. */
  names(net: Net): readonly bigint[];
}

/** The two ends of a link plan in a list of members, never the same one. */
function ends<T>(list: readonly T[], lp: LinkPlan): [T, T] {
  const a = at(list, lp.a);
  const b = at(list, lp.b);
  return [a, b === a ? at(list, lp.b + 1) : b];
}

const capture = (lp: LinkPlan): Yaml => (lp.capture === 0 ? { record: false } : {});

/**
 * Planned rows that make members of `nets` reach each other: acquire what is
 * addressed to oneself (receive) and forward the rest; forward by destination
 * name onto the first hop of a shortest route over `hops`; names outside
 * `nets` in `gateways` onto the route to the member ("network.key") that
 * takes them further.
 */
function route(nets: readonly Net[], hops: readonly Hop[], gateways: ReadonlyMap<bigint, string> = new Map()): void {
  const all = nets.flatMap((net) => net.members.map((m) => ({ net, m, q: `${net.name}.${m.key}` })));
  for (const { net, m, q } of all) {
    const p = net.plan(m.key);
    p.acquire.push(
      { match: new Map([[net.design.dstField, m.name]]), action: { do: "receive" } },
      { match: new Map(), action: { do: "forward" } },
    );
    // Breadth first from q: the first hop towards every member reached.
    const first = new Map<string, number>([[q, -1]]);
    const queue = [q];
    while (queue.length > 0) {
      const u = queue.shift() ?? "";
      for (const h of hops) {
        if (h.from !== u || first.has(h.to)) continue;
        first.set(h.to, u === q ? h.out : (first.get(u) ?? -1));
        queue.push(h.to);
      }
    }
    for (const { net: other, m: to, q: tq } of all) {
      const out = first.get(tq);
      if (tq !== q && out !== undefined && out >= 0)
        p.forward.push({ match: new Map([[other.design.dstField, to.name]]), action: { out } });
    }
    for (const [name, gq] of gateways) {
      const out = first.get(gq);
      if (gq !== q && out !== undefined && out >= 0)
        p.forward.push({ match: new Map([[net.design.dstField, name]]), action: { out } });
    }
  }
}

/** A link between two members of one network: declared, its identifiers taken, its hops noted. */
function link(
  net: Net,
  a: Member,
  b: Member,
  twoWay: boolean,
  lp: LinkPlan,
  hops: Hop[],
  more: Yaml = {},
): { ia: number; ib: number } {
  const ia = net.ident(a.key);
  const ib = net.ident(b.key);
  net.port(a.key).outs.push(ia);
  net.port(b.key).ins.push(ib);
  hops.push({ from: `${net.name}.${a.key}`, out: ia, to: `${net.name}.${b.key}` });
  if (twoWay) {
    net.port(a.key).ins.push(ia);
    net.port(b.key).outs.push(ib);
    hops.push({ from: `${net.name}.${b.key}`, out: ib, to: `${net.name}.${a.key}` });
  }
  net.links.push({
    from: `${a.key}.${ia}`,
    to: `${b.key}.${ib}`,
    ...(twoWay ? { mode: "two-way" } : {}),
    ...capture(lp),
    ...more,
  });
  return { ia, ib };
}

/**
 * Layering's plan for one overlay link: `implement(from, s, sOut, to, t, tIn, under)` makes the
 * link s.sOut → t.tIn (s of network `from`, t of `to`: the same network, or two bridged ones) a
 * virtual link, implemented by a session of `under` between the members on their machines
 * (ExternalSession at s, ExternalLink at t's end); false when no tag is left to tell it apart.
 */
function implementer(
  r: ComposedRecipe,
): (from: Net, s: Member, sOut: number, to: Net, t: Member, tIn: number, under: Net) => boolean {
  /** Virtual links already implemented between two members of an underlay: a tag each. */
  const pairs = new Map<string, number>();
  const sessions = new Map<string, number>();
  return (from, s, sOut, to, t, tIn, under) => {
    const us = under.onMachine(machineOf(s));
    const ut = under.onMachine(machineOf(t));
    if (us === undefined || ut === undefined) return false;
    const field = TAG_FIELD[under.design.name] ?? "";
    const pair = `${under.name}:${us.key}>${ut.key}`;
    const n = pairs.get(pair) ?? 0;
    const tags = pool(under.design, field, []);
    if (n >= tags.length) return false;
    pairs.set(pair, n + 1);
    const tag = at(tags, n + (r.picks[3] ?? 0));
    const session = 10 + (sessions.get(`${under.name}:${us.key}`) ?? 0);
    sessions.set(`${under.name}:${us.key}`, session - 9);
    under
      .plan(us.key)
      .send.push({ session, header: { [under.design.dstField]: under.text(ut.name), [field]: Number(tag) } });
    from.plan(s.key).transmit.set(sOut, { out: sOut, via: { session: `${under.name}.${session}` } });
    under.plan(ut.key).receive.push({
      match: new Map([
        [under.design.srcField ?? under.design.dstField, us.name],
        [field, tag],
      ]),
      action: { do: { link: `${to.name}.${tIn}` } },
    });
    return true;
  };
}

// ── Layering: level 0 at the bottom, on every machine; each level above on some ──

function layered(r: ComposedRecipe): Built {
  const machines = Array.from({ length: r.machines }, (_, i) => `x${i}`);
  const nets = Array.from(
    { length: r.levels },
    (_, k) => new Net(`n${k}`, at(DESIGN_CHOICES, r.designs[k] ?? 0), at([1, 1, 0, 7, 300], r.picks[k] ?? 0)),
  );
  nets.forEach((net, k) => {
    const bits = k === 0 ? -1 : (r.hosts[k] ?? 0);
    const on = machines.filter((_, i) => (bits >> i) & 1);
    for (const x of on.length >= 2 ? on : machines.slice(0, 2))
      net.add({ key: `m${x.slice(1)}`, name: memberName(net.design, Number(x.slice(1))), machine: x });
  });
  const implement = implementer(r);

  nets.forEach((net, k) => {
    const hops: Hop[] = [];
    for (const [li, lp] of (r.links[k] ?? []).entries()) {
      const [a, b] = ends(net.members, lp);
      if (k === 0 && lp.mode === 3) {
        // From outside: somewhere to inject what arrives at the bottom.
        const ib = net.ident(b.key);
        net.port(b.key).ins.push(ib);
        net.links.push({ external: `x${li}`, to: `${b.key}.${ib}`, ...capture(lp) });
        continue;
      }
      const twoWay = lp.mode !== 0;
      const { ia, ib } = link(net, a, b, twoWay, lp, hops);
      if (k === 0) continue;
      // A virtual link, implemented by an underlay with members on both machines; or a physical one.
      const unders = nets
        .slice(0, k)
        .flatMap((u, j) =>
          u.onMachine(machineOf(a)) !== undefined && u.onMachine(machineOf(b)) !== undefined ? [j] : [],
        );
      if (lp.under === 0 || unders.length === 0) continue;
      const under = nets[at(unders, lp.under - 1)];
      if (under === undefined) continue;
      implement(net, a, ia, net, b, ib, under);
      if (twoWay) implement(net, b, ib, net, a, ia, under);
    }
    route([net], hops);
  });
  // Receive rows: the planned pops, random ones into any overlay link on the machine, and (mostly) deliver the rest.
  nets.forEach((net, j) => {
    for (const m of net.members) {
      const p = net.plan(m.key);
      for (const over of nets.slice(j + 1)) {
        const o = over.onMachine(machineOf(m));
        if (o !== undefined) p.externalLinks.push(...over.port(o.key).ins.map((i) => `${over.name}.${i}`));
      }
      if (j === nets.length - 1 || ((r.picks[4] ?? 0) >> j) % 4 !== 0)
        p.receive.push({ match: new Map(), action: { do: "deliver" } });
    }
  });
  return { all: nets, names: (net) => net.members.map((m) => m.name) };
}

// ── Subduction: overlay n1 shares links of underlay n0 at members with one name on one machine ──

function subducted(r: ComposedRecipe): Built {
  const choice = at(DESIGN_CHOICES, r.designs[0] ?? 0);
  const d = design(choice.header);
  // Networks composed by subduction have one design; each keeps its own TTL setting.
  const ttl =
    d.hopLimitField === undefined
      ? choice
      : { header: choice.header, ...((r.designs[1] ?? 0) % 2 === 1 ? { ttl: "decrement" as const } : {}) };
  const under = new Net("n0", choice);
  const over = new Net("n1", ttl, 100); // identifiers apart from the underlay's, which shared members use too
  for (let i = 0; i <= r.machines; i++) under.add({ key: `m${i}`, name: memberName(d, i), machine: `x${i}` });
  // The shared members: an overlay member with the name and machine of an underlay member.
  const bits = r.hosts[0] ?? 0;
  const sharing = under.members.filter((_, i) => i < r.machines && (bits >> i) & 1);
  for (const m of sharing.length > 0 ? sharing : under.members.slice(0, 1)) over.add({ ...m });
  const own = 1 + ((r.hosts[1] ?? 0) % 2);
  for (let j = 0; j < own; j++) over.add({ key: `a${j}`, name: memberName(d, 40 + j), machine: `y${j}` });
  const partner = (m: Member): Member | undefined =>
    over.members.find((o) => o.machine === m.machine && o.name === m.name);

  const underHops: Hop[] = [];
  /** The end of a link plan where it is shared: the one end (of two) with an overlay partner, when the plan asks for
   * sharing. */
  const sharedEnd = (lp: LinkPlan): Member | undefined => {
    const [a, b] = ends(under.members, lp);
    return lp.shared && (partner(a) !== undefined) !== (partner(b) !== undefined)
      ? partner(a) !== undefined
        ? a
        : b
      : undefined;
  };
  // At least one shared link: two-way, from the first shared member to the last underlay member (which is never
  // shared).
  const plans = r.links[0] ?? [];
  const firstShared = under.members.findIndex((m) => partner(m) !== undefined);
  const forced: LinkPlan = {
    a: firstShared,
    b: under.members.length - 1,
    mode: 1,
    under: 0,
    shared: true,
    other: 0,
    capture: 1,
  };
  for (const lp of plans.some((x) => sharedEnd(x) !== undefined) ? plans : [forced, ...plans]) {
    const [a, b] = ends(under.members, lp);
    const twoWay = lp.mode !== 0;
    const shareAt = sharedEnd(lp);
    const { ia, ib } = link(under, a, b, twoWay, lp, underHops, shareAt === undefined ? {} : { shared: over.name });
    if (shareAt === undefined) continue;
    // The shared link: the overlay's member uses it with the underlay member's identifier (seed §5.3.1).
    const p = partner(shareAt);
    if (p === undefined) continue;
    const [ident, far, farIdent] = shareAt === a ? [ia, b, ib] : [ib, a, ia];
    const sends = shareAt === a || twoWay;
    const receives = shareAt === b || twoWay;
    const e = under.plan(shareAt.key);
    if (sends) {
      over.port(p.key).outs.push(ident);
      e.sharedOuts.push(ident);
    }
    if (receives) {
      over.port(p.key).ins.push(ident);
      e.sharedIns.push(ident);
    }
    over.plan(p.key).overlayShared = true;
    // The far end sends what is for the overlay back over the shared link (a middlebox), or returns everything.
    const f = under.plan(far.key);
    if (far === b ? twoWay : true) {
      if (twoWay && (r.picks[1] ?? 0) % 3 === 0)
        f.forward.push({ in: farIdent, match: new Map(), action: { out: farIdent } });
      for (const o of over.members)
        f.forward.push({ match: new Map([[d.dstField, o.name]]), action: { out: farIdent } });
    }
  }
  const overHops: Hop[] = [];
  for (const lp of r.links[1] ?? []) {
    const [a, b] = ends(over.members, lp);
    link(over, a, b, lp.mode !== 0, lp, overHops);
  }

  // Hand-overs first, then the routes of each network.
  for (const m of under.members) {
    const e = under.plan(m.key);
    const p = partner(m);
    if (p === undefined || (e.sharedIns.length === 0 && e.sharedOuts.length === 0)) continue;
    // SharedAcquire: what arrives on a shared link for an overlay name goes up to the overlay's member.
    for (const [k, ident] of e.sharedIns.entries()) {
      for (const o of over.members) {
        // the shared name itself: now the underlay's, now the overlay's
        if (o === p && ((r.picks[2] ?? 0) >> k) % 2 === 0) continue;
        e.acquire.push({ in: ident, match: new Map([[d.dstField, o.name]]), action: { do: "shared" } });
      }
    }
    // SharedForward: the overlay's member leaves packets for underlay names to the underlay's, which sends them on a
    // shared link.
    if (e.sharedOuts.length > 0)
      e.forward.push({
        in: "shared",
        match: new Map(),
        action: { out: (r.picks[5] ?? 0) % 2 === 0 ? e.sharedOuts : [at(e.sharedOuts, r.picks[6] ?? 0)] },
      });
    const q = over.plan(p.key);
    for (const [k, u] of under.members.entries()) {
      if (u === m || partner(u) !== undefined) continue;
      const direct = ((r.picks[7] ?? 0) >> k) % 2 === 1 && e.sharedOuts.length > 0;
      q.forward.push({
        match: new Map([[d.dstField, u.name]]),
        action: { out: direct ? at(e.sharedOuts, k) : "shared" },
      });
    }
  }
  route([under], underHops);
  // The overlay reaches the underlay's names through its shared members, which hand packets down (SharedForward).
  const gateway = over.members.find((o) => (under.plans.get(o.key)?.sharedOuts.length ?? 0) > 0) ?? over.members[0];
  const outside = under.members
    .filter((u) => partner(u) === undefined)
    .map((u): [bigint, string] => [u.name, `${over.name}.${gateway?.key ?? ""}`]);
  route([over], overHops, new Map(outside));
  for (const net of [under, over])
    for (const m of net.members) net.plan(m.key).receive.push({ match: new Map(), action: { do: "deliver" } });
  return { all: [under, over], names: () => [...under.members, ...over.members].map((m) => m.name) };
}

// ── Bridging: two or three networks of one design joined by links across them ──
//
// Some bridging links are implemented by sessions of an underlay `u` of any design, at both
// ends (seed Figure 8): the far end, whose network does not declare the link, transmits on it
// through a session too. Members m0, m1, … of every network run on machines m0, m1, …; so
// does u's member of each.

function bridged(r: ComposedRecipe): Built {
  const choice = at(DESIGN_CHOICES, r.designs[0] ?? 0);
  const nets = Array.from({ length: r.levels }, (_, k) => new Net(`n${k}`, choice));
  nets.forEach((net, k) => {
    // Names unique across the bridged set; keys m0, m1, … in every network (an end elsewhere is written
    // network:member.id).
    const count = 2 + ((r.hosts[k] ?? 0) % 3);
    for (let i = 0; i < count; i++) net.add({ key: `m${i}`, name: memberName(net.design, 16 * k + i) });
  });
  const under = new Net("u", at(DESIGN_CHOICES, r.designs[1] ?? 0));
  for (let i = 0; i < Math.max(...nets.map((n) => n.members.length)); i++)
    under.add({ key: `m${i}`, name: memberName(under.design, i) });
  const implement = implementer(r);
  const underHops: Hop[] = [];
  const hops: Hop[] = [];
  nets.forEach((net, k) => {
    for (const [li, lp] of (r.links[k] ?? []).entries()) {
      if (!lp.shared) {
        const [a, b] = ends(net.members, lp);
        link(net, a, b, lp.mode !== 0, lp, hops);
        continue;
      }
      // A bridging link, declared here, to a member of another network of the set.
      const far = at(
        nets.filter((n) => n !== net),
        lp.other,
      );
      const a = at(net.members, lp.a);
      const b = at(far.members, lp.b);
      const ia = net.ident(a.key);
      const ib = far.ident(b.key);
      net.port(a.key).outs.push(ia);
      far.port(b.key).ins.push(ib);
      hops.push({ from: `${net.name}.${a.key}`, out: ia, to: `${far.name}.${b.key}` });
      if (lp.mode === 3) {
        // An allcast group with receivers in both networks: nonlocal, one name across the set.
        const c = at(
          net.members.filter((m) => m !== a),
          lp.b,
        );
        const ic = net.ident(c.key);
        net.port(c.key).ins.push(ic);
        hops.push({ from: `${net.name}.${a.key}`, out: ia, to: `${net.name}.${c.key}` });
        net.links.push({
          from: `${a.key}.${ia}`,
          to: [`${c.key}.${ic}`, `${far.name}:${b.key}.${ib}`],
          mode: "allcast",
          group: `g${k}${li}`,
          ...capture(lp),
        });
        net.nonlocal.push(`g${k}${li}`);
        continue;
      }
      const twoWay = lp.mode !== 0;
      if (twoWay) {
        net.port(a.key).ins.push(ia);
        far.port(b.key).outs.push(ib);
        hops.push({ from: `${far.name}.${b.key}`, out: ib, to: `${net.name}.${a.key}` });
      }
      net.links.push({
        from: `${a.key}.${ia}`,
        to: `${far.name}:${b.key}.${ib}`,
        ...(twoWay ? { mode: "two-way" } : {}),
        ...capture(lp),
      });
      // Implemented by a session of u between the two machines, over a link of u of its own.
      const [ua, ub] = [under.onMachine(machineOf(a)), under.onMachine(machineOf(b))];
      if (lp.under === 0 || ua === undefined || ub === undefined || ua === ub) continue;
      link(under, ua, ub, true, lp, underHops);
      implement(net, a, ia, far, b, ib, under);
      if (twoWay) implement(far, b, ib, net, a, ia, under);
    }
  });
  // Routes across the whole set: bridging makes one network of them (seed §5.1.3); and u's own.
  route(nets, hops);
  route([under], underHops);
  for (const net of [...nets, under])
    for (const m of net.members) net.plan(m.key).receive.push({ match: new Map(), action: { do: "deliver" } });
  const all = under.links.length > 0 ? [...nets, under] : nets;
  return { all, names: (net) => (net === under ? under.members : nets.flatMap((n) => n.members)).map((m) => m.name) };
}
