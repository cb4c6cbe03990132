// The l2 intent compiled to rows (docs/spec.md, Intents, l2): on an Ethernet
// network, every user member (a host) is a destination known by its name. Every
// member forwards frames for a host along a shortest path over the links
// (./graph.ts, only infra members relaying); broadcast frames are flooded along
// one spanning tree of the network's two-way links, grown breadth-first from the
// first infra member of each connected part: a switch floods what arrives on a
// tree link out of its other tree links, never back the way it came, so each
// host receives a broadcast once. A host acquires its name and broadcast for
// delivery; a switch forwards everything it acquires.

import type { MemberTables, NetworkSpec, Provenance, RowSpec, TableSpec } from "../description/types.js";
import type { L2Intent } from "../description/types.js";
import { type Down, type Graph, networkGraph, NOTHING_DOWN, pathsTo } from "./graph.js";
import type { IntentTables } from "./routes.js";
import { dstWidth } from "./width.js";
import { rowKey } from "./merge.js";

/** The rows of the l2 intent of `net`, with what is `down` left out of its graph. */
export function l2Tables(net: NetworkSpec, intent: L2Intent, down: Down = NOTHING_DOWN): IntentTables {
  const g = networkGraph(net, intent.costs, down);
  const forward = forwardTables(net, intent, g);
  const out = new Map<string, MemberTables>();
  net.members.forEach((m, i) => {
    if (g.down[i] === 1) return;
    const own = (value: bigint, destination: string): RowSpec => ({
      match: new Map([[net.design.dstField, { kind: "exact", value }]]),
      action: { kind: "receive" },
      at: intent.at,
      intent: provenance(intent, destination),
    });
    const host = m.role !== "infra";
    const acquire: RowSpec[] = host
      ? [own(m.nameValue, m.key), own(broadcast(net), "flood")]
      : [{ match: new Map(), action: { kind: "forward" }, at: intent.at, intent: provenance(intent, "transit") }];
    const tables: MemberTables = {
      acquire: { role: "acquire", rows: acquire, at: intent.at },
      forward: forward[i] ?? table([], intent),
    };
    if (host)
      tables.receive = {
        role: "receive",
        rows: [{ match: new Map(), action: { kind: "deliver" }, at: intent.at, intent: provenance(intent, m.key) }],
        at: intent.at,
      };
    out.set(m.key, tables);
  });
  return out;
}

/** An l2 network's forward tables kept between changes: what is down changed, the members whose tables changed. */
export class NetworkL2 {
  readonly #net: NetworkSpec;
  readonly #intent: L2Intent;
  #keys: Map<string, string>;

  constructor(net: NetworkSpec, intent: L2Intent) {
    this.#net = net;
    this.#intent = intent;
    this.#keys = this.#tableKeys(forwardTables(net, intent, networkGraph(net, intent.costs)));
  }

  update(down: Down): Map<string, TableSpec> {
    const tables = forwardTables(this.#net, this.#intent, networkGraph(this.#net, this.#intent.costs, down));
    const keys = this.#tableKeys(tables);
    const out = new Map<string, TableSpec>();
    this.#net.members.forEach((m, i) => {
      const t = tables[i];
      if (t !== undefined && keys.get(m.key) !== this.#keys.get(m.key)) out.set(m.key, t);
    });
    this.#keys = keys;
    return out;
  }

  #tableKeys(tables: readonly TableSpec[]): Map<string, string> {
    const w = dstWidth(this.#net);
    return new Map(
      this.#net.members.map((m, i) => [
        m.key,
        (tables[i]?.rows ?? []).map((r) => `${rowKey(r, w)}>${out(r)}`).join(";"),
      ]),
    );
  }
}

function out(r: RowSpec): string {
  return r.action.kind === "out" ? r.action.outLinks.join(",") : r.action.kind;
}

