// Which rows of a header table hold for one header, read for many rows at once
// (a bit vector per header bit, as packet classifiers do: Lakshman and
// Stiliadis, SIGCOMM'98): a row whose patterns fix some bits and leave the
// others free (exact, prefix and ternary patterns: a cube) is a bit in a word
// per row position, cleared in the vector of each header bit's value it does
// not allow; the rows that hold for a header are then the AND of one vector per
// bit the rows test, a word at a time. A table lookup asks this once a class,
// for the class's witness header (./tables.ts): a 2,000-row ACL is 63 words a
// bit, not 2,000 diagrams evaluated. Rows that are no cube (a range) are
// evaluated on their diagram, among the rows the vectors leave.

import type { Bdd } from "./bdd.js";
import { FALSE, TRUE } from "./bdd.js";
import type { IndexedRow } from "./behaviours.js";
import { headerBits, type SpaceField } from "./pattern-nodes.js";

export class RowMatcher {
  /** The indices of the rows with patterns, by priority: row #index[k] is bit k. */
  readonly #index: readonly number[];
  readonly #words: number;
  /** Per variable, the rows that allow the bit 0 there (at v * words), and those that allow 1. */
  readonly #zero: Uint32Array;
  readonly #one: Uint32Array;
  /** The variables some row fixes: the others every row allows. */
  readonly #tested: readonly number[];
  /** Rows in force, a bit each. */
  readonly #active: Uint32Array;
  /** Per row index, its bit. */
  readonly #slot = new Map<number, number>();
  /** Per bit, the row's diagram, for those that are no cube. */
  readonly #nodes = new Map<number, number>();
  readonly #bdd: Bdd;
  readonly #fields: readonly SpaceField[];
  readonly #vars: number;

  /** `rows`: the table's rows with patterns, by priority, those `active` says in force. */
  constructor(bdd: Bdd, fields: readonly SpaceField[], rows: readonly IndexedRow[], active: readonly boolean[]) {
    this.#bdd = bdd;
    this.#fields = fields;
    this.#index = rows.map((r) => r.index);
    this.#vars = fields.reduce((n, f) => Math.max(n, f.first + f.bits), 0);
    const words = (this.#words = (rows.length + 31) >>> 5);
    this.#zero = new Uint32Array(this.#vars * words).fill(0xffffffff);
    this.#one = new Uint32Array(this.#vars * words).fill(0xffffffff);
    this.#active = new Uint32Array(words);
    const tested = new Set<number>();
    rows.forEach((r, k) => {
      this.#slot.set(r.index, k);
      const bit = 1 << (k & 31);
      if (active[r.index] === true) this.#active[k >>> 5] = (this.#active[k >>> 5] ?? 0) | bit;
      const fixed = this.#cube(r.node);
      if (fixed === undefined) {
        this.#nodes.set(k, r.node);
        return;
      }
      for (const [v, value] of fixed) {
        tested.add(v);
        const vec = value === 1 ? this.#zero : this.#one;
        const at = v * words + (k >>> 5);
        vec[at] = (vec[at] ?? 0) & ~bit;
      }
    });
    this.#tested = [...tested].sort((x, y) => x - y);
  }

  /** The bits diagram `node` fixes (variable, value) when it is a cube (one path to TRUE, each node one way on). */
  #cube(node: number): [number, number][] | undefined {
    const b = this.#bdd;
    const fixed: [number, number][] = [];
    let n = node;
    while (n !== TRUE) {
      if (b.isTerminal(n)) return undefined;
      const lo = b.low(n);
      const hi = b.high(n);
      if (lo !== FALSE && hi !== FALSE) return undefined;
      fixed.push([b.variable(n), lo === FALSE ? 1 : 0]);
      n = lo === FALSE ? hi : lo;
    }
    return fixed;
  }

  /** Puts row `index` in force or out. */
  setActive(index: number, on: boolean): void {
    const k = this.#slot.get(index);
    if (k === undefined) return;
    if (on) this.#active[k >>> 5] = (this.#active[k >>> 5] ?? 0) | (1 << (k & 31));
    else this.#active[k >>> 5] = (this.#active[k >>> 5] ?? 0) & ~(1 << (k & 31));
  }

  /** The indices of the rows in force whose patterns hold for the header `values` (absent fields: 0), by priority. */
  holding(values: ReadonlyMap<string, bigint>): number[] {
    const bits = headerBits(this.#fields, this.#vars, values);
    const words = this.#words;
    const acc = this.#active.slice();
    // The words some row is still in: after the destination's first bits, a few (a row's vector ANDed only there).
    const live = new Int32Array(words);
    let n = 0;
    for (let w = 0; w < words; w++) if (acc[w] !== 0) live[n++] = w;
    for (let i = 0; i < this.#tested.length && n > 0; i++) {
      const v = this.#tested[i] ?? 0;
      const vec = bits[v] === 1 ? this.#one : this.#zero;
      const at = v * words;
      let kept = 0;
      for (let j = 0; j < n; j++) {
        const w = live[j] ?? 0;
        const x = (acc[w] ?? 0) & (vec[at + w] ?? 0);
        acc[w] = x;
        if (x !== 0) live[kept++] = w;
      }
      n = kept;
    }
    const out: number[] = [];
    for (let j = 0; j < n; j++) {
      const w = live[j] ?? 0;
      let x = acc[w] ?? 0;
      while (x !== 0) {
        const low = x & -x;
        const k = (w << 5) + 31 - Math.clz32(low);
        x ^= low;
        const node = this.#nodes.get(k);
        if (node !== undefined && this.#evaluate(node, bits) !== TRUE) continue;
        out.push(this.#index[k] ?? -1);
      }
    }
    return out;
  }

  #evaluate(node: number, bits: Uint8Array): number {
    const b = this.#bdd;
    let n = node;
    while (!b.isTerminal(n)) n = bits[b.variable(n)] === 1 ? b.high(n) : b.low(n);
    return n;
  }
}

/** Two lists of rows, each by priority, as one. */
export function byPriority(a: readonly IndexedRow[], b: readonly IndexedRow[]): IndexedRow[] {
  if (b.length === 0) return [...a];
  const out: IndexedRow[] = [];
  let j = 0;
  for (const x of a) {
    for (let y = b[j]; y !== undefined && y.prio < x.prio; y = b[++j]) out.push(y);
    out.push(x);
  }
  for (; j < b.length; j++) out.push(b[j] as IndexedRow);
  return out;
}
