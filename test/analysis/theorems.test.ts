// The model's theorems, held to the analysis (seed §2.7, §3.3, §5.1, §5.3):
//
// - effectivelyReachable ⊆ reachable, and a part's relation ⊆ its
//   composition's (Figure 6 and Figure 9), on the random descriptions of the
//   differential tests, composed ones included;
// - Bridging Closure: a bridged set is equivalent to the network that merges it;
// - hub and spoke: spokes whose only link is to a hub that forwards nothing do
//   not reach each other, and each reaches the hub;
// - a one-way ring whose members pass on what is not theirs is fully reachable.
//
// More cases: STRATA_ANALYZE_RUNS=300 npx vitest run test/analysis/theorems.test.ts

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Analysis } from "../../src/analysis/analysis.js";
import { computeRelations, report } from "../../src/analysis/properties.js";
import { equivalence } from "../../src/analysis/queries.js";
import { compile } from "../../src/control/compile.js";
import { loadSpec } from "../../src/description/load.js";
import { boundedAnalysis } from "./helpers/bounded.js";
import { compileText, specRecipe, specText } from "../pipeline/helpers/cases.js";
import { composedRecipe, composedText } from "../pipeline/helpers/composed.js";

const RUNS = Number(process.env["STRATA_ANALYZE_RUNS"] ?? 10);

/** The inclusion properties of a description's report that fail, in words. */
function failedInclusions(text: string): string[] | undefined {
  const c = compileText(text);
  if (c === undefined) return undefined;
  const a = boundedAnalysis(c);
  if (a === undefined) return undefined;
  const rep = report(a);
  return rep.inclusions.filter((p) => !p.holds).map((p) => `${p.name}: ${p.counterexamples.join("; ")}`);
}

describe("inclusions: effective ⊆ reachable, a part ⊆ its composition (seed Figure 9)", () => {
  const cases: { name: string; text: fc.Arbitrary<string> }[] = [
    { name: "random descriptions", text: specRecipe.map((r) => specText(r)) },
    { name: "layered, subducted and bridged descriptions", text: composedRecipe.map((r) => composedText(r)) },
  ];
  it.each(cases)(
    "$name",
    ({ text }) => {
      let analysed = 0;
      fc.assert(
        fc.property(text, (t) => {
          const failed = failedInclusions(t);
          if (failed === undefined) return;
          analysed++;
          expect(failed, t).toEqual([]);
        }),
        { numRuns: RUNS },
      );
      expect(analysed).toBeGreaterThan(0);
    },
    600_000,
  );
});

describe("Bridging Closure (seed §5.1): a bridged set ≡ the network that merges it", () => {
  const cases = [{ bridged: "examples/bridged-lans/network.yaml", merged: "examples/bridged-lans/merged.yaml" }];
  it.each(cases)("$bridged ≡ $merged", ({ bridged, merged }) => {
    const a = new Analysis(compile(loadSpec(bridged)));
    const b = new Analysis(compile(loadSpec(merged)), { spaces: a.spaces });
    expect(equivalence(a, b)).toMatchObject({ holds: true, reachable: [], effective: [] });
  });
});

/** A hub and `n` spokes in network `star` of the cna design: spokes send every header to the hub; the hub forwards
 * none. */
function hubAndSpoke(n: number, spokeRows: readonly number[]): string {
  const spokes = Array.from({ length: n }, (_, i) => `s${i + 1}`);
  const members = [`      hub: { name: 100 }`, ...spokes.map((s, i) => `      ${s}: { name: ${i + 1} }`)];
  const links = spokes.map((s, i) => `      - { from: ${s}.1, to: hub.${i + 1}, mode: two-way }`);
  const tables = [
    `      hub:\n        acquire: [ { do: receive } ]\n        receive: [ { do: deliver } ]`,
    ...spokes.map((s, i) => {
      // Some spokes write rows for other spokes' names first: still only to the hub.
      const extra = (spokeRows[i] ?? 0) % n;
      const rows = extra === 0 ? "" : `{ match: { dst: ${extra} }, out: 1 }, `;
      return (
        `      ${s}:\n        acquire: [ { match: { dst: ${i + 1} }, do: receive } ]\n` +
        `        receive: [ { do: deliver } ]\n        forward: [ ${rows}{ out: 1 } ]`
      );
    }),
  ];
  return (
    `networks:\n  star:\n    header: cna\n    members:\n${members.join("\n")}\n` +
    `    links:\n${links.join("\n")}\n    tables:\n${tables.join("\n")}\n`
  );
}

/** A one-way ring of `n` members: each takes what is addressed to it and passes everything else on. */
function oneWayRing(n: number): string {
  const ms = Array.from({ length: n }, (_, i) => `m${i}`);
  const members = ms.map((m, i) => `      ${m}: { name: ${i + 1} }`);
  const links = ms.map((m, i) => `      - { from: ${m}.1, to: m${(i + 1) % n}.0 }`);
  const tables = ms.map(
    (m, i) =>
      `      ${m}:\n        acquire: [ { match: { dst: ${i + 1} }, do: receive }, { do: forward } ]\n` +
      `        forward: [ { out: 1 } ]\n        receive: [ { do: deliver } ]`,
  );
  return (
    `networks:\n  ring:\n    header: cna\n    members:\n${members.join("\n")}\n` +
    `    links:\n${links.join("\n")}\n    tables:\n${tables.join("\n")}\n`
  );
}

function relationOf(text: string): { a: Analysis; reaches: (m0: string, m1: string) => boolean; fully: boolean } {
  const c = compileText(text);
  if (c === undefined) throw new Error(`does not compile:\n${text}`);
  const a = new Analysis(c);
  const r = computeRelations(a);
  const comp = a.components[0];
  const rel = comp === undefined ? undefined : r.relation.get(comp);
  if (rel === undefined) throw new Error("no relation");
  const index = (name: string): number => a.memberNamed(name)?.index ?? -1;
  return { a, reaches: (m0, m1) => rel.reaches(index(m0), index(m1)), fully: rel.missingPairs(0).count === 0 };
}

describe("the model's sanity theorems (seed §2.7)", () => {
  it("hub and spoke: spokes do not reach each other; each reaches the hub", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 12 }),
        fc.array(fc.nat(20), { minLength: 12, maxLength: 12 }),
        (n, rows) => {
          const { reaches } = relationOf(hubAndSpoke(n, rows));
          for (let i = 1; i <= n; i++) {
            expect(reaches(`star.s${i}`, "star.hub")).toBe(true);
            for (let j = 1; j <= n; j++) if (i !== j) expect(reaches(`star.s${i}`, `star.s${j}`)).toBe(false);
          }
        },
      ),
      { numRuns: RUNS * 2 },
    );
  });

  it("a one-way ring is fully reachable", () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 16 }), (n) => {
        const { fully, reaches } = relationOf(oneWayRing(n));
        expect(fully).toBe(true);
        expect(reaches("ring.m0", `ring.m${n - 1}`)).toBe(true);
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it.each([
    {
      name: "examples/one-way-ring is fully reachable",
      file: "examples/one-way-ring/network.yaml",
      property: "Fully_reachable",
      holds: true,
    },
    {
      name: "examples/hub-and-spoke's spokes, which forward nothing, reach no one",
      file: "examples/hub-and-spoke/network.yaml",
      property: "Fully_reachable",
      holds: false,
    },
  ])("$name", ({ file, property, holds }) => {
    const rep = report(new Analysis(compile(loadSpec(file))));
    expect(rep.components[0]?.properties.find((p) => p.name === property)?.holds).toBe(holds);
  });
});
