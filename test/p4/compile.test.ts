// Every machine's main.p4, of every example and of every fixture description that exports,
// compiles with the reference compiler: `p4c-bm2-ss --arch v1model` (bmv2) and `p4test` (the
// front and mid end), with no error and no warning but those docs/p4-export.md lists and
// justifies ("What p4c says"). All programs are compiled at once, one compiler per core.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ALL_MACHINES, EXAMPLE_SPECS, EXPORTING_FIXTURES, ROOT } from "./helpers/examples.js";
import { type Compiled, compileAll, diagnostics } from "../../bench/p4/p4c.js";
import { findP4Tools, P4_REQUIRED } from "./helpers/toolchain.js";

const tools = findP4Tools();
const skip = !P4_REQUIRED && "missing" in tools;
const why = "missing" in tools ? ` (skipped: ${tools.missing})` : "";

const MACHINES = ALL_MACHINES;

/**
 * The warnings p4c gives that docs/p4-export.md justifies: the message (the table's name left
 * out) as the docs quote it.
 */
export const JUSTIFIED_WARNINGS: readonly { readonly quote: string; readonly pattern: RegExp }[] = [
  {
    quote: "Target does not support default_action for … (due to action profiles)",
    pattern: new RegExp(
      [
        String.raw`\[--Wwarn=unsupported\] warning: Target does not support`,
        String.raw` default_action for StrataIngress\.\w+_transmit \(due to action`,
        String.raw` profiles\)$`,
      ].join(""),
    ),
  },
];

const DOC = readFileSync(join(ROOT, "docs/p4-export.md"), "utf8");

describe.skipIf(skip)(`every export compiles with p4c${why}`, () => {
  let results: Compiled[] = [];
  beforeAll(async () => {
    if ("missing" in tools) throw new Error(tools.missing);
    results = await compileAll(
      tools,
      MACHINES.map((m) => m.ex.files["main.p4"] as string),
    );
  }, 600_000);

  it("covers the examples and the fixtures that export", () => {
    expect(EXPORTING_FIXTURES).toContain("test/fixtures/specs/p4-features.yaml");
    expect(new Set(MACHINES.map((m) => m.spec)).size).toBe(EXAMPLE_SPECS.length + EXPORTING_FIXTURES.length);
  });

  it.each(MACHINES.map((m, i) => [`${m.spec} machine ${m.ex.manifest.machine}`, i] as const))(
    "%s: p4c-bm2-ss and p4test, no error, no unjustified warning",
    (_, i) => {
      const r = results[i];
      expect(r).toBeDefined();
      if (r === undefined) return;
      const unjustified = (stderr: string): string[] =>
        diagnostics(stderr).filter((l) => !JUSTIFIED_WARNINGS.some((w) => w.pattern.test(l)));
      expect({ status: r.bm2.status, diagnostics: unjustified(r.bm2.stderr) }, r.bm2.stderr).toEqual({
        status: 0,
        diagnostics: [],
      });
      expect({ status: r.p4test.status, diagnostics: unjustified(r.p4test.stderr) }, r.p4test.stderr).toEqual({
        status: 0,
        diagnostics: [],
      });
      expect(r.json).toBeDefined();
    },
  );

  it.each(JUSTIFIED_WARNINGS.map((w) => [w.quote, w.pattern] as const))(
    "docs/p4-export.md justifies “%s”, which p4c still gives",
    (quote, pattern) => {
      expect(DOC).toContain(quote);
      expect(results.some((r) => diagnostics(r.bm2.stderr).some((l) => pattern.test(l)))).toBe(true);
    },
  );
});
