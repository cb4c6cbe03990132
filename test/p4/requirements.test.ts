// machineRequirements: what each machine's program needs from a target.

import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compile } from "../../src/control/compile.js";
import { machineRequirements } from "../../src/p4/requirements.js";
import { exportP4 } from "../../src/p4/export.js";
import { loadSpec } from "../../src/spec/load.js";
import { ROOT } from "./helpers/examples.js";

const of = (spec: string, machine: string) => machineRequirements(compile(loadSpec(join(ROOT, spec)))).find((m) => m.machine === machine);

describe("machineRequirements", () => {
  it.each([
    ["examples/hub-and-spoke/network.yaml", "hub", { tableCount: 3, multicastGroups: 4, multicastReplicas: 12, selectorGroupSizes: [] }],
    ["examples/ip-router/network.yaml", "r", { tableCount: 14, multicastGroups: 0, multicastReplicas: 0, selectorGroupSizes: [] }],
    ["examples/subduction/network.yaml", "gw", { tableCount: 6, multicastGroups: 0, multicastReplicas: 0, selectorGroupSizes: [] }],
    ["test/fixtures/specs/p4-features.yaml", "s", { tableCount: 15, multicastGroups: 1, multicastReplicas: 2, selectorGroupSizes: [2] }],
  ])("%s machine %s", (spec, machine, expected) => {
    const r = of(spec, machine);
    expect({ tableCount: r?.tableCount, multicastGroups: r?.multicastGroups, multicastReplicas: r?.multicastReplicas, selectorGroupSizes: r?.selectorGroupSizes }).toEqual(expected);
    expect(r?.tables.length).toBe(r?.tableCount);
  });

  it.each([
    ["examples/hub-and-spoke/network.yaml", "hub", "lan_hub_forward", { role: "forward", matchKind: "optional", keyBits: 64, size: 1024, entries: 8 }],
    ["examples/ip-router/network.yaml", "r", "ip_r_forward", { role: "forward", matchKind: "lpm", keyBits: 32, size: 1024, entries: 2 }],
    ["examples/ip-router/network.yaml", "r", "lanB_r_send", { role: "send", matchKind: "exact", keyBits: 32, size: 1024, entries: 1 }],
    ["examples/filter-chain/network.yaml", "m3", "chain_m3_receive", { role: "receive", matchKind: "range", keyBits: 24, size: 1024, entries: 1 }],
    ["test/fixtures/specs/p4-features.yaml", "s", "lan_s_acquire", { role: "acquire", matchKind: "range", keyBits: 16 + 48 + 12, size: 1024, entries: 3 }],
  ])("%s machine %s table %s", (spec, machine, table, expected) => {
    const t = of(spec, machine)?.tables.find((x) => x.name === table);
    expect({ role: t?.role, matchKind: t?.matchKind, keyBits: t?.keyBits, size: t?.size, entries: t?.entries }).toEqual(expected);
  });

  it("answers for a description the export refuses (a group link split across the sender's machine and another)", () => {
    const compiled = compile(loadSpec(join(ROOT, "test/fixtures/specs/p4-split-group.yaml")));
    expect(() => exportP4(compiled, "p4-split-group.yaml")).toThrow(/cannot be exported to P4/);
    expect(machineRequirements(compiled).map((m) => [m.machine, m.tableCount])).toEqual([["s", 3], ["b", 1]]);
  });
});
