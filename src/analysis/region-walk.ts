// A table write's cut of the header classes (./header-space.ts, #addLive) in
// one walk: the class diagram's terminals inside a region replaced, as
// Bdd.mapUnderLeaves does, and in the same walk, for each terminal made there,
// how many headers of the region reach it and the first of them (low branches
// first, its witness). Before, the region was walked twice, the second time
// over the new diagram to count (a FIB write under a 2,000-row ACL: the /24's
// part of the diagram, some 510 nodes, each time), and each pair's count was a
// BigInt of its own, made and dropped: most of what a write allocated.
//
// The walk records each pair it settles once, children before parents, in
// typed arrays kept from one write to the next; the counts then go down that
// record, parents first, as fractions of all headers in doubles. A double
// holds them exactly while a sum needs no more than its 53 bits (TwoSum says
// when one did not: Knuth, TAOCP vol. 2, 4.2.2); past that they are counted
// again down the same record as BigInts.

import type { Bdd, PairMemo } from "./bdd.js";

/** What a walk found of a terminal it made: the headers of the region that reach it, and the first one's bits set;
 * per terminal of the diagram before (a class's leaf) whose headers it took, how many. */
export interface Reached {
  count: bigint;
  readonly path: readonly number[];
  readonly from: Map<number, bigint>;
}

/** What a node of the diagram became under a leaf of the region before, per pair of terminals (before, after) the
 * assignments of the variables from its level on that reach them (./fate-owner.ts keeps it from write to write). */
export interface Known {
  readonly node: number;
  readonly pairs: readonly (readonly [before: number, after: number, count: bigint])[];
}

/** What a walk may find made before instead of walking a node (`known`), and is told of what it made (`remember`). */
export interface RegionMemo {
  known(n: number, leaf: number): Known | undefined;
  remember(n: number, leaf: number, made: number): void;
}

/** A pair of terminals (before, after) as one key: terminals are node ids, below the store's bound (Bdd's ID). */
const pairKey = (before: number, after: number): number => before * 2 ** 22 + after;

/** The record of a walk, grown as needed and kept for the next (a write at a time: walks do not nest). */
let node = new Int32Array(1 << 10);
let level = new Int32Array(1 << 10);
let low = new Int32Array(1 << 10);
let high = new Int32Array(1 << 10);
let weight = new Float64Array(1 << 10);
let size = 0;

/** A child outside the region, as the record holds it: no entry, its node kept as −2 − node. */
const outsideOf = (n: number): number => -2 - n;
const nodeAt = (k: number): number => (k >= 0 ? (node[k] ?? 0) : -2 - k);

function record(n: number, v: number, k0: number, k1: number): number {
  if (size === node.length) {
    const grow = (a: Int32Array): Int32Array<ArrayBuffer> => {
      const b = new Int32Array(a.length * 2);
      b.set(a);
      return b;
    };
    [node, level, low, high] = [grow(node), grow(level), grow(low), grow(high)];
    weight = new Float64Array(node.length);
  }
  node[size] = n;
  level[size] = v;
  low[size] = k0;
  high[size] = k1;
  return size++;
}

/**
 * Diagram `root` with each terminal under a leaf `l` of the multi-terminal diagram `q` replaced by `f(l)(terminal)`
 * (where `f(l)` gives a replacement: the region; the terminals under other leaves stay), and for each terminal made in
 * the region, how many assignments of variables 0..vars−1 there reach it and the variables set on the first path to
 * it. `what` names the work in a budget stop.
 */
export function mapRegion(
  b: Bdd,
  root: number,
  q: number,
  f: (leaf: number) => ((terminal: number) => number) | undefined,
  vars: number,
  what: string,
  memo?: RegionMemo,
): { root: number; reached: Map<number, Reached>; met: Set<number> } {
  const pairs = b.borrowMemo();
  const marks = b.borrowMemo();
  const replace = new Map<number, ((terminal: number) => number) | undefined>();
  const paths = new Map<number, number[]>();
  const set: number[] = [];
  const met = new Set<number>();
  /** Entries of the record that are nodes found made before, what they lead to. */
  const known = new Map<number, Known>();
  size = 0;
  // `n` under leaf `p` of `q`, whose replacement is `g`: every node of `n` made again with its terminals replaced.
  const mark = (n: number, p: number, g: (terminal: number) => number): number => {
    const found = marks.get(n, p);
    if (found >= 0) return found;
    let r: number;
    if (b.isTerminal(n)) {
      const t = g(n);
      met.add(n);
      if (!paths.has(t)) paths.set(t, [...set]);
      // A terminal's entry keeps the one it replaced where an inner node keeps its low child.
      r = record(t, vars, n, -1);
    } else {
      const v = b.variable(n);
      const k0 = mark(b.low(n), p, g);
      set.push(v);
      const k1 = mark(b.high(n), p, g);
      set.pop();
      r = record(b.mk(v, nodeAt(k0), nodeAt(k1)), v, k0, k1);
    }
    b.memoBound(marks, what);
    marks.set(n, p, r);
    return r;
  };
  const rec = (a: number, p: number): number => {
    if (b.isTerminal(p)) {
      let g = replace.get(p);
      if (!replace.has(p)) replace.set(p, (g = f(p)));
      if (g === undefined) return outsideOf(a);
      if (memo === undefined || b.isTerminal(a)) return mark(a, p, g);
      // Where the region's leaf meets the diagram: what a write made of this node under this leaf before.
      const found = marks.get(a, p);
      if (found >= 0) return found;
      const k = memo.known(a, p);
      const r = k === undefined ? mark(a, p, g) : recordKnown(k, Math.min(b.variable(a), vars), known, met);
      if (k === undefined) memo.remember(a, p, nodeAt(r));
      else marks.set(a, p, r);
      return r;
    }
    const found = pairs.get(a, p);
    if (found >= 0) return found;
    const v = Math.min(b.variable(a), b.variable(p));
    const [a0, a1] = b.cofactors(a, v);
    const [p0, p1] = b.cofactors(p, v);
    const k0 = rec(a0, p0);
    set.push(v);
    const k1 = rec(a1, p1);
    set.pop();
    const r = record(b.mk(v, nodeAt(k0), nodeAt(k1)), Math.min(v, vars), k0, k1);
    b.memoBound(pairs, what);
    pairs.set(a, p, r);
    return r;
  };
  const top = rec(root, q);
  b.giveBack(pairs);
  b.giveBack(marks);
  return { root: nodeAt(top), reached: counted(top, vars, paths, known), met };
}

