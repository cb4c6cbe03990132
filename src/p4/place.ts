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
//   filters, the smallest set of machines of strictly lower priority whose
//   removal lets the machine in (fewest, then the lowest priorities, then
//   names); the target with the smallest such set wins (then score, name).
//   The displaced go back into the queue. (A machine left unplaceable earlier
//   is never helped by a later displacement: it came first, so its priority is
//   at least the displacer's, and it could have displaced the same machines.)

import { SpecError, SpecIssue } from "../description/problems.js";
import { didYouMean } from "../description/suggest.js";
import { addUsage, amount, checkFit, limits, NO_USAGE, offered, RESOURCES, type Resource, resourceName, type Usage, usage } from "./fit.js";
import { type Fleet, type FleetTarget, type Labels, type MachinePolicy } from "./fleet.js";
import type { MachineRequirements } from "./requirements.js";

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

/** Beyond this many lower-priority machines on one target, victims are chosen greedily, not by trying every set. */
export const MAX_EXACT_VICTIMS = 16;

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

export function place(reqs: readonly MachineRequirements[], fleet: Fleet): Placement {
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
  const load = (machines: readonly string[]): Usage => machines.reduce((sum, m) => addUsage(sum, need.get(m) ?? NO_USAGE), NO_USAGE);

  const filter = (m: string, t: FleetTarget, there: readonly string[]): Verdict => {
    const wanted = Object.entries(policy(m).requires).filter(([k, v]) => t.labels[k] !== v);
    if (wanted.length > 0) {
      const has = (k: string): string => (t.labels[k] === undefined ? `no label ${k}` : `${k}=${t.labels[k]}`);
      return { target: t.name, filter: "labels", reason: wanted.map(([k, v]) => `requires ${k}=${v}, the target has ${has(k)}`).join("; ") };
    }
    const alone = checkFit(req(m), t.profile);
    const first = alone[0];
    if (first !== undefined) {
      const more = alone.length > 1 ? ` (and ${alone.length - 1} more: strata fit lists them)` : "";
      return { target: t.name, filter: "profile", reason: `does not fit ${t.profile.name}: ${first.text}${more}` };
    }
    if (there.length >= t.maxMachines) {
      return { target: t.name, filter: "slots", reason: `hosts ${there.length} machine${there.length === 1 ? "" : "s"} (${there.join(", ")}), maxMachines ${t.maxMachines}` };
    }
    const mine = need.get(m) ?? NO_USAGE;
    const taken = load(there);
    const short = RESOURCES.filter((r) => amount(mine, r) + amount(taken, r) > offered(t.profile, r));
    if (short.length > 0) {
      const parts = short.map((r) => `${resourceName(r)}: needs ${amount(mine, r)}, ${offered(t.profile, r) - amount(taken, r)} left`);
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
    hostedOn(t).push(m);
    hostedOn(t).sort(order);
  };

  /** The fewest, lowest-priority machines on `t` whose leaving lets `m` in; undefined when none do. */
  const victimsOn = (m: string, t: FleetTarget): string[] | undefined => {
    const there = hostedOn(t);
    const jeopardy = there.filter((h) => priority(h) < priority(m)).sort((a, b) => priority(a) - priority(b) || compareNames(a, b));
    const fitsWithout = (gone: readonly string[]): boolean => "ok" in filter(m, t, there.filter((h) => !gone.includes(h)));
    if (jeopardy.length > MAX_EXACT_VICTIMS) {
      // Greedy: the lowest priorities go first until m fits; then the highest are spared if m still fits.
      const gone: string[] = [];
      for (const h of jeopardy) {
        gone.push(h);
        if (fitsWithout(gone)) break;
      }
      if (!fitsWithout(gone)) return undefined;
      for (const h of [...gone].reverse()) {
        const without = gone.filter((g) => g !== h);
        if (fitsWithout(without)) gone.splice(gone.indexOf(h), 1);
      }
      return gone;
    }
    for (let k = 1; k <= jeopardy.length; k++) {
      let best: string[] | undefined;
      for (const set of combinations(jeopardy, k)) {
        if (fitsWithout(set) && (best === undefined || compareCasualties(set, best, priority) < 0)) best = set;
      }
      if (best !== undefined) return best;
    }
    return undefined;
  };

  // Machines placed before stay where they are, highest priority first, as long as they pass every filter there.
  const queue: string[] = [];
  for (const m of reqs.map((r) => r.machine).sort(order)) {
    const t = targets.find((x) => x.name === policy(m).placedOn);
    if (t !== undefined && "ok" in filter(m, t, hostedOn(t))) assign(m, t);
    else queue.push(m);
  }
  // Each preemption strictly raises the placed priorities (as a multiset), so the loop ends; this only guards a bug.
  let steps = 0;
  const maxSteps = (reqs.length + 1) ** 2 * (targets.length + 1) * 4;
  while (queue.length > 0) {
    if (++steps > maxSteps) throw new Error("placement did not settle");
    const m = queue.shift();
    if (m === undefined) break;
    const verdicts = targets.map((t) => ({ t, v: filter(m, t, hostedOn(t)) }));
    const feasible = verdicts.filter(({ v }) => "ok" in v).map(({ t }) => ({ t, s: score(m, t, hostedOn(t)) }));
    const chosen = feasible.sort((a, b) => b.s - a.s || compareNames(a.t.name, b.t.name))[0];
    if (chosen !== undefined) {
      assign(m, chosen.t);
      continue;
    }
    const preemptable = verdicts.filter(({ v }) => "filter" in v && (v.filter === "slots" || v.filter === "capacity"));
    const options = preemptable.flatMap(({ t }) => {
      const victims = victimsOn(m, t);
      return victims === undefined ? [] : [{ t, victims, s: score(m, t, hostedOn(t).filter((h) => !victims.includes(h))) }];
    });
    const best = options.sort((a, b) => compareCasualties(a.victims, b.victims, priority) || b.s - a.s || compareNames(a.t.name, b.t.name))[0];
    if (best !== undefined) {
      hosted.set(best.t.name, hostedOn(best.t).filter((h) => !best.victims.includes(h)));
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
      const why = lower.length === 0 ? `nothing there has a priority below ${priority(m)}` : `displacing ${lower.join(", ")} (lower priority) would not make room`;
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
      return t === undefined ? [] : [{ machine: m, priority: priority(m), target: t, score: scores.get(m) ?? 0, ...(before !== undefined ? { placedOn: before } : {}) }];
    }),
    unplaceable: all.flatMap((m) => {
      const u = unplaceable.get(m);
      return u === undefined ? [] : [u];
    }),
    displaced,
    targets: fleet.targets.map((t) => {
      const machines = hostedOn(t);
      return { name: t.name, profile: t.profile.name, machines, used: load(machines), offered: limits(t.profile) };
    }),
  };
}

/** Headroom left on `t` with `after` placed: 100 × the weighted mean of (limit − used) / limit over its finite, non-zero limits. */
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
    issues.push(new SpecIssue(at, `no machine '${name}' in the description`, `${didYouMean(name, known)}machines: ${known.join(", ")}`));
  }
  if (issues.length > 0) throw new SpecError(issues);
}
