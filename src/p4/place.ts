// Placement of machines on a fleet of targets, the way the Kubernetes scheduler
// places pods (seeds/004: feasibility filters, viability scores, priority order,
// preemption with minimal casualties). docs/targets.md, Placement, is the
// contract; in short:
//
// - Machines the fleet says are placed already (placedOn) stay there while they
//   pass every filter; the others are taken highest priority first, ties by name.
// - Filters, in order, each with its reason: the target has every label the
//   machine requires; the machine alone fits the target's profile (./fit.ts);
//   the target hosts fewer than maxMachines; the machine's counted needs fit
//   in what the machines already there leave.
// - Score of a feasible target: headroom left after placing the machine, as a
//   weighted mean over the target's finite counted resources, 0..100, plus the
//   weights of the machine's preferences whose labels the target has. Highest
//   wins; ties by target name.
// - No feasible target: preemption. On each target that passes the first two
//   filters, a set of machines of strictly lower priority whose removal lets
//   the machine in (chooseVictims): the best one (fewest, then the lowest
//   priorities, then names) where there are few sets to try, else a greedy
//   one, spared and exchanged until no single step improves it (polynomial;
//   docs/targets.md, Choosing victims, says what it guarantees). The target
//   with the best set wins (then score, name). The displaced go back into the
//   queue. (A machine left unplaceable earlier is never helped by a later
//   displacement: it came first, so its priority is at least the displacer's,
//   and it could have displaced the same machines.)

import { SpecError, SpecIssue } from "../description/problems.js";
import { didYouMean } from "../description/suggest.js";
import {
  addUsage,
  amount,
  checkFit,
  type FitViolation,
  limits,
  NO_USAGE,
  offered,
  RESOURCES,
  type Resource,
  resourceName,
  type Usage,
  usage,
} from "./fit.js";
import { type Fleet, type FleetTarget, type Labels, type MachinePolicy } from "./fleet.js";
import type { MachineRequirements } from "./requirements.js";
import type { TargetProfile } from "./targets.js";

/** Weights of the headroom score: entries are what runs out first on a switch. */
export const SCORE_WEIGHTS: Readonly<Record<Resource, number>> = {
  tables: 1,
  "entries.exact": 2,
  "entries.lpm": 2,
  "entries.ternary": 2,
  "entries.range": 2,
  "entries.optional": 2,
  multicastGroups: 1,
  selectorGroups: 1,
};

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

export interface PlacedMachine {
  readonly machine: string;
  readonly priority: number;
  readonly target: string;
  /** The score that chose the target (headroom + preferences). */
  readonly score: number;
  /** Where the fleet said it was before, when it said so. */
  readonly placedOn?: string;
}

/** Why one target cannot take a machine: the filter that failed, in words. */
export interface Rejection {
  readonly target: string;
  readonly filter: "labels" | "profile" | "slots" | "capacity";
  readonly reason: string;
}

export interface UnplaceableMachine {
  readonly machine: string;
  readonly priority: number;
  readonly reasons: readonly Rejection[];
}

export interface Displacement {
  readonly machine: string;
  readonly priority: number;
  readonly target: string;
  readonly by: string;
  readonly byPriority: number;
}

export interface TargetLoad {
  readonly name: string;
  readonly profile: string;
  readonly machines: readonly string[];
  /** The counted resources its machines take, and the target's limits (Infinity: unlimited). */
  readonly used: Usage;
  readonly offered: Usage;
}

export interface Placement {
  /** In placement order: priority, then name. */
  readonly placed: readonly PlacedMachine[];
  readonly unplaceable: readonly UnplaceableMachine[];
  /** Every displacement, in the order it happened. */
  readonly displaced: readonly Displacement[];
  readonly targets: readonly TargetLoad[];
}

type Verdict = { readonly ok: true } | Rejection;

