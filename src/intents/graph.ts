// A network's links as a graph for the routes intent, and shortest paths over it
// to one destination. An edge is one direction of a link that a member sends on:
// a point-to-point link (one-way, each direction of a two-way one) to one
// receiver, or an anycast link to its group's receivers, of which the data plane
// picks one per flow (docs/spec.md, Designs). A path crosses an anycast link only
// if every receiver is as close to the destination as the best of them would
// make it: its cost is the link's plus the farthest receiver's distance, so that
// whichever receiver a flow's hash picks, the path is a shortest one (ECMP with
// the model's anycast affinity). Allcast links replicate and carry no routes;
// external ends and bridging ends are outside the network's graph.
//
// Only infrastructure members relay (seed §2.4, role): a user member is where a
// path starts or ends, never a hop on another's.

import type { NetworkSpec } from "../description/types.js";

export interface Edge {
  /** Sender (member index in the network). */
  readonly from: number;
  /** The sender's identifier for the link. */
  readonly out: number;
  /** Receivers (member indices): one, or an anycast group's. */
  readonly to: readonly number[];
  /** Each receiver's identifier for the link (its in-link). */
  readonly inAt: readonly number[];
  readonly cost: number;
  readonly anycast: boolean;
  /** The declared link's name. */
  readonly link: string;
}

export interface Graph {
  readonly keys: readonly string[];
  readonly index: ReadonlyMap<string, number>;
  readonly edges: readonly Edge[];
  /** Per member, the edges it sends on. */
  readonly outOf: readonly (readonly number[])[];
  /** Per member, the edges it receives on. */
  readonly into: readonly (readonly number[])[];
  /** Per member: 1 when it relays others' packets (infra). */
  readonly relays: Uint8Array;
  /** Per member: 1 when it is down. */
  readonly down: Uint8Array;
}

/** What is down: links by name, members by key. */
export interface Down {
  readonly links: ReadonlySet<string>;
  readonly members: ReadonlySet<string>;
}

export const NOTHING_DOWN: Down = { links: new Set(), members: new Set() };

export function networkGraph(net: NetworkSpec, costs: ReadonlyMap<string, number>, down: Down = NOTHING_DOWN): Graph {
  const keys = net.members.map((m) => m.key);
  const index = new Map(keys.map((k, i) => [k, i]));
  const n = keys.length;
  const relays = new Uint8Array(n);
  const isDown = new Uint8Array(n);
  net.members.forEach((m, i) => {
    relays[i] = m.role === "infra" ? 1 : 0;
    isDown[i] = down.members.has(m.key) ? 1 : 0;
  });
  const edges: Edge[] = [];
  const add = (
    from: { member: string; ident: number },
    to: readonly { member: string; ident: number }[],
    l: string,
    any: boolean,
  ): void => {
    const f = index.get(from.member);
    const t = to.map((e) => index.get(e.member) ?? -1);
    if (f === undefined || t.includes(-1) || isDown[f] === 1 || t.some((r) => isDown[r] === 1)) return;
    const inAt = to.map((e) => e.ident);
    edges.push({ from: f, out: from.ident, to: t, inAt, cost: costs.get(l) ?? 1, anycast: any, link: l });
  };
  for (const l of net.links) {
    if (down.links.has(l.name) || "external" in l.from || !Array.isArray(l.to)) continue;
    const from = l.from;
    const to = l.to as readonly { member: string; ident: number; network?: string }[];
    if (from.network !== undefined || to.some((e) => e.network !== undefined)) continue;
    if (l.mode === "allcast") continue;
    add(from, to, l.name, l.mode === "anycast");
    const back = to[0];
    if (l.mode === "two-way" && back !== undefined) add(back, [from], l.name, false);
  }
  const outOf: number[][] = keys.map(() => []);
  const into: number[][] = keys.map(() => []);
  edges.forEach((e, i) => {
    outOf[e.from]?.push(i);
    for (const r of e.to) into[r]?.push(i);
  });
  return { keys, index, edges, outOf, into, relays, down: isDown };
}

/** Shortest paths to one destination: each member's distance, and the edge it forwards on (−1: none, or itself). */
export interface Paths {
  readonly dist: Float64Array;
  readonly via: Int32Array;
}

/**
 * Dijkstra from the destination backwards. An edge is relaxed once its last receiver is settled
 * (receivers settle in order of distance, so that one is the farthest); only the destination and
 * relaying members pass distances on.
 */
export function pathsTo(g: Graph, dest: number): Paths {
  const n = g.keys.length;
  const dist = new Float64Array(n).fill(Infinity);
  const via = new Int32Array(n).fill(-1);
  const left = new Int32Array(g.edges.length);
  g.edges.forEach((e, i) => (left[i] = e.to.length));
  const settled = new Uint8Array(n);
  const heap = new MinHeap();
  if (g.down[dest] === 1) return { dist, via };
  dist[dest] = 0;
  heap.push(0, dest);
  for (let top = heap.pop(); top !== undefined; top = heap.pop()) {
    const v = top;
    if (settled[v] === 1) continue;
    settled[v] = 1;
    if (v !== dest && g.relays[v] !== 1) continue;
    const dv = dist[v] ?? Infinity;
    for (const ei of g.into[v] ?? []) {
      const left1 = (left[ei] ?? 0) - 1;
      left[ei] = left1;
      if (left1 > 0) continue;
      const e = g.edges[ei];
      if (e === undefined || e.from === dest) continue;
      const d = dv + e.cost;
      if (d < (dist[e.from] ?? Infinity)) {
        dist[e.from] = d;
        heap.push(d, e.from);
      }
    }
  }
  // The edge each member forwards on: among those on a shortest path, an anycast group's (the most receivers: ECMP),
  // else the lowest identifier.
  for (let u = 0; u < n; u++) {
    if (u === dest || dist[u] === Infinity) continue;
    let best = -1;
    for (const ei of g.outOf[u] ?? []) {
      const e = g.edges[ei];
      if (e === undefined || left[ei] !== 0) continue;
      let far = 0;
      for (const r of e.to) far = Math.max(far, dist[r] ?? Infinity);
      if (far + e.cost !== dist[u]) continue;
      const b = g.edges[best];
      if (b === undefined || better(e, b)) best = ei;
    }
    via[u] = best;
  }
  return { dist, via };
}

function better(e: Edge, b: Edge): boolean {
  if (e.to.length !== b.to.length) return e.to.length > b.to.length;
  return e.out < b.out;
}

/** A binary heap of (priority, item). */
class MinHeap {
  readonly #keys: number[] = [];
  readonly #items: number[] = [];

  push(key: number, item: number): void {
    const k = this.#keys;
    const it = this.#items;
    let i = k.length;
    k.push(key);
    it.push(item);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if ((k[p] ?? 0) <= key) break;
      k[i] = k[p] ?? 0;
      it[i] = it[p] ?? 0;
      i = p;
    }
    k[i] = key;
    it[i] = item;
  }

  pop(): number | undefined {
    const k = this.#keys;
    const it = this.#items;
    if (k.length === 0) return undefined;
    const top = it[0];
    const lastK = k.pop() ?? 0;
    const lastI = it.pop() ?? 0;
    const n = k.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && (k[r] ?? 0) < (k[l] ?? 0) ? r : l;
        if ((k[c] ?? 0) >= lastK) break;
        k[i] = k[c] ?? 0;
        it[i] = it[c] ?? 0;
        i = c;
      }
      k[i] = lastK;
      it[i] = lastI;
    }
    return top;
  }
}
