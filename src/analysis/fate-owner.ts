// A table's behaviours as they cut the header classes (./header-space.ts,
// cutBy): a predicate per fate (./behaviours.ts), the same for every write of
// the table, so that a write moves the headers it changes from one fate's
// predicate to another's, as APKeep moves a rule's headers between ports'
// predicates (Zhang et al., NSDI'20); a class is then the fates its headers
// meet in each table, and the headers a write moves join the class of their
// new fates when one has them (a route withdrawn and put back, a next hop
// changed: the classes stay those of an analysis afresh).
//
// What a node of the class diagram became when its headers were given one
// fate is kept (Refates): nodes and leaves never change while the space lives,
// so the next write that gives that node's headers that fate finds the result
// without walking the node — under a 2,000-row ACL, the ~510 nodes the ACL
// makes below a /24 (./region-walk.ts, RegionMemo).

import type { Bdd } from "./bdd.js";
import type { RegionMemo } from "./region-walk.js";

let owners = 0;

export interface FateOwner {
  /** Tells owners apart in Refates' keys. */
  readonly key: number;
  /** The fate no predicate marks (its headers have none of the table's predicates), if any. */
  omitted: number | undefined;
  /**
   * Another table relies on this one's predicates (a twin of the same rows: ./table-rows.ts, firstOfItsRows): its
   * writes add predicates and take none away, the classes only split, as they did before fates were kept.
   */
  shared: boolean;
  /** Per fate, its predicate. */
  readonly preds: Map<number, number>;
}

/** A new table's FateOwner. */
export const fateOwner = (): FateOwner => ({ key: owners++, omitted: undefined, shared: false, preds: new Map() });

/** A fate of `owner` as Refates keys it: its predicate `id`, or (−1: the omitted fate) the owner. */
export const fateKey = (owner: FateOwner, id: number): number => (id >= 0 ? id : -1 - owner.key);

/** What class-diagram nodes became under a fate, and the headers below each node per leaf (kept while the space is). */
export class Refates {
  readonly #b: Bdd;
  readonly #vars: number;
  readonly #made = new Map<number, Map<number, number>>();
  readonly #leaves = new Map<number, ReadonlyMap<number, bigint>>();

  constructor(b: Bdd, vars: number) {
    this.#b = b;
    this.#vars = vars;
  }

  /** What node `n` became under fate `fate` (fateKey), if a write made it. */
  made(fate: number, n: number): number | undefined {
    return this.#made.get(fate)?.get(n);
  }

  remember(fate: number, n: number, r: number): void {
    let m = this.#made.get(fate);
    if (m === undefined) this.#made.set(fate, (m = new Map()));
    m.set(n, r);
  }

  /**
   * Per terminal under node `n`, the assignments of the variables from `n`'s level on that reach it (found once a
   * node: a walk of its nodes, parents before children, each once).
   */
  leaves(n: number): ReadonlyMap<number, bigint> {
    let found = this.#leaves.get(n);
    if (found === undefined) this.#leaves.set(n, (found = this.#count(n)));
    return found;
  }

  #count(root: number): Map<number, bigint> {
    const b = this.#b;
    const level = (n: number): number => Math.min(b.variable(n), this.#vars);
    // Nodes below `root`, children before parents (depth bounded by the variables).
    const order: number[] = [];
    const seen = new Set<number>();
    const visit = (n: number): void => {
      if (seen.has(n)) return;
      seen.add(n);
      if (!b.isTerminal(n)) {
        visit(b.low(n));
        visit(b.high(n));
      }
      order.push(n);
    };
    visit(root);
    const weight = new Map<number, bigint>([[root, 1n]]);
    const out = new Map<number, bigint>();
    for (let i = order.length - 1; i >= 0; i--) {
      const n = order[i] ?? root;
      const w = weight.get(n) ?? 0n;
      if (b.isTerminal(n)) {
        out.set(n, (out.get(n) ?? 0n) + w);
        continue;
      }
      const v = level(n);
      for (const c of [b.low(n), b.high(n)]) weight.set(c, (weight.get(c) ?? 0n) + (w << BigInt(level(c) - v - 1)));
    }
    return out;
  }
}

/** The leaves a write replaced, each with those it became. */
export type Moved = Map<number, Set<number>>;

/** Notes in `moved` that leaf `leaf` became `r` (where some of its headers went). */
export function note(moved: Moved, leaf: number, r: number): void {
  const to = moved.get(leaf);
  if (to === undefined) moved.set(leaf, new Set([r]));
  else to.add(r);
}

/** Signature `sig` (predicates, ascending) with the owner's (`owned`) replaced by `id` (none when −1), ascending. */
export function refated(sig: readonly number[], id: number, owned: (pred: number) => boolean): number[] {
  const next = sig.filter((q) => !owned(q));
  if (id < 0) return next;
  let k = next.length;
  while (k > 0 && (next[k - 1] ?? 0) > id) k--;
  next.splice(k, 0, id);
  return next;
}

/**
 * A write's RegionMemo for `owner`'s fates (`ids`: per fate, its predicate): what a node became, known when a write
 * made it before and every leaf it leads to is a class now (`isClass`: a new class's witness is found by the walk);
 * `refate` gives a leaf's new leaf (and notes the move).
 */
export function regionMemo(
  refates: Refates,
  owner: FateOwner,
  ids: ReadonlyMap<number, number>,
  leaf: { refate(leaf: number, id: number): number; isClass(leaf: number): boolean },
): RegionMemo {
  return {
    known: (n, fate) => {
      const id = ids.get(fate);
      const node = id === undefined ? undefined : refates.made(fateKey(owner, id), n);
      if (id === undefined || node === undefined) return undefined;
      const pairs: [number, number, bigint][] = [];
      for (const [before, count] of refates.leaves(n)) {
        const after = leaf.refate(before, id);
        if (!leaf.isClass(after)) return undefined;
        pairs.push([before, after, count]);
      }
      return { node, pairs };
    },
    remember: (n, fate, r) => {
      const id = ids.get(fate);
      if (id !== undefined) refates.remember(fateKey(owner, id), n, r);
    },
  };
}

/** The classes a write walks again, ascending: those `born`, and those of the leaves `met` (of the diagram before)
 * still classes (`atomOf`) whose witness is `inside` the region. */
export function walkAgain(
  born: readonly number[],
  met: ReadonlySet<number>,
  atomOf: (leaf: number) => number | undefined,
  inside: (atom: number) => boolean,
): number[] {
  const again = new Set(born);
  for (const leaf of met) {
    const atom = atomOf(leaf);
    if (atom !== undefined && !again.has(atom) && inside(atom)) again.add(atom);
  }
  return [...again].sort((x, y) => x - y);
}
