// A member's header tables (acquire, forward, receive) as the analysis reads
// them: for each header class (./header-space.ts), the rows whose patterns
// hold for it, in the order the description's rule picks the winner (docs/
// spec.md, "Order and meaning": the first row written, or in a `kind: lpm`
// table the longest prefix) — the same rule the reference interpreter applies
// to one packet (src/model/rows.ts). A row that holds for every header is kept
// once, not under every class. Rows can be taken out and put back (a table
// write), and the index follows the header space when its classes split.

import type { RowSpec, TableSpec } from "../description/types.js";
import { headerDesign } from "../model/headers.js";
import { type Arrival, lpmField, prefixLen } from "../model/rows.js";
import type { HeaderSpace } from "./header-space.js";

export interface IndexedRow {
  /** The row's index in the description's table. */
  readonly index: number;
  readonly row: RowSpec;
  /** The predicate of its patterns; −1 when it has none (it holds for every class). */
  readonly pred: number;
  /** The hop-limit values its pattern allows (./hops.ts). */
  readonly hops: bigint;
  /** Lower wins. */
  readonly prio: number;
}

/** A row that wins for part of a class: the hop-limit values it wins for. */
export interface Hit {
  readonly row: IndexedRow;
  readonly hops: bigint;
}

/** Which classes a change to a table may change the fate of: some, or (a row without patterns) all. */
export type Affected = readonly number[] | "all";

/** `r` into a list by priority: at the end when it comes last, as rows indexed in order mostly do. */
function inPlace(list: IndexedRow[], r: IndexedRow): void {
  let k = list.length;
  while (k > 0 && (list[k - 1]?.prio ?? 0) > r.prio) k--;
  list.splice(k, 0, r);
}

export class TableIndex {
  readonly space: HeaderSpace;
  spec: TableSpec;
  #rows: IndexedRow[] = [];
  #active: boolean[] = [];
  /** Active rows without patterns and without an in-link, by priority. */
  #wild: IndexedRow[] = [];
  /** Active rows without patterns that name an in-link, by it, by priority (a lookup reads only its in-link's). */
  #wildIn = new Map<Arrival, IndexedRow[]>();
  /** Per class, the active rows with patterns that hold for it, by priority. */
  #specific = new Map<number, IndexedRow[]>();
  /** distinctArrivals' answers, by the list of in-links asked about. */
  #distinct = new WeakMap<readonly number[], readonly number[]>();

  constructor(space: HeaderSpace, spec: TableSpec, active?: readonly boolean[]) {
    this.space = space;
    this.spec = spec;
    this.#rows = indexRows(space, spec);
    this.#active = spec.rows.map((_, i) => active?.[i] ?? true);
  }