/** An entry for node `k` found made before, at level `v`, noted in `known`; the terminals it leads from in `met`. */
function recordKnown(k: Known, v: number, known: Map<number, Known>, met: Set<number>): number {
  const r = record(k.node, v, -1, -1);
  known.set(r, k);
  for (const [before] of k.pairs) met.add(before);
  return r;
}

/** Per terminal made, the headers of the region that reach it (from the record of the walk whose top entry is `top`),
 * and its first path. */
function counted(
  top: number,
  vars: number,
  paths: ReadonlyMap<number, number[]>,
  known: ReadonlyMap<number, Known>,
): Map<number, Reached> {
  const reached = new Map<number, Reached>();
  for (const [t, path] of paths) reached.set(t, { count: 0n, path, from: new Map() });
  // Past 1,000 variables a share's 2^-vars is past a double's exponent: BigInts then.
  // What nodes found made before lead to is counted as BigInts (their counts are).
  if (top >= 0 && (vars > 1000 || known.size > 0 || !countExactly(top, vars, reached)))
    countBig(top, vars, reached, known);
  return reached;
}

/**
 * The counts of `reached` from the record, as doubles: each entry's share of all headers, half its parent's along each
 * edge (an edge that skips variables halves no more: the share of a set does not change with variables it leaves
 * free), each terminal's share summed in the entry of its first path (a terminal has one entry per leaf of the region
 * it is under, and a region's leaves make different terminals). False, with no count set, when a sum was not exact:
 * TwoSum's error term, what rounding lost of x + y, is 0 only when nothing was.
 */
function countExactly(top: number, vars: number, reached: Map<number, Reached>): boolean {
  weight.fill(0, 0, size);
  weight[top] = 1;
  const first = new Map<number, number>();
  for (let i = size - 1; i >= 0; i--) {
    const w = weight[i] ?? 0;
    if (w === 0) continue;
    if ((level[i] ?? vars) === vars) {
      const key = pairKey(low[i] ?? -1, node[i] ?? -1);
      const at = first.get(key);
      if (at === undefined) {
        first.set(key, i);
        continue;
      }
      const x = weight[at] ?? 0;
      const s = x + w;
      const z = s - x;
      if (x - (s - z) + (w - z) !== 0) return false;
      weight[at] = s;
      continue;
    }
    const half = w / 2;
    const k0 = low[i] ?? -1;
    const k1 = high[i] ?? -1;
    if (k0 >= 0) {
      const x = weight[k0] ?? 0;
      const s = x + half;
      const z = s - x;
      if (x - (s - z) + (half - z) !== 0) return false;
      weight[k0] = s;
    }
    if (k1 >= 0) {
      const x = weight[k1] ?? 0;
      const s = x + half;
      const z = s - x;
      if (x - (s - z) + (half - z) !== 0) return false;
      weight[k1] = s;
    }
  }
  // A share times 2^vars: a power of two, exact.
  const all = 2 ** vars;
  for (const at of first.values()) {
    const got = reached.get(node[at] ?? -1);
    if (got === undefined) continue;
    const n = BigInt((weight[at] ?? 0) * all);
    got.count += n;
    const before = low[at] ?? -1;
    got.from.set(before, (got.from.get(before) ?? 0n) + n);
  }
  return true;
}

/** The counts of `reached` from the record as BigInts (assignments, parents before children). */
function countBig(top: number, vars: number, reached: Map<number, Reached>, known: ReadonlyMap<number, Known>): void {
  const w = new Array<bigint>(size).fill(0n);
  w[top] = 1n << BigInt(level[top] ?? 0);
  for (const got of reached.values()) {
    got.count = 0n;
    got.from.clear();
  }
  for (let i = size - 1; i >= 0; i--) {
    const x = w[i] ?? 0n;
    if (x === 0n) continue;
    const v = level[i] ?? vars;
    const k = known.get(i);
    if (k !== undefined) {
      for (const [before, after, count] of k.pairs) {
        let got = reached.get(after);
        // A terminal no walk reached: a class already (no witness wanted).
        if (got === undefined) reached.set(after, (got = { count: 0n, path: [], from: new Map() }));
        got.count += x * count;
        got.from.set(before, (got.from.get(before) ?? 0n) + x * count);
      }
      continue;
    }
    if (v === vars) {
      const got = reached.get(node[i] ?? -1);
      if (got === undefined) continue;
      got.count += x;
      const before = low[i] ?? -1;
      got.from.set(before, (got.from.get(before) ?? 0n) + x);
      continue;
    }
    for (const k of [low[i] ?? -1, high[i] ?? -1])
      if (k >= 0) w[k] = (w[k] ?? 0n) + (x << BigInt((level[k] ?? vars) - v - 1));
  }
}
