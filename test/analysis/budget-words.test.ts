// Work past the budget after the classes are built — a class put in words
// (src/analysis/class-words.ts), whose diagram work cannot stop half-way — ends
// no query, command or page with a BudgetStop: the class is said by one of its
// headers, and the stop is the budget's, which the answer reports. The budget is
// of diagram nodes, set between what building the classes took and what the
// words take (measured on the same description first): no clock.

import { describe, expect, test } from "vitest";
import { Analysis } from "../../src/analysis/analysis.js";
import { Budget } from "../../src/analysis/budget.js";
import { computeRelations, report } from "../../src/analysis/properties.js";
import { blackHoles, cheapFindings, loops, routes } from "../../src/analysis/queries.js";
import { compile } from "../../src/control/compile.js";
import type { CompiledSpec } from "../../src/control/compiled.js";
import { loadSpec, parseSpec } from "../../src/description/load.js";
import { analysisData } from "../../src/view/analysis-data.js";
import { ternaryAcl } from "./helpers/generate.js";

const ACL = (): CompiledSpec => compile(parseSpec(ternaryAcl(8), "acl-8.yaml"));
const LOOP = (): CompiledSpec => compile(loadSpec("test/fixtures/analysis/loop.yaml"));
const HOLE = (): CompiledSpec => compile(loadSpec("test/fixtures/analysis/black-hole.yaml"));

/** What each case asks of an analysis built within `budget`, as text (a BudgetStop would end it). */
const CASES: readonly { name: string; spec: () => CompiledSpec; ask: (a: Analysis) => string }[] = [
  {
    name: "analyze --from ip:h1 --to ip:r on a ternary ACL (routes)",
    spec: ACL,
    ask: (a) => JSON.stringify(routes(a, { kind: "self", member: 0 }, "ip:h1", 1, { hopLimit: 64, budget: 1e6 })),
  },
  { name: "analyze --loops", spec: LOOP, ask: (a) => JSON.stringify(loops(a, computeRelations(a))) },
  { name: "analyze --black-holes", spec: HOLE, ask: (a) => JSON.stringify(blackHoles(a, computeRelations(a))) },
  { name: "analyze (the properties' counterexamples)", spec: LOOP, ask: (a) => JSON.stringify(report(a)) },
  { name: "check (the loops it warns of)", spec: LOOP, ask: (a) => JSON.stringify(cheapFindings(a)) },
];

/** Diagram nodes once the classes are built, and once `ask` has answered too. */
function nodesAround(spec: CompiledSpec, ask: (a: Analysis) => string): { built: number; answered: number } {
  const a = new Analysis(spec);
  const built = a.spaces.all().reduce((n, s) => n + s.nodes, 0);
  ask(a);
  return { built, answered: a.spaces.all().reduce((n, s) => n + s.nodes, 0) };
}

describe("a class put in words past the budget: said by one of its headers, the stop reported", () => {
  test.each(CASES)("$name", ({ spec, ask }) => {
    const { built, answered } = nodesAround(spec(), ask);
    // The words take diagram nodes of their own, or the case tests nothing.
    expect(answered).toBeGreaterThan(built + 1);
    const budget = new Budget({ maxNodes: built + Math.floor((answered - built) / 2) });
    const a = new Analysis(spec(), { budget });
    expect(a.built).toBe(true);
    const text = ask(a);
    expect(budget.stopped).toMatchObject({ limit: "nodes" });
    expect(text).toMatch(/like [a-z]+=/);
  });

  test("view --analysis: the page's analysis says it was cut short", () => {
    expect(analysisData(LOOP(), 200_000, new Budget()).cut).toBeUndefined();
    // The page words the properties' counterexamples first, as analyze does.
    const { built, answered } = nodesAround(LOOP(), (a) => JSON.stringify(report(a)));
    const data = analysisData(LOOP(), 200_000, new Budget({ maxNodes: built + Math.floor((answered - built) / 2) }));
    expect(data).toMatchObject({ ok: false, cut: expect.stringMatching(/^cut short by its nodes limit while /) });
  });
});
