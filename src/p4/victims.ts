// Preemption's choice of victims (docs/targets.md, Choosing victims): which machines of lower
// priority leave a target so that a machine that does not fit gets in — the fewest, then the
// lowest priorities, then names; found greedily, then tried set by set where there are few sets.

import { amount, RESOURCES, type Resource, type Usage } from "./fit.js";

/** The most sets of victims tried one by one on a target; beyond, the greedy set stands (docs/targets.md, Choosing
 * victims). */
export const MAX_EXACT_SETS = 256;

/** Work place() did, for tests and benchmarks: its fit checks, each of a machine against a target as it is or with some
 * machines gone. */
export interface PlaceWork {
  evaluations: number;
}

/** A machine of lower priority on a target, and what its leaving frees there. */
export interface Occupant {
  readonly machine: string;
  readonly priority: number;
  readonly frees: Usage;
}

/** What keeps a machine out of a target: machines beyond maxMachines, and how much more of each counted resource it
 * needs than is left (≤ 0: enough). */
export interface Shortfall {
  readonly slots: number;
  readonly amounts: Readonly<Record<Resource, number>>;
}

/** Fewer first; then the one whose highest priorities are lower (compared highest first); then by names. */
export function compareCasualties(a: readonly string[], b: readonly string[], priority: (m: string) => number): number {
  if (a.length !== b.length) return a.length - b.length;
  const pa = a.map(priority).sort((x, y) => y - x);
  const pb = b.map(priority).sort((x, y) => y - x);
  for (let i = 0; i < pa.length; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return compareNames([...a].sort(compareNames).join(","), [...b].sort(compareNames).join(","));
}

/**
 * Which occupants must leave so that a machine `short` keeps out gets in: undefined when even all
 * of them leaving is not enough. Greedy, then tried one set at a time where that is cheap
 * (docs/targets.md, Choosing victims, says what each guarantees):
 * - all leave, then each is spared in turn, those that free least of what is short first (then
 *   the highest priorities), while the rest still make room; then each victim, highest priority
 *   first, is exchanged for a spared occupant of lower priority (or equal, earlier by name) that
 *   makes room as well; both again until neither changes anything;
 * - when the sets whose size lies between a lower bound (what the largest occupants of each short
 *   resource free) and the greedy set's size number at most `exactSets`, every one of them is
 *   tried and the best by compareCasualties wins.
 * Victims come in priority order, then by name.
 */
export function chooseVictims(
  short: Shortfall,
  jeopardy: readonly Occupant[],
  work: PlaceWork = { evaluations: 0 },
  exactSets = MAX_EXACT_SETS,
): string[] | undefined {
  // Amounts as vectors: slots first (each occupant frees one), then RESOURCES in order.
  const needed = [short.slots, ...RESOURCES.map((r) => short.amounts[r])];
  const frees = new Map(jeopardy.map((o) => [o, [1, ...RESOURCES.map((r) => amount(o.frees, r))]]));
  const of = (o: Occupant): readonly number[] => frees.get(o) ?? [];
  const plus = (a: readonly number[], b: readonly number[]): number[] => a.map((x, i) => x + (b[i] ?? 0));
  const minus = (a: readonly number[], b: readonly number[]): number[] => a.map((x, i) => x - (b[i] ?? 0));
  const total = (set: Iterable<Occupant>): number[] =>
    [...set].reduce(
      (sum, o) => plus(sum, of(o)),
      needed.map(() => 0),
    );
  const lets = (freed: readonly number[]): boolean => {
    work.evaluations++;
    return needed.every((n, i) => n <= (freed[i] ?? 0));
  };
  /** Below 0 when `a` is the lesser casualty: lower priority, then earlier name. */
  const rank = (a: Occupant, b: Occupant): number => a.priority - b.priority || compareNames(a.machine, b.machine);
  const names = (set: Iterable<Occupant>): string[] => [...set].sort(rank).map((o) => o.machine);

  const gone = new Set(jeopardy);
  let freed = total(gone);
  if (!lets(freed)) return undefined;
  // The share of what is short an occupant frees, each short resource counting 1: the least first, then the highest
  // ranks.
  const cover = new Map(
    jeopardy.map((o) => [o, needed.reduce((c, n, i) => (n > 0 ? c + Math.min(of(o)[i] ?? 0, n) / n : c), 0)]),
  );
  const spareOrder = [...jeopardy].sort((a, b) => (cover.get(a) ?? 0) - (cover.get(b) ?? 0) || rank(b, a));
  for (let changed = true; changed;) {
    changed = false;
    for (const o of spareOrder) {
      if (!gone.has(o) || !lets(minus(freed, of(o)))) continue;
      gone.delete(o);
      freed = minus(freed, of(o));
      changed = true;
    }
    const spared = jeopardy.filter((o) => !gone.has(o)).sort(rank);
    for (const v of [...gone].sort((a, b) => rank(b, a))) {
      const instead = spared.find((o) => !gone.has(o) && rank(o, v) < 0 && lets(plus(minus(freed, of(v)), of(o))));
      if (instead === undefined) continue;
      gone.delete(v);
      gone.add(instead);
      freed = plus(minus(freed, of(v)), of(instead));
      changed = true;
    }
  }

  const fewest = Math.max(
    ...needed.map((n, i) =>
      fewestFreeing(
        n,
        jeopardy.map((o) => of(o)[i] ?? 0),
      ),
    ),
  );
  if (setsBetween(jeopardy.length, fewest, gone.size, exactSets) > exactSets) return names(gone);
  const priority = new Map(jeopardy.map((o) => [o.machine, o.priority]));
  const priorityOf = (m: string): number => priority.get(m) ?? 0;
  for (let k = fewest; k <= gone.size; k++) {
    let best: string[] | undefined;
    for (const set of combinations(jeopardy, k)) {
      if (!lets(total(set))) continue;
      const candidate = names(set);
      if (best === undefined || compareCasualties(candidate, best, priorityOf) < 0) best = candidate;
    }
    if (best !== undefined) return best;
  }
  return names(gone);
}

/** The fewest of `amounts` (largest first) whose sum reaches `needed`; 0 when nothing is needed. */
function fewestFreeing(needed: number, amounts: readonly number[]): number {
  if (needed <= 0) return 0;
  const largest = [...amounts].sort((a, b) => b - a);
  let freed = 0;
  for (const [i, a] of largest.entries()) {
    freed += a;
    if (freed >= needed) return i + 1;
  }
  return largest.length;
}

/** How many subsets of n items have a size from `low` to `high` (counting stops past `enough`). */
function setsBetween(n: number, low: number, high: number, enough: number): number {
  let choose = 1; // C(n, k), from k = 0
  let total = 0;
  for (let k = 0; k <= high && total <= enough; k++) {
    if (k >= low) total += choose;
    choose = (choose * (n - k)) / (k + 1);
  }
  return total;
}

/** Code-unit order, the same in every locale. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function* combinations<T>(items: readonly T[], k: number, from = 0): Generator<T[]> {
  if (k === 0) {
    yield [];
    return;
  }
  for (let i = from; i <= items.length - k; i++) {
    const head = items[i] as T;
    for (const rest of combinations(items, k - 1, i + 1)) yield [head, ...rest];
  }
}
