// `strata deploy` onto p4lang's simple_switch_grpc (bmv2 with a P4Runtime server), one switch per
// machine started with no program: the deploy compiles each machine's program with p4c-bm2-ss,
// sets it and writes the entries; a second deploy writes nothing; then the example's inputs go
// through the switches, chained along the links between machines as the bmv2 tests chain them
// (test/p4/helpers/on-bmv2.ts), and every packet on a link and every delivery is `strata run`'s,
// byte for byte. Skipped where the P4 toolchain is missing, unless STRATA_REQUIRE_P4=1.

import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compile } from "../../src/control/compile.js";
import { loadSpec } from "../../src/description/load.js";
import { desiredState } from "../../src/deploy/desired.js";
import { type CachedToolchain, cachedToolchain, withToolchain } from "../p4/helpers/cached-p4c.js";
import { EXAMPLE_SPECS, exampleInputs, exportSpec, ROOT } from "../p4/helpers/examples.js";
import { compare, countOf, runOnBmv2, Wiring } from "../p4/helpers/on-bmv2.js";
import { cutShortIn, readInputs, strataRun } from "../p4/helpers/strata-side.js";
import { findP4Tools, P4_REQUIRED } from "../p4/helpers/toolchain.js";
import { HOP_LIMIT_MAX } from "../../src/wasm/runner.js";
import { HANG_MS } from "../helpers/wait.js";
import { deploy } from "./helpers.js";

const tools = findP4Tools();
const skip = !P4_REQUIRED && "missing" in tools;
const why = "missing" in tools ? ` (skipped: ${tools.missing})` : "";

/** The example one of whose programs (its first machine's) deploy compiles with the real p4c-bm2-ss (the smallest:
 * three machines); its other programs, as every other example's, come from the cache. One is enough to run deploy's own
 * compilation; each is about 0.8 s of CPU. */
const COMPILED_BY_DEPLOY = "examples/ip-router/network.yaml";

describe.skipIf(skip)(`every example deployed onto simple_switch_grpc forwards as strata run${why}`, () => {
  // deploy's p4c-bm2-ss answers from the tests' p4c cache (helpers/cached-p4c.ts): ~70 programs, ~50 s of CPU a run.
  // One program is left to it, so that deploy's own compilation runs here (and in no other test).
  let p4c: CachedToolchain | undefined;
  beforeAll(() => {
    if (!("missing" in tools)) p4c = cachedToolchain(tools);
  });
  afterAll(() => p4c?.close());

  it.each(EXAMPLE_SPECS)("%s", async (spec) => {
    if ("missing" in tools || p4c === undefined) throw new Error("missing" in tools ? tools.missing : "no p4c");
    const file = join(ROOT, spec);
    const compiled = compile(loadSpec(file));
    const toolchain = p4c;
    const programs = desiredState(compiled, file).map((d) => d.program);
    await toolchain.add(spec === COMPILED_BY_DEPLOY ? programs.slice(1) : programs);
    const exports = exportSpec(spec);
    const inputs = exampleInputs(spec);
    let strata = await strataRun(file, inputs);
    // A loop between machines (one-way-ring): strata follows it as far as its largest hop limit, the switches further.
    const cutShort = cutShortIn(strata.drops) > 0;
    if (cutShort) strata = await strataRun(file, inputs, ["--hop-limit", String(HOP_LIMIT_MAX)]);
    const observable = new Wiring(compiled, exports).observableCaptures();
    const bmv2 = await runOnBmv2(tools, compiled, exports, readInputs(compiled, inputs), {
      strata,
      observable,
      limits: { cutShort },
      loop: cutShort,
      deploy: async (addresses) => {
        const targets = [...addresses].flatMap(([machine, address]) => ["--target", `${machine}=${address}`]);
        // A switch on a busy machine may take its time to answer: a hang after HANG_MS, not a slow start.
        targets.push("--timeout", String(HANG_MS / 1000));
        const first = await withToolchain(toolchain.root, () => deploy([file, ...targets]));
        expect(first.err).toBe("");
        expect(first.code).toBe(0);
        expect(first.out).toMatch(/pipeline set \(the device has no pipeline\)/);
        const again = await deploy([file, ...targets]);
        expect(again.err).toBe("");
        expect(again.code).toBe(0);
        expect(again.out.split("\n").filter((l) => l !== "" && !l.endsWith(": converged, nothing to write"))).toEqual(
          [],
        );
      },
    });
    expect(compare(strata, bmv2, observable, { cutShort })).toEqual({});
    expect(countOf(strata, observable)).toBeGreaterThan(0);
  });
});
