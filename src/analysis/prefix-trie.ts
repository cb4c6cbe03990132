// An LPM table's rows as a binary trie over its prefix field's bits (a FIB):
// a trie node is a prefix, and holds the active rows written with exactly that
// prefix, by priority. What the table does with a header is then what the rows
// of the longest prefix on its path do, the shorter ones taking what they leave
// (docs/spec.md, "Order and meaning"), so the table's behaviour diagram
// (./behaviours.ts) is built bottom-up from the trie, one diagram node per
// trie node at most, instead of composing every row's diagram; a lookup
// follows the header's bits down the trie (the rows on its path, longest
// first) instead of reading every row that meets its class; and a table write
// redoes the headers under the row's prefix only, from the rows on the path to
// it and under it. Only a table whose rows match nothing but that field
// (prefix or exact) and the hop limit is held so; the others are composed row
// by row. Recursion follows the trie, at most the field's bits deep.

import type { Pattern, RowSpec, TableSpec } from "../description/types.js";
import { lpmField } from "../model/rows.js";
import type { Bdd } from "./bdd.js";
import type { IndexedRow, RowLeaves } from "./behaviours.js";
import type { SpaceField } from "./pattern-nodes.js";

const NO_ROWS: readonly IndexedRow[] = [];

export class PrefixTrie {
  readonly field: SpaceField;
  #zero: Int32Array<ArrayBuffer> = new Int32Array(1 << 10).fill(-1);
  #one: Int32Array<ArrayBuffer> = new Int32Array(1 << 10).fill(-1);
  #size = 1;
  /** Per trie node, its active rows, by priority. */
  readonly #rows: (IndexedRow[] | undefined)[] = [];
  /** Per row index, its trie node and prefix length. */
  readonly #at: number[] = [];
  readonly #len: number[] = [];

  private constructor(field: SpaceField, rows: readonly IndexedRow[], active: readonly boolean[]) {
    this.field = field;
    for (const r of rows) {
      this.place(r);
      if (active[r.index] === true) this.#add(this.#at[r.index] ?? 0, r);
    }
  }

  /** Whether a row matching `match` can be held: it matches the trie's field only, by prefix or exactly (the hop
   * limit's field `hopField` aside). */
  holds(match: RowSpec["match"], hopField: string | undefined): boolean {
    return prefixOnly(match, this.field, hopField);
  }

  /** Finds row `r`'s trie node (made if need be), not yet active: a row the table did not have (a controller's). */
  place(r: IndexedRow): void {
    const p = r.row.match.get(this.field.def.name);
    const [value, len] =
      p === undefined ? [0n, 0] : p.kind === "prefix" ? [p.value, p.len] : [valueOf(p), this.field.bits];
    let t = 0;
    const bits = this.#bitsOf(value);
    for (let k = 0; k < len; k++) t = this.#child(t, bits(k));
    this.#at[r.index] = t;
    this.#len[r.index] = len;
  }

  /** The field an LPM table's trie is over; undefined when a row matches another field (the hop limit's aside), or
   * its prefix field otherwise than by prefix or exactly: such a table is not held as a trie. */
  static fieldOf(
    spec: TableSpec,
    fields: ReadonlyMap<string, SpaceField>,
    hopField: string | undefined,
  ): SpaceField | undefined {
    if (spec.kind !== "lpm") return undefined;
    const name = lpmField(spec);
    const field = name === undefined ? undefined : fields.get(name);
    if (field === undefined) return undefined;
    return spec.rows.every((r) => prefixOnly(r.match, field, hopField)) ? field : undefined;
  }

  /** The trie of a table's rows over `field` (fieldOf), the rows `active` says in it. */
  static of(field: SpaceField, rows: readonly IndexedRow[], active: readonly boolean[]): PrefixTrie {
    return new PrefixTrie(field, rows, active);
  }

