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
  /** Per edge: 1 when its link or a member at it is down (it carries nothing). */
  readonly edgeDown: Uint8Array;
  /** The same as flat arrays, for the walks: each edge's sender and cost, each member's incoming edges (CSR). */
  readonly flat: Flat;
}

interface Flat {
  /** Every cost is 1. */
  readonly unit: boolean;
  readonly from: Int32Array;
  readonly cost: Float64Array;
  /** Receivers per edge. */
  readonly width: Int32Array;
  /** Member m's incoming edges are intoList[intoStart[m] .. intoStart[m + 1]). */
  readonly intoStart: Int32Array;
  readonly intoList: Int32Array;
}

function flatten(edges: readonly Edge[], into: readonly (readonly number[])[]): Flat {
  const intoStart = new Int32Array(into.length + 1);
  into.forEach((list, m) => (intoStart[m + 1] = (intoStart[m] ?? 0) + list.length));
  return {
    unit: edges.every((e) => e.cost === 1),
    from: Int32Array.from(edges, (e) => e.from),
    cost: Float64Array.from(edges, (e) => e.cost),
    width: Int32Array.from(edges, (e) => e.to.length),
    intoStart,
    intoList: Int32Array.from(into.flat()),
  };
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
    if (f === undefined || t.includes(-1)) return;
    const inAt = to.map((e) => e.ident);
    edges.push({ from: f, out: from.ident, to: t, inAt, cost: costs.get(l) ?? 1, anycast: any, link: l });
  };
  for (const l of net.links) {
    if ("external" in l.from || !Array.isArray(l.to)) continue;
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
  const g = { keys, index, edges, outOf, into, relays, down: isDown, edgeDown: new Uint8Array(edges.length) };
  markDown(g, down);
  return { ...g, flat: flatten(edges, into) };
}

/**
 * Marks what is down (a link's edges, a member and every edge at it), in place; returns the edges that went down and
 * came up, and the members.
 */
export function markDown(
  g: Pick<Graph, "keys" | "edges" | "down" | "edgeDown">,
  down: Down,
): { edgesDown: number[]; edgesUp: number[]; membersDown: number[]; membersUp: number[] } {
  const changed = {
    edgesDown: [] as number[],
    edgesUp: [] as number[],
    membersDown: [] as number[],
    membersUp: [] as number[],
  };
  g.keys.forEach((k, i) => {
    const now = down.members.has(k) ? 1 : 0;
    if (now !== g.down[i]) (now === 1 ? changed.membersDown : changed.membersUp).push(i);
    g.down[i] = now;
  });
  g.edges.forEach((e, i) => {
    const now = down.links.has(e.link) || g.down[e.from] === 1 || e.to.some((r) => g.down[r] === 1) ? 1 : 0;
    if (now !== g.edgeDown[i]) (now === 1 ? changed.edgesDown : changed.edgesUp).push(i);
    g.edgeDown[i] = now;
  });
  return changed;
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
  if (g.down[dest] === 1) return { dist, via };
  const { from, cost, intoStart, intoList } = g.flat;
  const left = g.flat.width.slice();
  const settled = new Uint8Array(n);
  // Costs all 1 (the default): a FIFO pops in order of distance as a heap would, at a fraction of the cost.
  const heap = g.flat.unit ? new Fifo(n + from.length) : new MinHeap();
  dist[dest] = 0;
  heap.push(0, dest);
  for (let v = heap.pop(); v !== undefined; v = heap.pop()) {
    if (settled[v] === 1) continue;
    settled[v] = 1;
    if (v !== dest && g.relays[v] !== 1) continue;
    const dv = dist[v] ?? Infinity;
    const end = intoStart[v + 1] ?? 0;
    for (let i = intoStart[v] ?? 0; i < end; i++) {
      const ei = intoList[i] ?? 0;
      if (g.edgeDown[ei] === 1) continue;
      const l = (left[ei] ?? 0) - 1;
      left[ei] = l;
      const u = from[ei] ?? 0;
      if (l > 0 || u === dest) continue;
      const d = dv + (cost[ei] ?? 1);
      if (d < (dist[u] ?? Infinity)) {
        dist[u] = d;
        heap.push(d, u);
      }
    }
  }
  chooseEdges(g, dest, dist, left, via);
  return { dist, via };
}

/**
 * The edge each member forwards on: among those on a shortest path (every receiver settled), an anycast group's (the
 * most receivers: ECMP), else the lowest identifier.
 */
function chooseEdges(g: Graph, dest: number, dist: Float64Array, left: Int32Array, via: Int32Array): void {
  for (let u = 0; u < via.length; u++)
    via[u] = u === dest || dist[u] === Infinity ? -1 : chooseOne(g, dest, dist, u, (e) => left[e] === 0);
}

/** The edge `u` forwards on toward `dest`, by the distances (−1: none); `counts(e)`: each receiver of e passes on. */
export function chooseOne(
  g: Graph,
  dest: number,
  dist: Float64Array,
  u: number,
  counts: (e: number) => boolean = (e) => g.edges[e]?.to.every((r) => r === dest || g.relays[r] === 1) === true,
): number {
  if (u === dest || dist[u] === Infinity) return -1;
  let best = -1;
  for (const ei of g.outOf[u] ?? []) {
    const e = g.edges[ei];
    if (e === undefined || g.edgeDown[ei] === 1 || !counts(ei)) continue;
    let far = 0;
    for (const r of e.to) far = Math.max(far, dist[r] ?? Infinity);
    if (far + e.cost !== dist[u]) continue;
    const b = g.edges[best];
    if (b === undefined || better(e, b)) best = ei;
  }
  return best;
}

function better(e: Edge, b: Edge): boolean {
  if (e.to.length !== b.to.length) return e.to.length > b.to.length;
  return e.out < b.out;
}

/** A queue of items pushed in order of priority (every step costs 1). */
class Fifo {
  readonly #items: Int32Array;
  #head = 0;
  #tail = 0;

  constructor(room: number) {
    this.#items = new Int32Array(room);
  }

  push(_key: number, item: number): void {
    this.#items[this.#tail++] = item;
  }

  pop(): number | undefined {
    return this.#head < this.#tail ? this.#items[this.#head++] : undefined;
  }
}

/** A binary heap of (priority, item). */
export class MinHeap {
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
