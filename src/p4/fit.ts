// Does a machine fit a target? Two kinds of limits (docs/targets.md, Fit):
// - per item, whoever else the target hosts: the architecture, each table's
//   match kind and key width, each action selector group's size;
// - counted, summed over everything the target hosts: tables, entries per
//   match kind (each table counts its size: the P4 program reserves it),
//   multicast groups, action selector groups.
// checkFit reports one violation per violated limit. Placement (./place.ts)
// checks a machine alone with it, then its counted needs (usage) plus those of
// the machines the target already hosts against the same limits.

import { MATCH_KINDS, type MatchKind } from "../wasm/abi.js";
import type { MachineRequirements } from "./requirements.js";
import { formatLimit, type TargetProfile } from "./targets.js";

/** The architecture the P4 export writes. */
export const EXPORT_ARCHITECTURE = "v1model";

export type FitLimit =
  | "architecture"
  | "match-kind"
  | "key-width"
  | "tables"
  | "capacity"
  | "multicast-groups"
  | "selector-groups"
  | "selector-group-size";

export interface FitViolation {
  readonly limit: FitLimit;
  /** What breaks it: a table's P4 name, "exact entries", "tables", an anycast link. */
  readonly subject: string;
  /** The P4 table, when one table breaks the limit. */
  readonly table?: string;
  readonly needs: number | string;
  readonly offers: number | string;
  /** One line for people. */
  readonly text: string;
}

/** What a machine (or several) takes from a target's counted resources. */
export interface Usage {
  readonly tables: number;
  readonly entries: Readonly<Record<MatchKind, number>>;
  readonly multicastGroups: number;
  readonly selectorGroups: number;
}

/** Counted resources by key, for sums and headroom. */
export type Resource = "tables" | `entries.${MatchKind}` | "multicastGroups" | "selectorGroups";

export const RESOURCES: readonly Resource[] = [
  "tables",
  ...MATCH_KINDS.map((k) => `entries.${k}` as const),
  "multicastGroups",
  "selectorGroups",
];

export function checkFit(req: MachineRequirements, profile: TargetProfile): FitViolation[] {
  return [...itemViolations(req, profile), ...countViolations(usage(req), profile)];
}

/** The limits every table and group must meet on its own. */
function itemViolations(req: MachineRequirements, profile: TargetProfile): FitViolation[] {
  const out: FitViolation[] = [];
  if (profile.architecture !== EXPORT_ARCHITECTURE) {
    out.push({
      limit: "architecture",
      subject: "architecture",
      needs: EXPORT_ARCHITECTURE,
      offers: profile.architecture,
      text: `architecture: the P4 export writes ${EXPORT_ARCHITECTURE}, the target runs ${profile.architecture}`,
    });
  }
  for (const t of req.tables) {
    if (!profile.matchKinds.includes(t.kind)) {
      out.push({
        limit: "match-kind",
        subject: t.name,
        table: t.name,
        needs: t.kind,
        offers: profile.matchKinds.join(", "),
        text: `table ${t.name}: match kind ${t.kind}, the target has ${profile.matchKinds.join(", ")}`,
      });
    }
    if (t.keyBits > profile.maxKeyBits) {
      out.push({
        limit: "key-width",
        subject: t.name,
        table: t.name,
        needs: t.keyBits,
        offers: profile.maxKeyBits,
        text:
          `table ${t.name}: key of ${t.keyBits} bits ` +
          `(${t.fields.map((f) => `${f.name} ${f.bits}`).join(", ")}), the target allows ${profile.maxKeyBits}`,
      });
    }
  }
  for (const s of req.actionSelectors) {
    if (s.groupSize > profile.selectorGroupSize) {
      out.push({
        limit: "selector-group-size",
        subject: s.link,
        needs: s.groupSize,
        offers: profile.selectorGroupSize,
        text:
          `anycast link ${s.link}: an action selector group of ${s.groupSize} members, the target ` +
          `allows ${profile.selectorGroupSize}`,
      });
    }
  }
  return out;
}

export const NO_USAGE: Usage = {
  tables: 0,
  entries: Object.fromEntries(MATCH_KINDS.map((k) => [k, 0])) as Record<MatchKind, number>,
  multicastGroups: 0,
  selectorGroups: 0,
};