  /** Bit k (most significant first) of a value of the field. */
  #bitsOf(value: bigint): (k: number) => number {
    const bits = this.field.bits;
    if (bits <= 32) {
      const n = Number(value);
      return (k) => (n >>> (bits - 1 - k)) & 1;
    }
    return (k) => Number((value >> BigInt(bits - 1 - k)) & 1n);
  }

  #child(t: number, bit: number): number {
    const side = bit === 1 ? this.#one : this.#zero;
    const c = side[t] ?? -1;
    if (c >= 0) return c;
    if (this.#size === this.#zero.length) {
      const grow = (a: Int32Array): Int32Array<ArrayBuffer> => {
        const b = new Int32Array(a.length * 2).fill(-1);
        b.set(a);
        return b;
      };
      this.#zero = grow(this.#zero);
      this.#one = grow(this.#one);
    }
    const n = this.#size++;
    (bit === 1 ? this.#one : this.#zero)[t] = n;
    return n;
  }

  #add(t: number, r: IndexedRow): void {
    const list = this.#rows[t];
    if (list === undefined) {
      this.#rows[t] = [r];
      return;
    }
    let k = list.length;
    while (k > 0 && (list[k - 1]?.prio ?? 0) > r.prio) k--;
    list.splice(k, 0, r);
  }

  /** Puts row `r` back or takes it out. */
  setActive(r: IndexedRow, on: boolean): void {
    const t = this.#at[r.index] ?? 0;
    if (on) return this.#add(t, r);
    const list = this.#rows[t] ?? [];
    const k = list.indexOf(r);
    if (k >= 0) list.splice(k, 1);
    if (list.length === 0) this.#rows[t] = undefined;
  }

  /** The active rows whose prefix holds for `value`, longest first, each prefix's by priority. */
  along(value: bigint): IndexedRow[] {
    const bits = this.#bitsOf(value);
    const found: (readonly IndexedRow[])[] = [];
    let t = 0;
    for (let k = 0; t >= 0; k++) {
      const list = this.#rows[t];
      if (list !== undefined) found.push(list);
      if (k === this.field.bits) break;
      t = (bits(k) === 1 ? this.#one : this.#zero)[t] ?? -1;
    }
    // Longest first, by hand: Array.prototype.flat costs microseconds a call.
    const out: IndexedRow[] = [];
    for (let k = found.length - 1; k >= 0; k--) for (const r of found[k] ?? NO_ROWS) out.push(r);
    return out;
  }

  /** The table's behaviour diagram: each header's terminal from the rows of the longest prefix on its path on. */
  diagram(b: Bdd, leaves: RowLeaves): number {
    return this.#below(b, leaves, 0, 0, leaves.miss);
  }

  /**
   * The diagram of the headers under row `r`'s prefix, from the rows there and on the path to it (the rows active
   * now), `none` elsewhere: what a write of `r` may change.
   */
  region(b: Bdd, leaves: RowLeaves, r: IndexedRow, none: number): number {
    const p = r.row.match.get(this.field.def.name);
    const bits = this.#bitsOf(p === undefined ? 0n : p.kind === "prefix" ? p.value : valueOf(p));
    const len = this.#len[r.index] ?? 0;
    // What the shorter prefixes on the way leave.
    const path: number[] = [];
    let inherited = leaves.miss;
    let t = 0;
    for (let k = 0; k < len; k++) {
      path.push(t);
      t = (bits(k) === 1 ? this.#one : this.#zero)[t] ?? 0;
    }
    for (const s of path) {
      const list = this.#rows[s];
      if (list !== undefined) inherited = leaves.then(leaves.own(list), inherited);
    }
    let node = this.#below(b, leaves, t, len, inherited);
    for (let k = len - 1; k >= 0; k--) {
      const v = this.field.first + k;
      node = bits(k) === 1 ? b.mk(v, none, node) : b.mk(v, node, none);
    }
    return node;
  }

  /** The diagram under trie node `t` at depth `depth`, with `inherited` what the shorter prefixes do there. */
  #below(b: Bdd, leaves: RowLeaves, t: number, depth: number, inherited: number): number {
    const list = this.#rows[t] ?? NO_ROWS;
    const here = list.length === 0 ? inherited : leaves.then(leaves.own(list), inherited);
    const z = this.#zero[t] ?? -1;
    const o = this.#one[t] ?? -1;
    if (z < 0 && o < 0) return here;
    const lo = z < 0 ? here : this.#below(b, leaves, z, depth + 1, here);
    const hi = o < 0 ? here : this.#below(b, leaves, o, depth + 1, here);
    return b.mk(this.field.first + depth, lo, hi);
  }
}

/** Whether `match` matches `field` only, by prefix or exactly, the hop limit's field aside. */
function prefixOnly(match: RowSpec["match"], field: SpaceField, hopField: string | undefined): boolean {
  for (const [f, p] of match)
    if (f !== hopField && (f !== field.def.name || (p.kind !== "prefix" && p.kind !== "exact"))) return false;
  return true;
}

function valueOf(p: Pattern): bigint {
  return p.kind === "exact" ? p.value : 0n;
}
