// Binary decision diagrams over header bits, the set representation behind
// header classes (./header-space.ts). One store holds reduced, ordered nodes
// (hash-consed: equal sets are equal node ids) and terminals. Two terminals are
// the booleans; the others are the leaves of a multi-terminal diagram, each
// leaf standing for one header class. Node ids are plain numbers indexing
// parallel arrays, so nothing here allocates per node beyond the arrays'
// growth; a node id is below 2^22, which keys caches as exact integers. How
// many there may be is the budget's (./budget.ts): past it, or past the time,
// the diagram stops growing with a BudgetStop. Every operation recurses once
// per variable, so its depth is at most the header's bits, whatever the rows.

import { Budget } from "./budget.js";

export const FALSE = 0;
export const TRUE = 1;

/** The variable of a terminal: after every real variable. */
const TERMINAL = 0x7fffffff;
const ID = 2 ** 22;

/** Where a node starts its search in the unique table: its three numbers mixed. */
function slotOf(v: number, lo: number, hi: number): number {
  let h = Math.imul(v, 0x9e3779b1) ^ Math.imul(lo, 0x85ebca6b) ^ Math.imul(hi, 0xc2b2ae35);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  return h ^ (h >>> 13);
}

/**
 * Answers by pair of node ids (an operation's memo): open addressing over typed arrays, at most half full — a Map keyed
 * by a * 2^22 + b holds each key as a heap number, several times slower on a diagram of a million nodes.
 */
