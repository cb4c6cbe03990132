// Every machine's main.p4, of every example and of every fixture description that exports,
// compiles with the reference compiler: `p4c-bm2-ss --arch v1model` (bmv2) and `p4test` (the
// front and mid end), with no error and no warning but those docs/p4-export.md lists and
// justifies ("What p4c says"). All programs are compiled at once, one compiler per core.
//
// p4c-bm2-ss compiles every program; p4test only as few as hold, between them, every line any
// program has (P4TEST_PROGRAMS below says why that proves as much), unless STRATA_P4TEST_ALL=1.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ALL_MACHINES, EXAMPLE_SPECS, EXPORTING_FIXTURES, ROOT } from "./helpers/examples.js";
import type { MachineExport } from "../../src/p4/export.js";
import { type Compiled, compileP4, diagnostics } from "../../bench/p4/p4c.js";
import { findP4Tools, P4_REQUIRED } from "./helpers/toolchain.js";

const tools = findP4Tools();
const skip = !P4_REQUIRED && "missing" in tools;
const why = "missing" in tools ? ` (skipped: ${tools.missing})` : "";

const MACHINES = ALL_MACHINES;

/** A program's lines as p4test sees them: comments left out, its members' names and the @id numbers made alike. */
function constructs(ex: MachineExport): Set<string> {
  let text = (ex.files["main.p4"] as string).replace(/\/\/.*$/gm, "");
  for (const m of ex.manifest.members)
    for (const name of [m.p4, m.member]) text = text.replace(wholeName(name), "MEMBER");
  text = text.replace(/@id\(0x[0-9a-f]+\)/g, "@id(ID)");
  return new Set(text.split("\n").flatMap((l) => (l.trim() === "" ? [] : [l.trim()])));
}

/** `name` where it is not part of a longer name ("lanA_h1" in M_lanA_h1 and lanA_h1_acquire, not in lanA_h10). */
const wholeName = (name: string): RegExp =>
  new RegExp(`(?<![A-Za-z0-9])${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![A-Za-z0-9])`, "g");

/** Few programs that hold, between them, every construct of `programs` (greedy: the one that adds most, first). */
function covering(programs: readonly Set<string>[]): Set<number> {
  const left = new Set(programs.flatMap((p) => [...p]));
  const chosen = new Set<number>();
  while (left.size > 0) {
    const gain = programs.map((p) => [...p].filter((l) => left.has(l)).length);
    const best = gain.indexOf(Math.max(...gain));
    chosen.add(best);
    for (const l of programs[best] ?? []) left.delete(l);
  }
  return chosen;
}

/**
 * The programs p4test compiles. p4c-bm2-ss runs p4c's front end — parser, type checker,
 * constant folding and every warning they give — on every program; what p4test adds is p4c's
 * target-independent mid end, whose passes work on the program's constructs, not on the names
 * strata gives a description's members or the ids it numbers objects with. So p4test runs on
 * as few programs as hold every line any program has, those made alike: each design, table,
 * action and parser state strata writes goes through it at least once. STRATA_P4TEST_ALL=1
 * runs it on every program.
 */
const P4TEST_PROGRAMS: ReadonlySet<number> =
  process.env["STRATA_P4TEST_ALL"] === "1"
    ? new Set(MACHINES.map((_, i) => i))
    : covering(MACHINES.map((m) => constructs(m.ex)));

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
    results = await Promise.all(
      MACHINES.map((m, i) =>
        compileP4(tools, m.ex.files["main.p4"] as string, P4TEST_PROGRAMS.has(i) ? "both" : "bm2"),
      ),
    );
  }, 600_000);

  it("covers the examples and the fixtures that export", () => {
    expect(EXPORTING_FIXTURES).toContain("test/fixtures/specs/p4-features.yaml");
    expect(new Set(MACHINES.map((m) => m.spec)).size).toBe(EXAMPLE_SPECS.length + EXPORTING_FIXTURES.length);
  });

  it("p4test's programs hold every line any program has, and every design a program uses", () => {
    const chosen = MACHINES.filter((_, i) => P4TEST_PROGRAMS.has(i));
    const lines = (ms: readonly { ex: MachineExport }[]): Set<string> =>
      new Set(ms.flatMap((m) => [...constructs(m.ex)]));
    const designs = (ms: readonly { ex: MachineExport }[]): Set<string> =>
      new Set(ms.flatMap((m) => m.ex.manifest.members.map((x) => x.design)));
    expect(lines(chosen)).toEqual(lines(MACHINES));
    expect(designs(chosen)).toEqual(designs(MACHINES));
  });

  it.each(
    MACHINES.map(
      (m, i) =>
        [
          `${m.spec} machine ${m.ex.manifest.machine}: p4c-bm2-ss${P4TEST_PROGRAMS.has(i) ? " and p4test" : ""}`,
          i,
        ] as const,
    ),
  )("%s, no error, no unjustified warning", (_, i) => {
    const r = results[i];
    expect(r).toBeDefined();
    if (r === undefined) return;
    const unjustified = (stderr: string): string[] =>
      diagnostics(stderr).filter((l) => !JUSTIFIED_WARNINGS.some((w) => w.pattern.test(l)));
    expect({ status: r.bm2.status, diagnostics: unjustified(r.bm2.stderr) }, r.bm2.stderr).toEqual({
      status: 0,
      diagnostics: [],
    });
    if (P4TEST_PROGRAMS.has(i))
      expect({ status: r.p4test.status, diagnostics: unjustified(r.p4test.stderr) }, r.p4test.stderr).toEqual({
        status: 0,
        diagnostics: [],
      });
    expect(r.json).toBeDefined();
  });

  it.each(JUSTIFIED_WARNINGS.map((w) => [w.quote, w.pattern] as const))(
    "docs/p4-export.md justifies “%s”, which p4c still gives",
    (quote, pattern) => {
      expect(DOC).toContain(quote);
      expect(results.some((r) => diagnostics(r.bm2.stderr).some((l) => pattern.test(l)))).toBe(true);
    },
  );
});
