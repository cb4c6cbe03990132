// A large component's pairs held as rows of bits shared by the origins that
// reach the same members (src/analysis/pair-rows.ts, what a component of more
// than 4,096 members keeps) say what the per-pair counts say: the same pairs,
// tuples, members no one reaches, members that reach no one and pairs no class
// goes between — on random descriptions, composed ones too, and dense
// leaf-spines whose hosts are told a leaf at a time (src/analysis/origin-groups.ts).

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { leafSpineSpec } from "../../bench/leaf-spine.js";
import type { Analysis } from "../../src/analysis/analysis.js";
import { ComponentRelation } from "../../src/analysis/relations.js";
import { TEST_MS } from "../helpers/wait.js";
import { compileText, specRecipe, specText } from "../pipeline/helpers/cases.js";
import { composedRecipe, composedText } from "../pipeline/helpers/composed.js";
import { boundedAnalysis } from "./helpers/bounded.js";
import { hub } from "./helpers/generate.js";

const RUNS = Number(process.env["STRATA_ANALYZE_RUNS"] ?? 10);

/** What a relation says, its classes-between only as reached or not (rows keep one bit a pair). */
function said(a: Analysis, rel: ComponentRelation): object {
  const ms = rel.component.members;
  return {
    pairs: rel.pairs,
    tuples: rel.tuples,
    reaches: ms.flatMap((m0) => ms.filter((m1) => rel.reaches(m0, m1)).map((m1) => `${m0}>${m1}`)),
    between: ms.flatMap((m0) => ms.map((m1) => Math.min(1, rel.classesBetween(m0, m1)))),
    unreachable: rel.unreachable(),
    silent: rel.silent(),
    missing: rel.missingPairs(20),
    complete: rel.complete,
    members: a.members.length,
  };
}

/** Per component, where the rows part from the counts (none: []). */
function parts(text: string): string[] | undefined {
  const c = compileText(text);
  const a = c === undefined ? undefined : boundedAnalysis(c);
  if (a === undefined) return undefined;
  return a.components.flatMap((k) => {
    const counted = said(a, new ComponentRelation(a, k));
    const rows = said(a, new ComponentRelation(a, k, { countedMembers: 0 }));
    return JSON.stringify(counted) === JSON.stringify(rows) ? [] : [`${k.name}: ${JSON.stringify({ counted, rows })}`];
  });
}

describe("a large component's rows = its per-pair counts", () => {
  const cases: { name: string; text: fc.Arbitrary<string> }[] = [
    { name: "random descriptions", text: specRecipe.map((r) => specText(r)) },
    { name: "layered, subducted and bridged descriptions", text: composedRecipe.map((r) => composedText(r)) },
    {
      name: "dense leaf-spines",
      text: fc
        .record({ spines: fc.integer({ min: 1, max: 3 }), leaves: fc.integer({ min: 2, max: 5 }), hosts: fc.nat(4) })
        .map((s) => leafSpineSpec(s)),
    },
  ];
  it.each(cases)(
    "$name",
    ({ text }) => {
      let compared = 0;
      fc.assert(
        fc.property(text, (t) => {
          const p = parts(t);
          if (p === undefined) return;
          compared++;
          expect(p, t).toEqual([]);
        }),
        { numRuns: RUNS },
      );
      expect(compared).toBeGreaterThan(0);
    },
    TEST_MS,
  );

  it.each([
    ["a hub of 40 members", () => hub(40)],
    ["a dense leaf-spine of 76 members", () => leafSpineSpec({ spines: 4, leaves: 8, hosts: 8 })],
  ])("%s", (_, text) => {
    expect(parts(text())).toEqual([]);
  });
});
