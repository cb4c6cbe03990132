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
import { chooseVictims, compareCasualties, compareNames, type PlaceWork } from "./victims.js";

export type { PlaceWork } from "./victims.js";

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
  const placing = new Placing(reqs, fleet, work);
  // Machines placed before stay where they are, highest priority first, as long as they pass every filter there.
  const queue: string[] = [];
  for (const m of reqs.map((r) => r.machine).sort(placing.order)) {
    const t = placing.targets.find((x) => x.name === placing.policy(m).placedOn);
    if (t !== undefined && "ok" in placing.filter(m, t)) placing.assign(m, t);
    else queue.push(m);
  }
  // Each preemption strictly raises the placed priorities (as a multiset), so the loop ends; this only guards a bug.
  let steps = 0;
  const maxSteps = (reqs.length + 1) ** 2 * (placing.targets.length + 1) * 4;
  while (queue.length > 0) {
    if (++steps > maxSteps) throw new Error("placement did not settle");
    const m = queue.shift();
    if (m === undefined) break;
    const displaced = placing.placeOne(m);
    if (displaced.length > 0) {
      queue.push(...displaced);
      queue.sort(placing.order);
    }
  }
  return placing.result();
}

/** A placement under way: where each machine is, what each target's machines take, and what happened on the way. */
class Placing {
  readonly targets: readonly FleetTarget[];
  readonly #reqs: readonly MachineRequirements[];
  readonly #fleet: Fleet;
  readonly #work: PlaceWork;
  readonly #byName: ReadonlyMap<string, MachineRequirements>;
  readonly #need: ReadonlyMap<string, Usage>;
  readonly #hosted: Map<string, string[]>;
  // What each target's machines take, summed again only when they change.
  readonly #loads = new Map<string, Usage>();
  // A machine alone on a profile: the same answer each time it is asked.
  readonly #fitsAlone = new Map<string, Map<TargetProfile, readonly FitViolation[]>>();
  readonly #scores = new Map<string, number>();
  readonly #displaced: Displacement[] = [];
  readonly #unplaceable = new Map<string, UnplaceableMachine>();

  constructor(reqs: readonly MachineRequirements[], fleet: Fleet, work: PlaceWork) {
    this.#reqs = reqs;
    this.#fleet = fleet;
    this.#work = work;
    this.#byName = new Map(reqs.map((r) => [r.machine, r]));
    this.#need = new Map(reqs.map((r) => [r.machine, usage(r)]));
    this.targets = [...fleet.targets].sort((a, b) => compareNames(a.name, b.name));
    this.#hosted = new Map(this.targets.map((t) => [t.name, []]));
  }

  policy(m: string): MachinePolicy {
    return this.#fleet.machines.get(m) ?? this.#fleet.defaults;
  }

  priority = (m: string): number => this.policy(m).priority;

  /** Placement order: priority, then name. */
  order = (a: string, b: string): number => this.priority(b) - this.priority(a) || compareNames(a, b);

