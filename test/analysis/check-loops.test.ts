// strata check finds the loops without the relation's pairs: each class is
// walked once from what members pass on, and walked in full only when it loops
// (src/analysis/relations.ts, loopsOnly). It must find the loops the full
// relation finds, with the same paths, on the random descriptions of the
// differential tests, composed ones included.
//
// More cases: STRATA_ANALYZE_RUNS=300 npx vitest run test/analysis/check-loops.test.ts

import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { computeRelations } from "../../src/analysis/properties.js";
import { cheapFindings, loops } from "../../src/analysis/queries.js";
import { compileText, specRecipe, specText } from "../pipeline/helpers/cases.js";
import { composedRecipe, composedText } from "../pipeline/helpers/composed.js";
import { boundedAnalysis } from "./helpers/bounded.js";

/** Two routers that decrement the TTL; r2 sends back only a TTL of 255, which only r1's own packets have: they go
 * round once (the loop the random composed descriptions found, seed 1233424581, made small). */
const TTL_ONCE = readFileSync("test/fixtures/analysis/ttl-once.yaml", "utf8");

describe("strata check's loops are the full relation's, on descriptions written for it", () => {
  it.each([
    { name: "a loop only a sender's own TTL goes round (the TTL matched)", text: TTL_ONCE, loops: 1 },
    {
      name: "the same, where walks from other origins went through the loop's first state (seed 954156021)",
      text: readFileSync("test/fixtures/analysis/check-loops-954156021.yaml", "utf8"),
      loops: 1,
    },
  ])("$name", ({ text, loops: count }) => {
    const c = compileText(text);
    if (c === undefined) throw new Error("the description does not compile");
    const full = boundedAnalysis(c);
    const cheap = boundedAnalysis(c);
    if (full === undefined || cheap === undefined) throw new Error("not analysed");
    const expected = loops(full, computeRelations(full));
    expect(expected).toHaveLength(count);
    expect(cheapFindings(cheap).loops).toEqual(expected);
  });
});

const RUNS = Number(process.env["STRATA_ANALYZE_RUNS"] ?? 10);

describe("strata check's loops are the full relation's", () => {
  it.each([
    { name: "random descriptions", text: specRecipe.map((r) => specText(r)) },
    { name: "layered, subducted and bridged descriptions", text: composedRecipe.map((r) => composedText(r)) },
  ])(
    "$name",
    ({ name, text }) => {
      let analysed = 0;
      let looped = 0;
      fc.assert(
        fc.property(text, (t) => {
          const c = compileText(t);
          const full = c === undefined ? undefined : boundedAnalysis(c);
          const cheap = c === undefined ? undefined : boundedAnalysis(c);
          if (full === undefined || cheap === undefined) return;
          const expected = loops(full, computeRelations(full));
          analysed++;
          if (expected.length > 0) looped++;
          expect(cheapFindings(cheap).loops, t).toEqual(expected);
        }),
        { numRuns: RUNS },
      );
      console.log(`${name}: ${analysed} analysed, ${looped} with loops`);
      expect(analysed).toBeGreaterThan(0);
    },
    600_000,
  );
});
