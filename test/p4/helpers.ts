// Factories for requirements and profiles: a default that fits, overridden only where a case differs.

import type { MachineRequirements, TableRequirement } from "../../src/p4/requirements.js";
import type { TargetProfile } from "../../src/p4/targets.js";

export function table(over: Partial<TableRequirement> = {}): TableRequirement {
  return {
    name: "n_m_acquire",
    network: "n",
    member: "m",
    role: "acquire",
    kind: "exact",
    fields: [{ name: "dst", bits: 48, kind: "exact" }],
    keyBits: 48,
    size: 1024,
    entries: 1,
    ...over,
  };
}

export function machine(over: Partial<MachineRequirements> = {}): MachineRequirements {
  const tables = over.tables ?? [table()];
  return {
    machine: "m",
    members: ["n.m"],
    tables,
    tableCount: tables.length,
    multicastGroups: [],
    actionSelectors: [],
    ...over,
  };
}

export function profile(over: Partial<TargetProfile> = {}): TargetProfile {
  return {
    name: "t",
    file: "t.yaml",
    summary: "",
    architecture: "v1model",
    matchKinds: ["exact", "lpm", "ternary", "optional"],
    maxKeyBits: 256,
    tables: 8,
    capacity: { exact: 4096, lpm: 2048, ternary: 2048, range: 0, optional: 2048 },
    multicastGroups: 2,
    selectorGroups: 1,
    selectorGroupSize: 16,
    ...over,
  };
}