  #hostedOn(t: FleetTarget): string[] {
    return this.#hosted.get(t.name) ?? [];
  }

  #needOf(m: string): Usage {
    return this.#need.get(m) ?? NO_USAGE;
  }

  #load(machines: readonly string[]): Usage {
    return machines.reduce((sum, m) => addUsage(sum, this.#needOf(m)), NO_USAGE);
  }

  #loadOn(t: FleetTarget): Usage {
    const known = this.#loads.get(t.name);
    if (known !== undefined) return known;
    const sum = this.#load(this.#hostedOn(t));
    this.#loads.set(t.name, sum);
    return sum;
  }

  #setHosted(t: FleetTarget, machines: string[]): void {
    this.#hosted.set(t.name, machines.sort(this.order));
    this.#loads.delete(t.name);
  }

  #aloneOn(m: string, p: TargetProfile): readonly FitViolation[] {
    const known = this.#fitsAlone.get(m) ?? new Map<TargetProfile, readonly FitViolation[]>();
    this.#fitsAlone.set(m, known);
    const r = this.#byName.get(m);
    if (r === undefined) throw new Error(`no requirements for machine ${m}`);
    const violations = known.get(p) ?? checkFit(r, p);
    known.set(p, violations);
    return violations;
  }

  /** The filters in order (labels, profile, slots, capacity): the first that keeps `m` off `t`, or ok. */
  filter(m: string, t: FleetTarget): Verdict {
    this.#work.evaluations++;
    const wanted = Object.entries(this.policy(m).requires).filter(([k, v]) => t.labels[k] !== v);
    if (wanted.length > 0) {
      const has = (k: string): string => (t.labels[k] === undefined ? `no label ${k}` : `${k}=${t.labels[k]}`);
      return {
        target: t.name,
        filter: "labels",
        reason: wanted.map(([k, v]) => `requires ${k}=${v}, the target has ${has(k)}`).join("; "),
      };
    }
    const alone = this.#aloneOn(m, t.profile);
    const first = alone[0];
    if (first !== undefined) {
      const more = alone.length > 1 ? ` (and ${alone.length - 1} more: strata fit lists them)` : "";
      return { target: t.name, filter: "profile", reason: `does not fit ${t.profile.name}: ${first.text}${more}` };
    }
    const there = this.#hostedOn(t);
    if (there.length >= t.maxMachines) {
      return {
        target: t.name,
        filter: "slots",
        reason:
          `hosts ${there.length} machine${there.length === 1 ? "" : "s"} (${there.join(", ")}), ` +
          `maxMachines ${t.maxMachines}`,
      };
    }
    const mine = this.#needOf(m);
    const taken = this.#loadOn(t);
    const room = limits(t.profile);
    const short = RESOURCES.filter((r) => amount(mine, r) + amount(taken, r) > amount(room, r));
    if (short.length > 0) {
      const parts = short.map(
        (r) => `${resourceName(r)}: needs ${amount(mine, r)}, ${amount(room, r) - amount(taken, r)} left`,
      );
      return { target: t.name, filter: "capacity", reason: `with ${there.join(", ")} there: ${parts.join("; ")}` };
    }
    return { ok: true };
  }

  /** Headroom on `t` with `m` beside `there`, plus the weights of `m`'s preferences `t` has the labels of. */
  #score(m: string, t: FleetTarget, there: readonly string[]): number {
    const after = addUsage(this.#load(there), this.#needOf(m));
    const preferred = this.policy(m)
      .prefers.filter((p) => hasLabels(t.labels, p.labels))
      .reduce((sum, p) => sum + p.weight, 0);
    return headroom(after, t) + preferred;
  }

  assign(m: string, t: FleetTarget): void {
    this.#scores.set(m, this.#score(m, t, this.#hostedOn(t)));
    this.#setHosted(t, [...this.#hostedOn(t), m]);
  }

  /** Places `m` on the best feasible target, else by preemption, else records why it cannot be; returns the machines
   * it displaced. */
  placeOne(m: string): string[] {
    const verdicts = this.targets.map((t) => ({ t, v: this.filter(m, t) }));
    const feasible = verdicts
      .filter(({ v }) => "ok" in v)
      .map(({ t }) => ({ t, s: this.#score(m, t, this.#hostedOn(t)) }));
    const chosen = feasible.sort((a, b) => b.s - a.s || compareNames(a.t.name, b.t.name))[0];
    if (chosen !== undefined) {
      this.assign(m, chosen.t);
      return [];
    }
    const displaced = this.#preempt(m, verdicts);
    if (displaced === undefined) {
      this.#unplaceable.set(m, { machine: m, priority: this.priority(m), reasons: this.#rejections(m, verdicts) });
      return [];
    }
    return displaced;
  }

  /** On the target where it costs least (compareCasualties, then score, then name), the victims leave and `m` takes
   * their place; undefined when no target has victims enough. */
  #preempt(m: string, verdicts: readonly { t: FleetTarget; v: Verdict }[]): string[] | undefined {
    const preemptable = verdicts.filter(({ v }) => "filter" in v && (v.filter === "slots" || v.filter === "capacity"));
    const options = preemptable.flatMap(({ t }) => {
      const victims = this.#victimsOn(m, t);
      if (victims === undefined) return [];
      const left = this.#hostedOn(t).filter((h) => !victims.includes(h));
      return [{ t, victims, s: this.#score(m, t, left) }];
    });
    const best = options.sort(
      (a, b) => compareCasualties(a.victims, b.victims, this.priority) || b.s - a.s || compareNames(a.t.name, b.t.name),
    )[0];
    if (best === undefined) return undefined;
    this.#setHosted(
      best.t,
      this.#hostedOn(best.t).filter((h) => !best.victims.includes(h)),
    );
    for (const v of best.victims) {
      this.#scores.delete(v);
      const by = { by: m, byPriority: this.priority(m) };
      this.#displaced.push({ machine: v, priority: this.priority(v), target: best.t.name, ...by });
    }
    this.assign(m, best.t);
    return best.victims;
  }

  /** The machines on `t` of lower priority than `m` whose leaving lets it in (chooseVictims); undefined when none do.
   * */
  #victimsOn(m: string, t: FleetTarget): string[] | undefined {
    const there = this.#hostedOn(t);
    const jeopardy = there
      .filter((h) => this.priority(h) < this.priority(m))
      .map((h) => ({ machine: h, priority: this.priority(h), frees: this.#needOf(h) }));
    if (jeopardy.length === 0) return undefined;
    const mine = this.#needOf(m);
    const taken = this.#loadOn(t);
    const room = limits(t.profile);
    const amounts = Object.fromEntries(
      RESOURCES.map((r) => [r, amount(mine, r) + amount(taken, r) - amount(room, r)]),
    ) as Record<Resource, number>;
    return chooseVictims({ slots: there.length + 1 - t.maxMachines, amounts }, jeopardy, this.#work);
  }

  /** Why each target turned `m` away; where slots or capacity did, why preemption did not help either. */
  #rejections(m: string, verdicts: readonly { t: FleetTarget; v: Verdict }[]): Rejection[] {
    return verdicts.map(({ t, v }): Rejection => {
      if ("ok" in v) throw new Error("a feasible target was not chosen");
      if (v.filter !== "slots" && v.filter !== "capacity") return v;
      const lower = this.#hostedOn(t).filter((h) => this.priority(h) < this.priority(m));
      const why =
        lower.length === 0
          ? `nothing there has a priority below ${this.priority(m)}`
          : `displacing ${lower.join(", ")} (lower priority) would not make room`;
      return { ...v, reason: `${v.reason}; ${why}` };
    });
  }

  result(): Placement {
    const where = new Map<string, string>();
    for (const [t, ms] of this.#hosted) for (const m of ms) where.set(m, t);
    const all = this.#reqs.map((r) => r.machine).sort(this.order);
    return {
      placed: all.flatMap((m) => {
        const t = where.get(m);
        const before = this.policy(m).placedOn;
        return t === undefined
          ? []
          : [
              {
                machine: m,
                priority: this.priority(m),
                target: t,
                score: this.#scores.get(m) ?? 0,
                ...(before !== undefined ? { placedOn: before } : {}),
              },
            ];
      }),
      unplaceable: all.flatMap((m) => {
        const u = this.#unplaceable.get(m);
        return u === undefined ? [] : [u];
      }),
      displaced: this.#displaced,
      targets: this.#fleet.targets.map((t) => {
        const machines = this.#hostedOn(t);
        return { name: t.name, profile: t.profile.name, machines, used: this.#loadOn(t), offered: limits(t.profile) };
      }),
    };
  }
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

function hasLabels(target: Labels, wanted: Labels): boolean {
  return Object.entries(wanted).every(([k, v]) => target[k] === v);
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