export function place(
  reqs: readonly MachineRequirements[],
  fleet: Fleet,
  work: PlaceWork = { evaluations: 0 },
): Placement {
  checkPolicies(reqs, fleet);
  const byName = new Map(reqs.map((r) => [r.machine, r]));
  const need = new Map(reqs.map((r) => [r.machine, usage(r)]));
  const policy = (m: string): MachinePolicy => fleet.machines.get(m) ?? fleet.defaults;
  const priority = (m: string): number => policy(m).priority;
  const order = (a: string, b: string): number => priority(b) - priority(a) || compareNames(a, b);
  const targets = [...fleet.targets].sort((a, b) => compareNames(a.name, b.name));
  const hosted = new Map<string, string[]>(targets.map((t) => [t.name, []]));
  const hostedOn = (t: FleetTarget): string[] => hosted.get(t.name) ?? [];
  const scores = new Map<string, number>();
  const displaced: Displacement[] = [];
  const unplaceable = new Map<string, UnplaceableMachine>();

  const req = (m: string): MachineRequirements => {
    const r = byName.get(m);
    if (r === undefined) throw new Error(`no requirements for machine ${m}`);
    return r;
  };
  const load = (machines: readonly string[]): Usage =>
    machines.reduce((sum, m) => addUsage(sum, need.get(m) ?? NO_USAGE), NO_USAGE);
  // What each target's machines take, summed again only when they change.
  const loads = new Map<string, Usage>();
  const loadOn = (t: FleetTarget): Usage => {
    const known = loads.get(t.name);
    if (known !== undefined) return known;
    const sum = load(hostedOn(t));
    loads.set(t.name, sum);
    return sum;
  };
  const setHosted = (t: FleetTarget, machines: string[]): void => {
    hosted.set(t.name, machines.sort(order));
    loads.delete(t.name);
  };

  // A machine alone on a profile: the same answer each time it is asked.
  const fitsAlone = new Map<string, Map<TargetProfile, readonly FitViolation[]>>();
  const aloneOn = (m: string, p: TargetProfile): readonly FitViolation[] => {
    const known = fitsAlone.get(m) ?? new Map<TargetProfile, readonly FitViolation[]>();
    fitsAlone.set(m, known);
    const violations = known.get(p) ?? checkFit(req(m), p);
    known.set(p, violations);
    return violations;
  };

  const filter = (m: string, t: FleetTarget): Verdict => {
    work.evaluations++;
    const wanted = Object.entries(policy(m).requires).filter(([k, v]) => t.labels[k] !== v);
    if (wanted.length > 0) {
      const has = (k: string): string => (t.labels[k] === undefined ? `no label ${k}` : `${k}=${t.labels[k]}`);
      return {
        target: t.name,
        filter: "labels",
        reason: wanted.map(([k, v]) => `requires ${k}=${v}, the target has ${has(k)}`).join("; "),
      };
    }
    const alone = aloneOn(m, t.profile);
    const first = alone[0];
    if (first !== undefined) {
      const more = alone.length > 1 ? ` (and ${alone.length - 1} more: strata fit lists them)` : "";
      return { target: t.name, filter: "profile", reason: `does not fit ${t.profile.name}: ${first.text}${more}` };
    }
    const there = hostedOn(t);
    if (there.length >= t.maxMachines) {
      return {
        target: t.name,
        filter: "slots",
        reason:
          `hosts ${there.length} machine${there.length === 1 ? "" : "s"} (${there.join(", ")}), ` +
          `maxMachines ${t.maxMachines}`,
      };
    }
    const mine = need.get(m) ?? NO_USAGE;
    const taken = loadOn(t);
    const room = limits(t.profile);
    const short = RESOURCES.filter((r) => amount(mine, r) + amount(taken, r) > amount(room, r));
    if (short.length > 0) {
      const parts = short.map(
        (r) => `${resourceName(r)}: needs ${amount(mine, r)}, ${amount(room, r) - amount(taken, r)} left`,
      );
      return { target: t.name, filter: "capacity", reason: `with ${there.join(", ")} there: ${parts.join("; ")}` };
    }
    return { ok: true };
  };

  const score = (m: string, t: FleetTarget, there: readonly string[]): number => {
    const after = addUsage(load(there), need.get(m) ?? NO_USAGE);
    const preferred = policy(m)
      .prefers.filter((p) => hasLabels(t.labels, p.labels))
      .reduce((sum, p) => sum + p.weight, 0);
    return headroom(after, t) + preferred;
  };

  const assign = (m: string, t: FleetTarget): void => {
    scores.set(m, score(m, t, hostedOn(t)));
    setHosted(t, [...hostedOn(t), m]);
  };

  /** The machines on `t` of lower priority than `m` whose leaving lets it in (chooseVictims); undefined when none do.
   * */
  const victimsOn = (m: string, t: FleetTarget): string[] | undefined => {
    const there = hostedOn(t);
    const jeopardy = there
      .filter((h) => priority(h) < priority(m))
      .map((h) => ({ machine: h, priority: priority(h), frees: need.get(h) ?? NO_USAGE }));
    if (jeopardy.length === 0) return undefined;
    const mine = need.get(m) ?? NO_USAGE;
    const taken = loadOn(t);
    const room = limits(t.profile);
    const amounts = Object.fromEntries(
      RESOURCES.map((r) => [r, amount(mine, r) + amount(taken, r) - amount(room, r)]),
    ) as Record<Resource, number>;
    return chooseVictims({ slots: there.length + 1 - t.maxMachines, amounts }, jeopardy, work);
  };

  // Machines placed before stay where they are, highest priority first, as long as they pass every filter there.
  const queue: string[] = [];
  for (const m of reqs.map((r) => r.machine).sort(order)) {
    const t = targets.find((x) => x.name === policy(m).placedOn);
    if (t !== undefined && "ok" in filter(m, t)) assign(m, t);
    else queue.push(m);
  }
  // Each preemption strictly raises the placed priorities (as a multiset), so the loop ends; this only guards a bug.
  let steps = 0;
  const maxSteps = (reqs.length + 1) ** 2 * (targets.length + 1) * 4;
  while (queue.length > 0) {
    if (++steps > maxSteps) throw new Error("placement did not settle");
    const m = queue.shift();
    if (m === undefined) break;
    const verdicts = targets.map((t) => ({ t, v: filter(m, t) }));
    const feasible = verdicts.filter(({ v }) => "ok" in v).map(({ t }) => ({ t, s: score(m, t, hostedOn(t)) }));
    const chosen = feasible.sort((a, b) => b.s - a.s || compareNames(a.t.name, b.t.name))[0];
    if (chosen !== undefined) {
      assign(m, chosen.t);
      continue;
    }
    const preemptable = verdicts.filter(({ v }) => "filter" in v && (v.filter === "slots" || v.filter === "capacity"));
    const options = preemptable.flatMap(({ t }) => {
      const victims = victimsOn(m, t);
      return victims === undefined
        ? []
        : [
            {
              t,
              victims,
              s: score(
                m,
                t,
                hostedOn(t).filter((h) => !victims.includes(h)),
              ),
            },
          ];
    });
    const best = options.sort(
      (a, b) => compareCasualties(a.victims, b.victims, priority) || b.s - a.s || compareNames(a.t.name, b.t.name),
    )[0];
    if (best !== undefined) {
      setHosted(
        best.t,
        hostedOn(best.t).filter((h) => !best.victims.includes(h)),
      );
      for (const v of best.victims) {
        scores.delete(v);
        displaced.push({ machine: v, priority: priority(v), target: best.t.name, by: m, byPriority: priority(m) });
      }
      assign(m, best.t);
      queue.push(...best.victims);
      queue.sort(order);
      continue;
    }
    const reasons = verdicts.map(({ t, v }): Rejection => {
      if ("ok" in v) throw new Error("a feasible target was not chosen");
      if (v.filter !== "slots" && v.filter !== "capacity") return v;
      const lower = hostedOn(t).filter((h) => priority(h) < priority(m));
      const why =
        lower.length === 0
          ? `nothing there has a priority below ${priority(m)}`
          : `displacing ${lower.join(", ")} (lower priority) would not make room`;
      return { ...v, reason: `${v.reason}; ${why}` };
    });
    unplaceable.set(m, { machine: m, priority: priority(m), reasons });
  }

  const where = new Map<string, string>();
  for (const [t, ms] of hosted) for (const m of ms) where.set(m, t);
  const all = reqs.map((r) => r.machine).sort(order);
  return {
    placed: all.flatMap((m) => {
      const t = where.get(m);
      const before = policy(m).placedOn;
      return t === undefined
        ? []
        : [
            {
              machine: m,
              priority: priority(m),
              target: t,
              score: scores.get(m) ?? 0,
              ...(before !== undefined ? { placedOn: before } : {}),
            },
          ];
    }),
    unplaceable: all.flatMap((m) => {
      const u = unplaceable.get(m);
      return u === undefined ? [] : [u];
    }),
    displaced,
    targets: fleet.targets.map((t) => {
      const machines = hostedOn(t);
      return { name: t.name, profile: t.profile.name, machines, used: loadOn(t), offered: limits(t.profile) };
    }),
  };
}