export class PairMemo {
  // Small at first: a table write walks a few dozen pairs, and makes two of these.
  #a = new Int32Array(1 << 6).fill(-1);
  #b = new Int32Array(1 << 6);
  #v = new Int32Array(1 << 6);
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Forgets every pair, keeping its room; false when that room is past a table write's (a build's memo). */
  reset(): boolean {
    if (this.#a.length > 1 << 15) return false;
    this.#a.fill(-1);
    this.#size = 0;
    return true;
  }

  /** The answer for (a, b), or −1. */
  get(a: number, b: number): number {
    const mask = this.#a.length - 1;
    for (let i = slotOf(a, b, 0) & mask; ; i = (i + 1) & mask) {
      const x = this.#a[i] ?? -1;
      if (x < 0) return -1;
      if (x === a && this.#b[i] === b) return this.#v[i] ?? -1;
    }
  }

  /** Remembers (a, b) → v (a pair not remembered yet). */
  set(a: number, b: number, v: number): void {
    if (++this.#size * 2 > this.#a.length) this.#grow();
    this.#put(a, b, v);
  }

  #put(a: number, b: number, v: number): void {
    const mask = this.#a.length - 1;
    let i = slotOf(a, b, 0) & mask;
    while ((this.#a[i] ?? -1) >= 0) i = (i + 1) & mask;
    this.#a[i] = a;
    this.#b[i] = b;
    this.#v[i] = v;
  }

  #grow(): void {
    const [a, b, v] = [this.#a, this.#b, this.#v];
    this.#a = new Int32Array(a.length * 2).fill(-1);
    this.#b = new Int32Array(a.length * 2);
    this.#v = new Int32Array(a.length * 2);
    for (let i = 0; i < a.length; i++) if ((a[i] ?? -1) >= 0) this.#put(a[i] ?? 0, b[i] ?? 0, v[i] ?? 0);
  }
}

export class Bdd {
  #var: Int32Array<ArrayBuffer> = new Int32Array(1 << 12);
  #lo: Int32Array<ArrayBuffer> = new Int32Array(1 << 12);
  #hi: Int32Array<ArrayBuffer> = new Int32Array(1 << 12);
  #n = 0;
  /**
   * The unique table: node ids by (variable, low, high), open addressing (−1: empty), at most half full; each slot two
   * numbers, the node and its hash, so that a probe past another node reads no node (a store of a million nodes is out
   * of the cache: each node read was a miss, most of a table write's time).
   */
  #slots: Int32Array<ArrayBuffer> = new Int32Array(2 << 13).fill(-1);
  #inner = 0;
  readonly #andCache = new Map<number, number>();
  readonly #orCache = new Map<number, number>();
  readonly #notCache = new Map<number, number>();
  /** The memos the last walks of pairs gave back, grown to a table write's size (growing one was a tenth of one). */
  readonly #spare: PairMemo[] = [];
  readonly #budget: Budget;
  /** Node ids must stay below ID (cache keys): the budget's bound, at most that. */
  readonly #maxNodes: number;

  constructor(budget = new Budget()) {
    this.#budget = budget;
    this.#maxNodes = Math.min(budget.maxNodes, ID);
    this.terminal(); // FALSE
    this.terminal(); // TRUE
  }

  get size(): number {
    return this.#n;
  }

  /** A new terminal (a leaf of a multi-terminal diagram). */
  terminal(): number {
    return this.#push(TERMINAL, -1, -1);
  }

  isTerminal(n: number): boolean {
    return this.#var[n] === TERMINAL;
  }

  /** The variable a node tests (a terminal's is after every variable). */
  variable(n: number): number {
    return this.#var[n] ?? TERMINAL;
  }

  low(n: number): number {
    return this.#lo[n] ?? FALSE;
  }

  high(n: number): number {
    return this.#hi[n] ?? FALSE;
  }

  /** The node testing `v`: `lo` when the bit is 0, `hi` when 1 (reduced: no node when they agree). */
  mk(v: number, lo: number, hi: number): number {
    if (lo === hi) return lo;
    const slots = this.#slots;
    const mask = (slots.length >> 1) - 1;
    const h = slotOf(v, lo, hi);
    let i = h & mask;
    for (let n = slots[2 * i] ?? -1; n >= 0; n = slots[2 * i] ?? -1) {
      if (slots[2 * i + 1] === h && this.#var[n] === v && this.#lo[n] === lo && this.#hi[n] === hi) return n;
      i = (i + 1) & mask;
    }
    const n = this.#push(v, lo, hi);
    slots[2 * i] = n;
    slots[2 * i + 1] = h;
    if (++this.#inner * 4 > slots.length) this.#rehash();
    return n;
  }

  /** The unique table twice as large, every inner node put in again (in the order of their ids: #dropFrom). */
  #rehash(): void {
    const slots = new Int32Array(this.#slots.length * 2).fill(-1);
    const mask = (slots.length >> 1) - 1;
    for (let n = 0; n < this.#n; n++) {
      const v = this.#var[n] ?? TERMINAL;
      if (v === TERMINAL) continue;
      const h = slotOf(v, this.#lo[n] ?? 0, this.#hi[n] ?? 0);
      let i = h & mask;
      while ((slots[2 * i] ?? -1) >= 0) i = (i + 1) & mask;
      slots[2 * i] = n;
      slots[2 * i + 1] = h;
    }
    this.#slots = slots;
  }

  #push(v: number, lo: number, hi: number): number {
    if (this.#n >= this.#maxNodes)
      throw this.#budget.reached(
        "nodes",
        `the header-class diagram grew past ${this.#maxNodes.toLocaleString("en-US")} nodes`,
      );
    this.#budget.tick();
    if (this.#n === this.#var.length) {
      const grow = (a: Int32Array): Int32Array<ArrayBuffer> => {
        const b = new Int32Array(Math.min(a.length * 2, this.#maxNodes));
        b.set(a);
        return b;
      };
      this.#var = grow(this.#var);
      this.#lo = grow(this.#lo);
      this.#hi = grow(this.#hi);
    }
    const n = this.#n++;
    this.#var[n] = v;
    this.#lo[n] = lo;
    this.#hi[n] = hi;
    return n;
  }

  /** Both cofactors of `n` with respect to `v` (which is at or above n's variable). */
  cofactors(n: number, v: number): [number, number] {
    return this.#var[n] === v ? [this.#lo[n] ?? FALSE, this.#hi[n] ?? FALSE] : [n, n];
  }

  // ── Boolean operations (on diagrams whose terminals are FALSE and TRUE) ──

  and(a: number, b: number): number {
    if (a === FALSE || b === FALSE) return FALSE;
    if (a === TRUE) return b;
    if (b === TRUE || a === b) return a;
    const key = a < b ? a * ID + b : b * ID + a;
    const found = this.#andCache.get(key);
    if (found !== undefined) return found;
    const v = Math.min(this.variable(a), this.variable(b));
    const [a0, a1] = this.cofactors(a, v);
    const [b0, b1] = this.cofactors(b, v);
    const r = this.mk(v, this.and(a0, b0), this.and(a1, b1));
    this.#remember(this.#andCache, key, r);
    return r;
  }

  or(a: number, b: number): number {
    if (a === TRUE || b === TRUE) return TRUE;
    if (a === FALSE) return b;
    if (b === FALSE || a === b) return a;
    const key = a < b ? a * ID + b : b * ID + a;
    const found = this.#orCache.get(key);
    if (found !== undefined) return found;
    const v = Math.min(this.variable(a), this.variable(b));
    const [a0, a1] = this.cofactors(a, v);
    const [b0, b1] = this.cofactors(b, v);
    const r = this.mk(v, this.or(a0, b0), this.or(a1, b1));
    this.#remember(this.#orCache, key, r);
    return r;
  }

  not(a: number): number {
    if (a === FALSE) return TRUE;
    if (a === TRUE) return FALSE;
    const found = this.#notCache.get(a);
    if (found !== undefined) return found;
    const r = this.mk(this.variable(a), this.not(this.low(a)), this.not(this.high(a)));
    this.#remember(this.#notCache, a, r);
    return r;
  }

  /** `a` without `b`. */
  minus(a: number, b: number): number {
    return this.and(a, this.not(b));
  }

  /** The multi-terminal diagram `root` with each terminal under the boolean diagram `q` replaced by `f(terminal)`. */
  mapUnder(root: number, q: number, f: (terminal: number) => number): number {
    return this.mapUnderLeaves(root, q, (leaf) => (leaf === TRUE ? f : undefined));
  }

  /**
   * The multi-terminal diagram `root` with each terminal under a leaf `l` of the multi-terminal diagram `q` replaced by
   * `f(l)(terminal)`, where `f(l)` gives a replacement (the terminals under other leaves stay).
   */
  mapUnderLeaves(root: number, q: number, f: (leaf: number) => ((terminal: number) => number) | undefined): number {
    const marked = new Map<number, Map<number, number>>();
    const mark = (n: number, leaf: number, g: (terminal: number) => number): number => {
      let memo = marked.get(leaf);
      if (memo === undefined) marked.set(leaf, (memo = new Map()));
      const found = memo.get(n);
      if (found !== undefined) return found;
      const r = this.isTerminal(n)
        ? g(n)
        : this.mk(this.variable(n), mark(this.low(n), leaf, g), mark(this.high(n), leaf, g));
      memo.set(n, r);
      return r;
    };
    const settled = (n: number, p: number): number | undefined => {
      if (!this.isTerminal(p)) return undefined;
      const g = f(p);
      return g === undefined ? n : mark(n, p, g);
    };
    return this.pairwise(root, q, settled, "cutting the header classes");
  }

  /**
   * Two diagrams walked together, variable by variable, each pair of nodes once: where `settled(a, b)` gives a node,
   * that is the pair's; elsewhere the pair splits on the lower of their variables. `what` names the work in the stop.
   */
  pairwise(x: number, y: number, settled: (a: number, b: number) => number | undefined, what: string): number {
    const memo = this.#memo();
    const rec = (a: number, b: number): number => {
      const done = settled(a, b);
      if (done !== undefined) return done;
      const found = memo.get(a, b);
      if (found >= 0) return found;
      const v = Math.min(this.variable(a), this.variable(b));
      const [a0, a1] = this.cofactors(a, v);
      const [b0, b1] = this.cofactors(b, v);
      const r = this.mk(v, rec(a0, b0), rec(a1, b1));
      // Work past a few times the diagram's budget is a stop, not a memo too large to hold.
      if (memo.size >= 3 * this.#maxNodes) throw this.#budget.reached("nodes", `${what} took too long`);
      memo.set(a, b, r);
      return r;
    };
    const r = rec(x, y);
    this.giveBack(memo);
    return r;
  }

  /** An empty memo: a spare one, or a new one (in a walk inside a walk). */
  #memo(): PairMemo {
    return this.#spare.pop() ?? new PairMemo();
  }

  /** An empty memo for a walk of pairs outside this class (./region-walk.ts); giveBack() when done. */
  borrowMemo(): PairMemo {
    return this.#memo();
  }

  giveBack(memo: PairMemo): void {
    if (memo.reset() && this.#spare.length < 2) this.#spare.push(memo);
  }

  /** Stops a walk whose memo `memo` holds a few times the diagram's budget of pairs (`what`: the work). */
  memoBound(memo: PairMemo, what: string): void {
    if (memo.size >= 3 * this.#maxNodes) throw this.#budget.reached("nodes", `${what} took too long`);
  }

  /** The terminals some path from `root` reaches (in a reduced diagram, every path is an assignment). */
  terminalsUnder(root: number): Set<number> {
    const out = new Set<number>();
    // A set, not an array of the store's size: a table write asks this of a small region of a large store.
    const seen = new Set<number>();
    const stack = [root];
    for (let n = stack.pop(); n !== undefined; n = stack.pop()) {
      if (seen.has(n)) continue;
      seen.add(n);
      if (this.isTerminal(n)) out.add(n);
      else stack.push(this.low(n), this.high(n));
    }
    return out;
  }

  /**
   * How many assignments of the variables 0..vars−1 reach each terminal under `root`: one pass over the diagram,
   * parents before children (a node's id is above its children's).
   */
  countsUnder(root: number, vars: number): Map<number, bigint> {
    const weight: (bigint | undefined)[] = [];
    weight[root] = 1n << BigInt(Math.min(this.variable(root), vars));
    const out = new Map<number, bigint>();
    const level = (n: number): number => Math.min(this.variable(n), vars);
    for (let n = root; n >= 0; n--) {
      const w = weight[n];
      if (w === undefined) continue;
      if (this.isTerminal(n)) {
        out.set(n, (out.get(n) ?? 0n) + w);
        continue;
      }
      const v = level(n);
      for (const c of [this.low(n), this.high(n)]) weight[c] = (weight[c] ?? 0n) + (w << BigInt(level(c) - v - 1));
    }
    return out;
  }

  /** Each terminal under `root` once, with the variables set on the first path to it (low branches first). */
  firstPaths(root: number, visit: (terminal: number, set: readonly number[]) => void): void {
    const seen = new Set<number>();
    const set: number[] = [];
    const rec = (n: number): void => {
      if (seen.has(n)) return;
      seen.add(n);
      if (this.isTerminal(n)) return visit(n, set);
      rec(this.low(n));
      set.push(this.variable(n));
      rec(this.high(n));
      set.pop();
    };
    rec(root);
  }

  /**
   * `x` where the boolean diagram `p` holds and `y` elsewhere (`x`, `y` multi-terminal diagrams).
   */
  ite(p: number, x: number, y: number): number {
    const memo = new Map<number, Map<number, number>>();
    const rec = (q: number, a: number, b: number): number => {
      if (q === TRUE || a === b) return a;
      if (q === FALSE) return b;
      const inner = memo.get(q * ID + a);
      const found = inner?.get(b);
      if (found !== undefined) return found;
      const v = Math.min(this.variable(q), this.variable(a), this.variable(b));
      const [q0, q1] = this.cofactors(q, v);
      const [a0, a1] = this.cofactors(a, v);
      const [b0, b1] = this.cofactors(b, v);
      const r = this.mk(v, rec(q0, a0, b0), rec(q1, a1, b1));
      if (inner === undefined) memo.set(q * ID + a, new Map([[b, r]]));
      else inner.set(b, r);
      return r;
    };
    return rec(p, x, y);
  }

  /** A cache is only a cache: one that reaches the diagram's size starts again (a Map has a largest size). */
  #remember(cache: Map<number, number>, key: number, r: number): void {
    if (cache.size >= this.#maxNodes) cache.clear();
    cache.set(key, r);
  }

  /**
   * `f`'s diagram, or none when it passes its share of the budget (Budget.trial): then the nodes made since it began
   * are dropped, as if it had not run, and the store has its room back.
   */
  attempt<T>(f: () => T): T | undefined {
    const mark = this.#n;
    const r = this.#budget.trial(f);
    if (r === undefined) this.#dropFrom(mark);
    return r;
  }

  /**
   * Drops the nodes from `mark` on. The unique table needs no rehash: a node is found by probing past nodes put in
   * before it (lower ids, kept), and rehashing puts them in again in the order of their ids.
   */
  #dropFrom(mark: number): void {
    for (let i = 0; i < this.#slots.length; i += 2) {
      if ((this.#slots[i] ?? -1) < mark) continue;
      this.#slots[i] = -1;
      this.#inner--;
    }
    this.#n = mark;
    this.clearCaches();
  }

  /** Forgets the boolean caches (they only grow): call between large independent jobs. */
  clearCaches(): void {
    this.#andCache.clear();
    this.#orCache.clear();
    this.#notCache.clear();
  }
}

/** Diagram `n` of store `from` made in store `to`, each terminal (the booleans too) made `terminal(t)`. */
export function copy(
  from: Bdd,
  n: number,
  to: Bdd,
  terminal: (t: number) => number,
  memo = new Map<number, number>(),
): number {
  const rec = (x: number): number => {
    if (from.isTerminal(x)) return terminal(x);
    const found = memo.get(x);
    if (found !== undefined) return found;
    const r = to.mk(from.variable(x), rec(from.low(x)), rec(from.high(x)));
    memo.set(x, r);
    return r;
  };
  return rec(n);
}
