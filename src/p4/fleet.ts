// A fleet: the switches machines may be placed on, each with a target profile and
// labels, and the machines' placement policies (priority, required and preferred
// labels). A YAML file checked like a description (schema/fleet.schema.json);
// profiles it names are loaded relative to it, and their own errors name their
// own files.

import { dirname } from "node:path";
import { type CheckedDocument, readDocument, readText } from "../description/document.js";
import { type Path, type Problems, SpecError, type SpecIssue } from "../description/problems.js";
import { didYouMean } from "../description/suggest.js";
import type { SourceRef } from "../description/types.js";
import { excerpt } from "../errors.js";
import { loadProfile, resolveProfile, type TargetProfile } from "./targets.js";

export const FLEET_SCHEMA_FILE = "schema/fleet.schema.json";

export type Labels = Readonly<Record<string, string>>;

export interface FleetTarget {
  readonly name: string;
  readonly profile: TargetProfile;
  readonly labels: Labels;
  /** The most machines it hosts (Infinity: as many as fit). */
  readonly maxMachines: number;
  readonly at: SourceRef;
}

export interface Preference {
  readonly weight: number;
  readonly labels: Labels;
}

export interface MachinePolicy {
  readonly priority: number;
  readonly requires: Labels;
  readonly prefers: readonly Preference[];
  /** The target the machine is on now (a placement from before): it stays there unless displaced. */
  readonly placedOn?: string;
  /** Where the fleet file names the machine; absent for the defaults. */
  readonly at?: SourceRef;
}

export interface Fleet {
  readonly file: string;
  readonly targets: readonly FleetTarget[];
  /** Policies by machine name, with the defaults filled in. */
  readonly machines: ReadonlyMap<string, MachinePolicy>;
  /** The policy of a machine the fleet does not list: `defaults`, or priority 0 with no labels. */
  readonly defaults: MachinePolicy;
}

export const DEFAULT_POLICY: MachinePolicy = { priority: 0, requires: {}, prefers: [] };

interface RawPolicy {
  readonly priority?: number;
  readonly requires?: RawLabels;
  readonly prefers?: readonly { weight: number; labels: RawLabels }[];
  readonly placedOn?: string;
}

interface RawFleet {
  readonly targets: readonly { name: string; profile: string; labels?: RawLabels; maxMachines?: number }[];
  readonly defaults?: RawPolicy;
  readonly machines?: Readonly<Record<string, RawPolicy>>;
}

type RawLabels = Readonly<Record<string, string | number | boolean>>;

export function loadFleet(file: string): Fleet {
  const text = readText(file, "fleet", "give the path of a fleet file (docs/targets.md)");
  return parseFleet(text, file, (ref) => loadProfile(ref, dirname(file)));
}

/** Validates a fleet's text; `profileOf` loads a target's profile (and throws SpecError for a bad one). */
export function parseFleet(text: string, file: string, profileOf: (ref: string) => TargetProfile): Fleet {
  const empty = {
    problem: "the fleet is empty; it needs a list of targets",
    fix: "see docs/targets.md for the format",
  };
  const { source, problems } = readDocument(text, file, FLEET_SCHEMA_FILE, empty);
  // The rules the schema cannot state, on every part whose shape allows them, so one run shows every error.
  const data = source.data as Partial<Record<string, unknown>>;
  const names = checkTargets(data, file, problems);
  checkPolicies(data, names, source, problems);
  problems.throwIfAny();
  const raw = source.data as RawFleet;
  const profiles = loadProfiles(raw, profileOf);
  const targets = raw.targets.map((t, i): FleetTarget => {
    const profile = profiles.get(t.profile);
    if (profile === undefined) throw new Error(`profile ${t.profile} not loaded`);
    return {
      name: t.name,
      profile,
      labels: labels(t.labels),
      maxMachines: t.maxMachines ?? Number.POSITIVE_INFINITY,
      at: problems.ref(["targets", i]),
    };
  });
  const defaults = policy(raw.defaults ?? {}, DEFAULT_POLICY);
  const machines = new Map<string, MachinePolicy>();
  for (const [name, m] of Object.entries(raw.machines ?? {})) {
    const path: Path = ["machines", name];
    machines.set(name, {
      ...policy(m, defaults),
      ...(m.placedOn !== undefined ? { placedOn: m.placedOn } : {}),
      at: problems.ref(path, true),
    });
  }
  return { file, targets, machines, defaults };
}