export function usage(req: MachineRequirements): Usage {
  const entries = { ...NO_USAGE.entries };
  for (const t of req.tables) entries[t.kind] += t.size;
  return {
    tables: req.tableCount,
    entries,
    multicastGroups: req.multicastGroups.length,
    selectorGroups: req.actionSelectors.length,
  };
}

export function addUsage(a: Usage, b: Usage): Usage {
  const entries = Object.fromEntries(MATCH_KINDS.map((k) => [k, a.entries[k] + b.entries[k]])) as Record<
    MatchKind,
    number
  >;
  return {
    tables: a.tables + b.tables,
    entries,
    multicastGroups: a.multicastGroups + b.multicastGroups,
    selectorGroups: a.selectorGroups + b.selectorGroups,
  };
}

/** A target's counted limits, in the shape of a usage (Infinity: unlimited). */
export function limits(profile: TargetProfile): Usage {
  return {
    tables: profile.tables,
    entries: { ...profile.capacity },
    multicastGroups: profile.multicastGroups,
    selectorGroups: profile.selectorGroups,
  };
}

/** How to read each resource from a usage: placement reads them in its inner loops. */
const READ = {
  tables: (u: Usage) => u.tables,
  ...(Object.fromEntries(MATCH_KINDS.map((k) => [`entries.${k}`, (u: Usage) => u.entries[k]])) as Record<
    `entries.${MatchKind}`,
    (u: Usage) => number
  >),
  multicastGroups: (u: Usage) => u.multicastGroups,
  selectorGroups: (u: Usage) => u.selectorGroups,
} satisfies Record<Resource, (u: Usage) => number>;

/** A resource's amount in a usage. */
export function amount(u: Usage, r: Resource): number {
  return READ[r](u);
}

/** A resource's limit on a target (Infinity: unlimited). */
export function offered(profile: TargetProfile, r: Resource): number {
  return amount(limits(profile), r);
}

/** How people read a resource: "exact entries", "multicast groups". */
export function resourceName(r: Resource): string {
  if (r.startsWith("entries.")) return `${r.slice("entries.".length)} entries`;
  return r === "tables" ? "tables" : r === "multicastGroups" ? "multicast groups" : "action selector groups";
}

const COUNT_LIMIT: Record<"tables" | "multicastGroups" | "selectorGroups", FitLimit> = {
  tables: "tables",
  multicastGroups: "multicast-groups",
  selectorGroups: "selector-groups",
};

/** The counted limits `u` exceeds. A match kind the target lacks is an item violation already, not counted again. */
function countViolations(u: Usage, profile: TargetProfile): FitViolation[] {
  const out: FitViolation[] = [];
  for (const r of RESOURCES) {
    const need = amount(u, r);
    const have = offered(profile, r);
    if (need <= have) continue;
    if (r.startsWith("entries.")) {
      const kind = r.slice("entries.".length) as MatchKind;
      if (!profile.matchKinds.includes(kind)) continue;
      out.push({
        limit: "capacity",
        subject: resourceName(r),
        needs: need,
        offers: have,
        text: `${resourceName(r)}: needs ${need}, the target holds ${have}`,
      });
    } else {
      const stages =
        r === "tables" && profile.stages !== undefined
          ? ` (${formatLimit(profile.stages.count)} stages × ${formatLimit(profile.stages.tablesPerStage)})`
          : "";
      out.push({
        limit: COUNT_LIMIT[r as keyof typeof COUNT_LIMIT],
        subject: resourceName(r),
        needs: need,
        offers: have,
        text: `${resourceName(r)}: needs ${need}, the target has ${have}${stages}`,
      });
    }
  }
  return out;
}

/** "tables 14/48, exact entries 11264/32768, …": the counted resources in use, against the target's limits. */
export function describeUsage(u: Usage, profile: TargetProfile): string {
  const parts = RESOURCES.filter((r) => amount(u, r) > 0 || r === "tables").map(
    (r) => `${resourceName(r)} ${amount(u, r)}/${formatLimit(offered(profile, r))}`,
  );
  return parts.join(", ");
}
