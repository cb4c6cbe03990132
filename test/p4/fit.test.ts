// checkFit: one violation per violated limit, naming the table (or resource),
// what it needs and what the target offers; nothing for a machine that fits.

import { describe, expect, test } from "vitest";
import { compile } from "../../src/control/compile.js";
import { checkFit, describeUsage, type FitViolation, usage } from "../../src/p4/fit.js";
import { type MachineRequirements, machineRequirements } from "../../src/p4/requirements.js";
import { loadProfile, type TargetProfile } from "../../src/p4/targets.js";
import { loadSpec } from "../../src/description/load.js";
import { machine, profile, table } from "./helpers.js";

const INF = Number.POSITIVE_INFINITY;
const mcast = (n: number): MachineRequirements["multicastGroups"] =>
  Array.from({ length: n }, (_, i) => ({ member: "n.m", ports: [i, i + 1], replicas: 2, source: "forward" as const }));
const selector = (groupSize: number, link = "n.m.2-any"): MachineRequirements["actionSelectors"][number] => ({
  member: "n.m",
  link,
  groupSize,
});
const brief = (v: FitViolation): string =>
  `${v.limit} ${v.subject}${v.table === undefined ? "" : ` [${v.table}]`}: ${String(v.needs)} > ` +
  `${String(v.offers)} | ${v.text}`;

describe("checkFit", () => {
  test.each<{ name: string; req: MachineRequirements; target?: Partial<TargetProfile>; want: string[] }>([
    { name: "a machine within every limit fits", req: machine(), want: [] },
    {
      name: "unlimited limits always fit",
      req: machine({ tables: [table({ size: 1 << 20, keyBits: 4096 })] }),
      target: {
        maxKeyBits: INF,
        tables: INF,
        capacity: { exact: INF, lpm: INF, ternary: INF, range: INF, optional: INF },
      },
      want: [],
    },
    {
      name: "architecture: the export writes v1model",
      req: machine(),
      target: { architecture: "tna" },
      want: [
        "architecture architecture: v1model > tna | architecture: the P4 export writes v1model, the target runs tna",
      ],
    },
    {
      name: "match kind: a range table on a target without range (its entries are not counted again)",
      req: machine({
        tables: [
          table({
            name: "n_m_receive",
            kind: "range",
            fields: [{ name: "dport", bits: 16, kind: "range" }],
            keyBits: 16,
          }),
        ],
      }),
      want: [
        "match-kind n_m_receive [n_m_receive]: range > exact, lpm, ternary, " +
          "optional | table n_m_receive: match kind range, the target has exact, " +
          "lpm, ternary, optional",
      ],
    },
    {
      name: "key width: in-link and two IPv6 addresses",
      req: machine({
        tables: [
          table({
            name: "v6_m_forward",
            fields: [
              { name: "in", bits: 16, kind: "exact" },
              { name: "src", bits: 128, kind: "exact" },
              { name: "dst", bits: 128, kind: "exact" },
            ],
            keyBits: 272,
          }),
        ],
      }),
      want: [
        "key-width v6_m_forward [v6_m_forward]: 272 > 256 | table v6_m_forward: " +
          "key of 272 bits (in 16, src 128, dst 128), the target allows 256",
      ],
    },
    {
      name: "tables: the count against stages × tablesPerStage",
      req: machine({ tables: [1, 2, 3, 4, 5].map((i) => table({ name: `t${i}`, size: 1 })) }),
      target: { tables: 4, stages: { count: 2, tablesPerStage: 2 } },
      want: ["tables tables: 5 > 4 | tables: needs 5, the target has 4 (2 stages × 2)"],
    },
    {
      name: "capacity: sizes (not installed entries) summed per match kind",
      req: machine({
        tables: [
          table({ name: "a", size: 3000, entries: 2 }),
          table({ name: "b", size: 1200, entries: 1 }),
          table({ name: "c", kind: "lpm", size: 2048 }),
        ],
      }),
      want: ["capacity exact entries: 4200 > 4096 | exact entries: needs 4200, the target holds 4096"],
    },
    {
      name: "multicast groups",
      req: machine({ multicastGroups: mcast(3) }),
      want: ["multicast-groups multicast groups: 3 > 2 | multicast groups: needs 3, the target has 2"],
    },
    {
      name: "action selector groups and their size",
      req: machine({ actionSelectors: [selector(2, "n.m.2-a"), selector(20, "n.m.3-b")] }),
      want: [
        "selector-group-size n.m.3-b: 20 > 16 | anycast link n.m.3-b: an action " +
          "selector group of 20 members, the target allows 16",
        "selector-groups action selector groups: 2 > 1 | action selector groups: needs 2, the target has 1",
      ],
    },
    {
      name: "one violation per violated limit, items first",
      req: machine({
        tables: [table({ name: "x", kind: "range", keyBits: 300, size: 10 }), table({ name: "y", size: 5000 })],
        multicastGroups: mcast(5),
      }),
      target: { architecture: "psa", tables: 1 },
      want: [
        "architecture architecture: v1model > psa | architecture: the P4 export writes v1model, the target runs psa",
        "match-kind x [x]: range > exact, lpm, ternary, optional | table x: " +
          "match kind range, the target has exact, lpm, ternary, optional",
        "key-width x [x]: 300 > 256 | table x: key of 300 bits (dst 48), the target allows 256",
        "tables tables: 2 > 1 | tables: needs 2, the target has 1",
        "capacity exact entries: 5000 > 4096 | exact entries: needs 5000, the target holds 4096",
        "multicast-groups multicast groups: 5 > 2 | multicast groups: needs 5, the target has 2",
      ],
    },
  ])("$name", ({ req, target, want }) => {
    expect(checkFit(req, profile(target)).map(brief)).toEqual(want);
  });

  test.each([
    {
      spec: "examples/filter-chain/network.yaml",
      target: "asic-example",
      want: { m3: ["match-kind chain_m3_receive"] },
    },
    { spec: "examples/filter-chain/network.yaml", target: "bmv2", want: {} },
    { spec: "examples/ip-router/network.yaml", target: "asic-example", want: {} },
  ])("$spec on $target", ({ spec, target, want }) => {
    const p = loadProfile(target);
    const got: Record<string, string[]> = {};
    for (const r of machineRequirements(compile(loadSpec(spec)))) {
      const v = checkFit(r, p);
      if (v.length > 0) got[r.machine] = v.map((x) => `${x.limit} ${x.subject}`);
    }
    expect(got).toEqual(want);
  });

  test("describeUsage lists tables and what is used, against the limits", () => {
    const req = machine({ tables: [table({ size: 100 }), table({ kind: "lpm", size: 7 })], multicastGroups: mcast(1) });
    expect(
      describeUsage(usage(req), profile({ capacity: { exact: INF, lpm: 8, ternary: 0, range: 0, optional: 0 } })),
    ).toBe("tables 2/8, exact entries 100/unlimited, lpm entries 7/8, multicast groups 1/2");
  });
});