/** Each target's name its own, and its profile one that can be found; the targets' names, to their index. */
function checkTargets(data: Partial<Record<string, unknown>>, file: string, problems: Problems): Map<string, number> {
  const names = new Map<string, number>();
  (Array.isArray(data["targets"]) ? (data["targets"] as unknown[]) : []).forEach((t, i) => {
    if (!isRecord(t)) return;
    const { name, profile } = t;
    if (typeof name === "string") {
      const first = names.get(name);
      if (first !== undefined)
        problems.add(
          ["targets", i, "name"],
          `target '${name}' is already targets[${first}]`,
          "give each target its own name",
        );
      else names.set(name, i);
    }
    if (typeof profile === "string" && profile !== "") {
      const found = resolveProfile(profile, dirname(file));
      if ("problem" in found) problems.add(["targets", i, "profile"], found.problem, found.fix);
    }
  });
  return names;
}

/** Each priority read exactly, and each machine placed on a target of the fleet. */
function checkPolicies(
  data: Partial<Record<string, unknown>>,
  names: ReadonlyMap<string, number>,
  source: CheckedDocument["source"],
  problems: Problems,
): void {
  const listed = Object.entries(isRecord(data["machines"]) ? data["machines"] : {});
  // Beyond 2^53 a YAML integer is rounded on reading, and two priorities could compare equal that do not.
  for (const [path, p] of [[["defaults"], data["defaults"]], ...listed.map(([name, m]) => [["machines", name], m])] as [
    Path,
    unknown,
  ][]) {
    const priority = isRecord(p) ? p["priority"] : undefined;
    if (typeof priority !== "number" || !Number.isInteger(priority) || Number.isSafeInteger(priority)) continue;
    const written = source.sourceText([...path, "priority"]) ?? String(priority);
    problems.add(
      [...path, "priority"],
      `priority ${excerpt(written)} is outside ±(2^53 − 1) and would be read rounded`,
      `a priority is a whole number from ${-Number.MAX_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}`,
    );
  }
  for (const [name, m] of listed) {
    const on = isRecord(m) ? m["placedOn"] : undefined;
    if (typeof on === "string" && !names.has(on)) {
      problems.add(
        ["machines", name, "placedOn"],
        `no target '${on}' in the fleet`,
        `${didYouMean(on, names.keys())}targets: ${[...names.keys()].join(", ")}`,
      );
    }
  }
}

/** The targets' profiles, each read once; a bad one is its own file's error, not the fleet's. */
function loadProfiles(raw: RawFleet, profileOf: (ref: string) => TargetProfile): Map<string, TargetProfile> {
  const profiles = new Map<string, TargetProfile>();
  const profileErrors: SpecIssue[] = [];
  for (const t of raw.targets) {
    if (profiles.has(t.profile)) continue;
    try {
      profiles.set(t.profile, profileOf(t.profile));
    } catch (err) {
      if (!(err instanceof SpecError)) throw err;
      if (!profileErrors.some((e) => e.file === err.file)) profileErrors.push(...err.errors);
    }
  }
  if (profileErrors.length > 0) throw new SpecError(profileErrors);
  return profiles;
}

/** A policy as written, each key it leaves out taken from `base`. */
function policy(raw: RawPolicy, base: MachinePolicy): MachinePolicy {
  return {
    priority: raw.priority ?? base.priority,
    requires: raw.requires !== undefined ? labels(raw.requires) : base.requires,
    prefers:
      raw.prefers !== undefined
        ? raw.prefers.map((p) => ({ weight: p.weight, labels: labels(p.labels) }))
        : base.prefers,
  };
}

/** Label values compare as text: `rack: 1` and `rack: "1"` are the same label. */
function labels(raw: RawLabels | undefined): Labels {
  return Object.fromEntries(Object.entries(raw ?? {}).map(([k, v]) => [k, String(v)]));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
