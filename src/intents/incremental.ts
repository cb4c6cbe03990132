// The routes of one network kept between changes, so that a link or member
// going down or coming up costs what it changes: per destination member, each
// member's distance and the edge it forwards on (./graph.ts), and the out-link
// its row names. A link going down changes only the destinations whose tree used
// it, and there only the members below it (their distances found again from the
// members around them); a link coming up, only the members it brings closer.
//
// A member that can no longer reach a destination keeps the out-link its row
// had: its packets are dropped where the path is down (link-down, member-down)
// instead of at a missing row, and nothing is written. This never loops: a
// member's kept out-link leads to members cut off since the same change or
// later, each one step closer in the tree it was last in, or to what is down.

import { chooseOne, type Down, type Graph, markDown, MinHeap, pathsTo } from "./graph.js";

export class RouteState {
  readonly graph: Graph;
  /** Per destination member d: distances and edges (−1: none), as pathsTo gives them. */
  readonly #dist: Float64Array[];
  readonly #via: Int32Array[];
  /** Per destination d, at d·n + m: the out-link m's row names toward d (−1: none ever). */
  readonly outs: Int32Array;

  constructor(graph: Graph) {
    this.graph = graph;
    const n = graph.keys.length;
    this.outs = new Int32Array(n * n).fill(-1);
    this.#dist = [];
    this.#via = [];
    for (let d = 0; d < n; d++) {
      const p = pathsTo(graph, d);
      this.#dist.push(p.dist);
      this.#via.push(p.via);
      this.#record(
        d,
        Array.from({ length: n }, (_, m) => m),
      );
    }
  }

  /** Takes `down` as what is down now; returns the members whose out-links changed (toward any destination). */
  update(down: Down): Set<number> {
    const g = this.graph;
    const c = markDown(g, down);
    const changed = new Set<number>();
    const n = g.keys.length;
    const mixed =
      (c.edgesDown.length > 0 || c.membersDown.length > 0) && (c.edgesUp.length > 0 || c.membersUp.length > 0);
    for (let d = 0; d < n; d++) {
      let touched: readonly number[];
      if (mixed || c.membersUp.includes(d) || c.membersDown.includes(d)) touched = this.#full(d);
      else if (c.edgesDown.length > 0) touched = this.#cut(d, c.edgesDown);
      else touched = this.#join(d, c.edgesUp);
      for (const m of this.#record(d, touched)) changed.add(m);
    }
    return changed;
  }

  /** Notes the out-links of `members` toward d; returns those that changed. A member with no edge keeps its own. */
  #record(d: number, members: Iterable<number>): number[] {
    const n = this.graph.keys.length;
    const via = this.#via[d];
    const out: number[] = [];
    if (via === undefined) return out;
    for (const m of members) {
      const e = this.graph.edges[via[m] ?? -1];
      if (e === undefined || this.outs[d * n + m] === e.out) continue;
      this.outs[d * n + m] = e.out;
      out.push(m);
    }
    return out;
  }

  #full(d: number): number[] {
    const p = pathsTo(this.graph, d);
    this.#dist[d] = p.dist;
    this.#via[d] = p.via;
    return Array.from({ length: this.graph.keys.length }, (_, m) => m);
  }

  /** Edges gone down: the members whose path to d crossed one, found again from the members around them. */
  #cut(d: number, gone: readonly number[]): number[] {
    const g = this.graph;
    const dist = this.#dist[d];
    const via = this.#via[d];
    if (dist === undefined || via === undefined) return [];
    const below = new Set<number>();
    const queue: number[] = [];
    for (const e of gone) {
      const u = g.edges[e]?.from ?? -1;
      if (via[u] === e && !below.has(u)) (below.add(u), queue.push(u));
    }
    if (queue.length === 0) return [];
    // Another way as short (its receivers are closer, so none is below): only the choice changes, nothing below it.
    const again = queue.map((u) => chooseOne(g, d, dist, u));
    if (again.every((e) => e >= 0)) {
      queue.forEach((u, k) => (via[u] = again[k] ?? -1));
      return queue;
    }
    for (let x = queue.shift(); x !== undefined; x = queue.shift())
      for (const e of g.into[x] ?? []) {
        const w = g.edges[e]?.from ?? -1;
        if (via[w] === e && !below.has(w)) (below.add(w), queue.push(w));
      }
    for (const t of below) ((dist[t] = Infinity), (via[t] = -1));
    const settled = (x: number): boolean => !below.has(x);
    const heap = new MinHeap();
    for (const t of below) {
      let best = Infinity;
      for (const e of g.outOf[t] ?? []) best = Math.min(best, this.#through(d, e, settled));
      if (best < Infinity) ((dist[t] = best), heap.push(best, t));
    }
    const done = new Set<number>();
    for (let v = heap.pop(); v !== undefined; v = heap.pop()) {
      if (done.has(v)) continue;
      done.add(v);
      if (g.relays[v] !== 1) continue;
      for (const e of g.into[v] ?? []) {
        const w = g.edges[e]?.from ?? -1;
        if (!below.has(w) || done.has(w) || w === d) continue;
        const cand = this.#through(d, e, (x) => settled(x) || done.has(x));
        if (cand < (dist[w] ?? Infinity)) ((dist[w] = cand), heap.push(cand, w));
      }
    }
    for (const t of below) via[t] = chooseOne(g, d, dist, t);
    return [...below];
  }

  /** Edges come up: the members they bring closer to d (or as close, another way: the choice may change). */
  #join(d: number, come: readonly number[]): number[] {
    const g = this.graph;
    const dist = this.#dist[d];
    const via = this.#via[d];
    if (dist === undefined || via === undefined) return [];
    const again = new Set<number>();
    const queue: number[] = [];
    const consider = (e: number): void => {
      const w = g.edges[e]?.from ?? -1;
      if (w < 0 || w === d) return;
      const cand = this.#through(d, e, () => true);
      if (cand > (dist[w] ?? Infinity)) return;
      again.add(w);
      if (cand < (dist[w] ?? Infinity)) ((dist[w] = cand), queue.push(w));
    };
    for (const e of come) consider(e);
    for (let v = queue.shift(); v !== undefined; v = queue.shift()) {
      if (g.relays[v] !== 1) continue;
      for (const e of g.into[v] ?? []) consider(e);
    }
    for (const t of again) via[t] = chooseOne(g, d, dist, t);
    return [...again];
  }

  /** What edge e costs its sender toward d: its cost and its farthest receiver's distance, if each receiver counts. */
  #through(d: number, e: number, settled: (x: number) => boolean): number {
    const g = this.graph;
    const edge = g.edges[e];
    const dist = this.#dist[d];
    if (edge === undefined || dist === undefined || g.edgeDown[e] === 1) return Infinity;
    let far = 0;
    for (const r of edge.to) {
      if (!settled(r) || (r !== d && g.relays[r] !== 1)) return Infinity;
      far = Math.max(far, dist[r] ?? Infinity);
    }
    return far + edge.cost;
  }
}
