// A header table's rows as the analysis reads them (./tables.ts): each with its
// patterns' diagram (made at once, or for a large prefix trie when first asked
// for), its hop-limit values and its priority (first written wins; in an LPM
// table the longest prefix first); and which rows of two versions of a table
// are the same (a reload keeps what it can); a row put in its place by priority;
// and whether a prefix trie's rows already cut the classes (a fabric's twins);
// whether a row wins for some header after the rows before it.

import type { Action, RowSpec } from "../description/types.js";
import { headerDesign } from "../model/headers.js";
import { type Arrival, prefixLen } from "../model/rows.js";
import { FALSE } from "./bdd.js";
import { actionKey, type IndexedRow } from "./behaviours.js";
import type { FateOwner } from "./fate-owner.js";
import type { HeaderSpace } from "./header-space.js";
import { patternKey } from "./pattern-nodes.js";

/** A row as the analysis reads it, its patterns' diagram made at once or when first asked for. */
export class Row implements IndexedRow {
  readonly #space: HeaderSpace;
  #node: number;
  constructor(
    space: HeaderSpace,
    readonly index: number,
    readonly row: RowSpec,
    readonly pred: number,
    readonly hops: bigint,
    readonly prio: number,
    lazy = false,
  ) {
    this.#space = space;
    this.#node = lazy ? -1 : space.pattern(row.match);
  }

  get node(): number {
    if (this.#node < 0) this.#node = this.#space.pattern(this.row.match);
    return this.#node;
  }
}

/**
 * Whether row `r` wins for some header arriving on one of `arrivals` after the rows in force `before` it (by priority):
 * its patterns hold for a header and a hop value that none of them takes from there (TableIndex.wins).
 */
export function winsAfter(
  space: HeaderSpace,
  before: readonly IndexedRow[],
  r: IndexedRow,
  arrivals: readonly Arrival[],
): boolean {
  const b = space.bdd;
  return arrivals.some((arr) => {
    // Headers left to r, by the hop values left to it there.
    let left = new Map<bigint, number>([[r.hops, b.and(r.node, space.domain)]]);
    for (const x of before) {
      if (x.row.in !== undefined && x.row.in !== arr) continue;
      const next = new Map<bigint, number>();
      const add = (h: bigint, n: number): void => {
        if (h !== 0n && n !== FALSE) next.set(h, b.or(next.get(h) ?? FALSE, n));
      };
      for (const [h, n] of left) {
        add(h, b.minus(n, x.node));
        add(h & ~x.hops, b.and(n, x.node));
      }
      left = next;
      if (left.size === 0) return false;
    }
    return left.size > 0;
  });
}

/** Row `r` with the action `action` (a modify): its patterns' diagram, hop values and priority are its. */
export function withAction(r: IndexedRow, action: Action): IndexedRow {
  const row: RowSpec = { ...r.row, action };
  return {
    index: r.index,
    row,
    pred: r.pred,
    hops: r.hops,
    prio: r.prio,
    get node() {
      return r.node;
    },
  };
}

/** Row `index`, in the order of the description's rows (`order`: where it stands among them, by default its index);
 * `byRows`, its patterns a predicate; `lazy`, its patterns' diagram made when first asked for. */
export function indexRow(
  space: HeaderSpace,
  row: RowSpec,
  index: number,
  lpm: string | undefined,
  byRows: boolean,
  at: { order?: number; lazy?: boolean } = {},
): IndexedRow {
  // First written wins; in an LPM table the longest prefix, then the first written (src/model/rows.ts winner).
  const design = lpm === undefined ? undefined : headerDesign(space.design.name);
  const len = lpm === undefined || design === undefined ? 0 : prefixLen(design, row, lpm);
  const pred = byRows ? space.predicate(row.match) : -1;
  const prio = (200 - len) * 2 ** 21 + (at.order ?? index);
  return new Row(space, index, row, pred, space.hops(row.match), prio, at.lazy === true);
}

/** Which elements of two lists a longest common subsequence keeps. */
export function lcs(a: readonly string[], b: readonly string[]): { a: Set<number>; b: Set<number> } {
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

/** `r` into a list by priority: at the end when it comes last, as rows indexed in order mostly do. */
export function inPlace(list: IndexedRow[], r: IndexedRow): void {
  let k = list.length;
  while (k > 0 && (list[k - 1]?.prio ?? 0) > r.prio) k--;
  list.splice(k, 0, r);
}

/** Per space, the prefix tries whose behaviours cut its classes before it was built, by their rows: a table with the
 * same rows (every spine of a fabric) cuts nothing more, and its cut would make the class diagram again. */
const cutTries = new WeakMap<HeaderSpace, Map<string, FateOwner>>();

/** Whether no table of `space` with the same rows, in force (`active`) or not, was cut by its trie before; the first
 * one asking is noted as cut, and made `shared` when another asks (its fates' predicates stand for both). */
export function firstOfItsRows(
  space: HeaderSpace,
  rows: readonly IndexedRow[],
  active: readonly boolean[],
  owner: FateOwner,
): boolean {
  const key = rows
    .map((r, i) => {
      const match = [...r.row.match].map(([f, p]) => `${f}=${patternKey(p)}`).join(",");
      return `${String(active[i])} ${r.prio} ${String(r.row.in)} ${match} ${actionKey(r.row.action)}`;
    })
    .join("\n");
  let keys = cutTries.get(space);
  if (keys === undefined) cutTries.set(space, (keys = new Map()));
  const first = keys.get(key);
  if (first === undefined) {
    keys.set(key, owner);
    return true;
  }
  // The other's predicates stand for this table's fates too: its writes may no longer take them away.
  first.shared = true;
  return false;
}