/** Headroom left on `t` with `after` placed: 100 × the weighted mean of (limit − used) / limit over its finite,
 * non-zero limits. */
export function headroom(after: Usage, t: FleetTarget): number {
  let sum = 0;
  let weights = 0;
  for (const r of RESOURCES) {
    const limit = offered(t.profile, r);
    if (!Number.isFinite(limit) || limit === 0) continue;
    sum += SCORE_WEIGHTS[r] * ((limit - amount(after, r)) / limit);
    weights += SCORE_WEIGHTS[r];
  }
  return weights === 0 ? 100 : Math.round((100 * sum) / weights);
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

function hasLabels(target: Labels, wanted: Labels): boolean {
  return Object.entries(wanted).every(([k, v]) => target[k] === v);
}

/** Code-unit order, the same in every locale. */
function compareNames(a: string, b: string): number {
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

/** Every machine the fleet file gives a policy must be a machine of the description. */
function checkPolicies(reqs: readonly MachineRequirements[], fleet: Fleet): void {
  const known = reqs.map((r) => r.machine);
  const issues: SpecIssue[] = [];
  for (const [name, p] of fleet.machines) {
    if (known.includes(name)) continue;
    const at = p.at ?? { file: fleet.file, path: `machines.${name}`, line: 0, column: 0 };
    issues.push(
      new SpecIssue(
        at,
        `no machine '${name}' in the description`,
        `${didYouMean(name, known)}machines: ${known.join(", ")}`,
      ),
    );
  }
  if (issues.length > 0) throw new SpecError(issues);
}