  /** Fills the per-class lists (the header space must be built). */
  index(): void {
    this.#wild = [];
    this.#wildIn = new Map();
    this.#specific = new Map();
    this.#rows.forEach((r, i) => {
      if (this.#active[i] === true) this.#insert(r);
    });
  }

  get rows(): readonly IndexedRow[] {
    return this.#rows;
  }

  /**
   * The in-links of `ports` a lookup tells apart: those some row names (`in`), and, when some row names none, the first
   * of the others, which stands for them all (what this table does with a class from one it does from each). A table
   * whose rows all name their in-link finds nothing for the others.
   */
  distinctArrivals(ports: readonly number[]): readonly number[] {
    const known = this.#distinct.get(ports);
    if (known !== undefined) return known;
    const named = new Set(this.#rows.map((r) => r.row.in));
    const other = named.has(undefined) ? ports.find((p) => !named.has(p)) : undefined;
    const arrivals = ports.filter((p) => named.has(p) || p === other);
    this.#distinct.set(ports, arrivals);
    return arrivals;
  }

  isActive(index: number): boolean {
    return this.#active[index] === true;
  }

  /**
   * The rows that win for class `atom` arriving on `arrival`, with the hop-limit values each wins
   * for, in priority order, appended to `out`. Returns the values no row takes (a miss).
   */
  lookup(arrival: Arrival, atom: number, hops: bigint, out: Hit[]): bigint {
    const spec = this.#specific.get(atom);
    const wild = this.#wild;
    const wildIn = this.#wildIn.get(arrival);
    let i = 0;
    let j = 0;
    let k = 0;
    let rest = hops;
    while (rest !== 0n) {
      // The three lists merged by priority: the class's rows, the rows for any in-link, the rows for this one.
      const s = spec?.[i];
      const w = wild[j];
      const x = wildIn?.[k];
      let r: IndexedRow;
      if (s !== undefined && (w === undefined || s.prio < w.prio) && (x === undefined || s.prio < x.prio)) {
        r = s;
        i++;
      } else if (w !== undefined && (x === undefined || w.prio < x.prio)) {
        r = w;
        j++;
      } else if (x !== undefined) {
        r = x;
        k++;
      } else {
        break;
      }
      if (r.row.in !== undefined && r.row.in !== arrival) continue;
      const take = rest & r.hops;
      if (take === 0n) continue;
      out.push({ row: r, hops: take });
      rest ^= take;
    }
    return rest;
  }

  /** Takes row `index` out of the table or puts it back; the classes whose fate may change. */
  setActive(index: number, on: boolean): Affected {
    const r = this.#rows[index];
    if (r === undefined || this.#active[index] === on) return [];
    this.#active[index] = on;
    if (on) this.#insert(r);
    else this.#remove(r);
    return r.pred < 0 ? "all" : this.space.atomsOf(r.pred).filter((a) => !this.space.isDead(a));
  }

  /** The table as a new description writes it (rows added, removed, reordered); the classes whose fate may change. */
  replace(spec: TableSpec, active?: readonly boolean[]): Affected {
    const before = this.#rows.filter((_, i) => this.#active[i] === true);
    this.spec = spec;
    this.#rows = indexRows(this.space, spec);
    this.#distinct = new WeakMap();
    this.#active = spec.rows.map((_, i) => active?.[i] ?? true);
    const after = this.#rows.filter((_, i) => this.#active[i] === true);
    this.index();
    // Rows that stayed (same in-link, patterns, action, in the same order) change no class; the others may.
    const key = (r: IndexedRow): string => `${String(r.row.in)}|${r.pred}|${r.hops}|${actionKey(r.row.action)}`;
    const kept = lcs(before.map(key), after.map(key));
    const changed = [...before.filter((_, i) => !kept.a.has(i)), ...after.filter((_, i) => !kept.b.has(i))];
    if (changed.some((r) => r.pred < 0)) return "all";
    const atoms = new Set<number>();
    for (const r of changed) for (const a of this.space.atomsOf(r.pred)) if (!this.space.isDead(a)) atoms.add(a);
    return [...atoms].sort((x, y) => x - y);
  }

  /** The header space cut class `from`: `born` gets its rows (the row that cut it adds itself). */
  split(from: number, born: number): void {
    const list = this.#specific.get(from);
    if (list !== undefined) this.#specific.set(born, [...list]);
  }

  died(atom: number): void {
    this.#specific.delete(atom);
  }

  #insert(r: IndexedRow): void {
    if (r.pred < 0) {
      const list = r.row.in === undefined ? this.#wild : (this.#wildIn.get(r.row.in) ?? []);
      inPlace(list, r);
      if (r.row.in !== undefined) this.#wildIn.set(r.row.in, list);
      return;
    }
    for (const a of this.space.atomsOf(r.pred)) {
      if (this.space.isDead(a)) continue;
      const list = this.#specific.get(a);
      if (list === undefined) this.#specific.set(a, [r]);
      else inPlace(list, r);
    }
  }

  #remove(r: IndexedRow): void {
    if (r.pred < 0) {
      if (r.row.in === undefined) this.#wild = this.#wild.filter((x) => x !== r);
      else
        this.#wildIn.set(
          r.row.in,
          (this.#wildIn.get(r.row.in) ?? []).filter((x) => x !== r),
        );
      return;
    }
    for (const a of this.space.atomsOf(r.pred)) {
      const list = this.#specific.get(a);
      if (list === undefined) continue;
      const k = list.indexOf(r);
      if (k >= 0) list.splice(k, 1);
      if (list.length === 0) this.#specific.delete(a);
    }
  }
}

/** The rows of a table with their predicates and priorities. */
function indexRows(space: HeaderSpace, spec: TableSpec): IndexedRow[] {
  const lpm = spec.kind === "lpm" ? lpmField(spec) : undefined;
  const design = lpm === undefined ? undefined : headerDesign(space.design.name);
  return spec.rows.map((row, index) => {
    // First written wins; in an LPM table the longest prefix, then the first written (src/model/rows.ts winner).
    const len = lpm === undefined || design === undefined ? 0 : prefixLen(design, row, lpm);
    return {
      index,
      row,
      pred: space.predicate(row.match),
      hops: space.hops(row.match),
      prio: (200 - len) * 2 ** 21 + index,
    };
  });
}

/** What a header table's row does, without where it is written. */
function actionKey(a: RowSpec["action"]): string {
  switch (a.kind) {
    case "out":
      return `out ${a.outLinks.join(",")}`;
    case "link":
      return `link ${a.network}.${a.ident}`;
    case "session":
      return `session ${a.network}.${a.session}`;
    default:
      return a.kind;
  }
}

/** Which elements of two lists a longest common subsequence keeps. */
function lcs(a: readonly string[], b: readonly string[]): { a: Set<number>; b: Set<number> } {
  // Tables are short to diff (a reload): the quadratic table is fine, but skip the common ends first.
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const keepA = new Set<number>();
  const keepB = new Set<number>();
  for (let i = 0; i < start; i++) {
    keepA.add(i);
    keepB.add(i);
  }
  for (let i = 0; i < a.length - endA; i++) {
    keepA.add(endA + i);
    keepB.add(endB + i);
  }
  const n = endA - start;
  const m = endB - start;
  if (n > 0 && m > 0 && n * m <= 4_000_000) {
    const dp = Array.from({ length: n + 1 }, () => new Int32Array(m + 1));
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        const row = dp[i] as Int32Array;
        row[j] =
          a[start + i] === b[start + j]
            ? (dp[i + 1]?.[j + 1] ?? 0) + 1
            : Math.max(dp[i + 1]?.[j] ?? 0, row[j + 1] ?? 0);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (a[start + i] === b[start + j]) {
        keepA.add(start + i++);
        keepB.add(start + j++);
      } else if ((dp[i + 1]?.[j] ?? 0) >= (dp[i]?.[j + 1] ?? 0)) i++;
      else j++;
    }
  }
  return { a: keepA, b: keepB };
}