/** Each member's forward table: a row per host it has a path to, then the flood rows of the spanning tree. */
function forwardTables(net: NetworkSpec, intent: L2Intent, g: Graph): TableSpec[] {
  const n = g.keys.length;
  const rows: RowSpec[][] = g.keys.map(() => []);
  const field = net.design.dstField;
  const tree = spanningTree(g);
  // Hosts with one link up, which need no row per host (oneLink).
  const single = net.members.map((m, i) => m.role !== "infra" && tree[i]?.length === 1 && sendsOn(g, i).size === 1);
  net.members.forEach((d, dest) => {
    if (d.role === "infra" || g.down[dest] === 1) return;
    const { via } = pathsTo(g, dest);
    for (let i = 0; i < n; i++) {
      const e = g.edges[via[i] ?? -1];
      if (e === undefined || single[i] === true) continue;
      rows[i]?.push({
        match: new Map([[field, { kind: "exact", value: d.nameValue }]]),
        action: { kind: "out", outLinks: [e.out] },
        at: intent.at,
        intent: provenance(intent, d.key),
      });
    }
  });
  const all = broadcast(net);
  net.members.forEach((m, i) => {
    const links = tree[i] ?? [];
    const flood = (from: number | "self", outs: number[]): void => {
      if (outs.length > 0)
        rows[i]?.push({
          in: from,
          match: new Map([[field, { kind: "exact", value: all }]]),
          action: { kind: "out", outLinks: outs },
          at: intent.at,
          intent: provenance(intent, "flood"),
        });
    };
    if (m.role === "infra")
      for (const l of links)
        flood(
          l,
          links.filter((x) => x !== l),
        );
    else if (single[i] === true) rows[i] = oneLink(m.nameValue, field, links, intent);
    else flood("self", links);
  });
  return rows.map((r) => table(r, intent));
}

/** A host with one link up sends all it sends there, broadcast too, but what it addresses to itself: two rows. */
function oneLink(own: bigint, field: string, links: number[], intent: L2Intent): RowSpec[] {
  const self = { in: "self" as const, at: intent.at, intent: provenance(intent, "all") };
  return [
    { ...self, match: new Map([[field, { kind: "exact", value: own }]]), action: { kind: "drop" } },
    { ...self, match: new Map(), action: { kind: "out", outLinks: links } },
  ];
}

/** The identifiers of the links member i sends on that are up. */
function sendsOn(g: Graph, i: number): Set<number> {
  return new Set((g.outOf[i] ?? []).filter((e) => g.edgeDown[e] !== 1).map((e) => g.edges[e]?.out ?? -1));
}

/**
 * Each member's links (its identifiers) in the flood tree: breadth-first from each infra member not yet reached, over
 * two-way point-to-point links that are up; a host is a leaf (it relays nothing), so a host with two links floods on
 * one.
 */
export function spanningTree(g: Graph): number[][] {
  const n = g.keys.length;
  const reached = new Uint8Array(n);
  const links: number[][] = g.keys.map(() => []);
  for (let root = 0; root < n; root++) {
    if (reached[root] === 1 || g.relays[root] !== 1 || g.down[root] === 1) continue;
    reached[root] = 1;
    const queue = [root];
    for (let u = queue.shift(); u !== undefined; u = queue.shift())
      for (const ei of g.outOf[u] ?? []) {
        const e = g.edges[ei];
        const v = e?.to[0];
        if (e === undefined || v === undefined || e.to.length !== 1 || g.edgeDown[ei] === 1 || reached[v] === 1)
          continue;
        const back = (g.outOf[v] ?? []).some((bi) => g.edges[bi]?.link === e.link && g.edgeDown[bi] !== 1);
        if (!back) continue;
        reached[v] = 1;
        links[u]?.push(e.out);
        links[v]?.push(e.inAt[0] ?? e.out);
        if (g.relays[v] === 1) queue.push(v);
      }
  }
  return links.map((l) => l.sort((a, b) => a - b));
}

function table(rows: RowSpec[], intent: L2Intent): TableSpec {
  return { role: "forward", rows, at: intent.at };
}

/** The broadcast address: every bit of the destination field set. */
function broadcast(net: NetworkSpec): bigint {
  return (1n << BigInt(dstWidth(net))) - 1n;
}

function provenance(intent: L2Intent, destination: string): Provenance {
  return { intent: "l2", destination, at: intent.at };
}
