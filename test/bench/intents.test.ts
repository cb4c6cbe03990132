// The intents scenarios measure what they say: the generated routed fat-tree
// (bench/intents.ts) is one whose analysis holds every property, its demands met,
// with one core or two; and the links its failure scenario takes down exist.

import { describe, expect, test } from "vitest";
import { routedFatTreeSpec } from "../../bench/intents.js";
import { Analysis } from "../../src/analysis/analysis.js";
import { report } from "../../src/analysis/properties.js";
import { compile } from "../../src/control/compile.js";
import { parseSpec } from "../../src/description/load.js";

describe("bench/intents.ts: the routed fat-tree", () => {
  test.each([1, 2])("%i core(s), small: every property holds, every demand met", (cores) => {
    const r = report(new Analysis(compile(parseSpec(routedFatTreeSpec(2, 2, 2, true, cores), "r.yaml"))));
    const failing = [...r.components.flatMap((c) => c.properties), r.layering].filter((p) => !p.holds);
    expect(failing.map((p) => `${p.name}: ${p.counterexamples.join("; ")}`)).toEqual([]);
    expect(r.components[0]?.properties.find((p) => p.name === "Network_satisfies_communication_demands")?.note).toBe(
      `${(14 + cores) * (13 + cores)} stated pairs`,
    );
  });

  test("the links the failure scenario takes down are the network's", () => {
    const net = parseSpec(routedFatTreeSpec(16, 8, 8, false, 2), "r.yaml").networks[0];
    const names = new Set(net?.links.map((l) => l.name));
    expect(net?.members).toHaveLength(1170);
    expect(names.has("e1.9-a1.1") && names.has("a16.9-core.16") && names.has("a16.10-core2.16")).toBe(true);
  });
});
