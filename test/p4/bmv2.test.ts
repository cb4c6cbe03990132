// Every example's export forwards on bmv2 as `strata run` does: one simple_switch per machine,
// runtime_cli.txt loaded (without an error), the example's inputs injected where the manifest
// puts them, the switches chained along the links between machines; every packet on every link
// a switch port carries, and every delivery (packet-in on port 255), byte for byte
// (helpers/on-bmv2.ts).

import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { compile } from "../../src/control/compile.js";
import { loadSpec } from "../../src/description/load.js";
import { EXAMPLE_SPECS, exampleInputs, exportSpec, ROOT } from "./helpers/examples.js";
import { compare, countOf, runOnBmv2, Wiring } from "./helpers/on-bmv2.js";
import { compileAll } from "./helpers/p4c.js";
import { readInputs, strataRun } from "./helpers/strata-side.js";
import { findP4Tools, P4_REQUIRED } from "./helpers/toolchain.js";

const tools = findP4Tools();
const skip = !P4_REQUIRED && "missing" in tools;
const why = "missing" in tools ? ` (skipped: ${tools.missing})` : "";

describe.skipIf(skip)(`every example on bmv2 is strata run${why}`, () => {
  beforeAll(async () => {
    if ("missing" in tools) throw new Error(tools.missing);
    // Every machine of every example at once, one compiler per core (the tests below find them compiled).
    await compileAll(tools, EXAMPLE_SPECS.flatMap((spec) => exportSpec(spec).map((ex) => ex.files["main.p4"] as string)), "bm2");
  }, 600_000);

  it.each(EXAMPLE_SPECS)("%s", async (spec) => {
    if ("missing" in tools) throw new Error(tools.missing);
    const compiled = compile(loadSpec(join(ROOT, spec)));
    const exports = exportSpec(spec);
    const inputs = exampleInputs(spec);
    const strata = await strataRun(join(ROOT, spec), inputs);
    const observable = new Wiring(compiled, exports).observableCaptures();
    const bmv2 = await runOnBmv2(tools, compiled, exports, readInputs(compiled, inputs), { expected: countOf(strata, observable) });
    expect(compare(strata, bmv2, observable)).toEqual({});
    expect(bmv2.bounded).toBe(false);
    // Something was compared: every example has a link between machines, or delivers.
    expect(countOf(strata, observable)).toBeGreaterThan(0);
  });
});
