// src/analysis/region-walk.ts: a table write's cut of the class diagram and its count of the new classes' headers in
// one walk. Checked against what does not share its code: the new diagram's terminals counted over the whole diagram
// (Bdd.countsUnder), each terminal outside the region left where it was, and each new terminal's first path a header
// that reaches it. Counts are exact whether the doubles hold them (shares of a few bits) or not (a share of 2^-1 +
// 2^-100 needs 100 bits: counted again as BigInts).

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Bdd, FALSE, TRUE } from "../../src/analysis/bdd.js";
import { mapRegion } from "../../src/analysis/region-walk.js";

/** A random multi-terminal diagram over `vars` variables with the leaves `leaves`: built from the bottom, each node
 * testing a variable below its children's. */
function diagram(b: Bdd, vars: number, leaves: readonly number[], picks: readonly number[]): number {
  let layer = [...leaves];
  let k = 0;
  const pick = (): number => picks[k++ % picks.length] ?? 0;
  for (let v = vars - 1; v >= 0; v--) {
    if (pick() % 3 === 0) continue;
    layer = layer.map(() => b.mk(v, layer[pick() % layer.length] ?? FALSE, layer[pick() % layer.length] ?? FALSE));
  }
  return layer[0] ?? FALSE;
}

interface Case {
  readonly name: string;
  readonly vars: number;
  /** Makes the class diagram and the region (a boolean diagram) in `b` over leaves `leaves`. */
  readonly make: (b: Bdd, leaves: readonly number[]) => { root: number; region: number };
}

const deep = 120;
const cases: Case[] = [
  {
    name: "a leaf by a path of 1 variable and one of 100: 2^-1 + 2^-100 of the headers, past a double",
    vars: deep,
    make: (b, [x = 0, y = 0]) => {
      let chain = x;
      for (let v = 99; v >= 1; v--) chain = b.mk(v, y, chain);
      return { root: b.mk(0, x, chain), region: TRUE };
    },
  },
  {
    name: "the region half the headers (variable 3 set), a diagram of two leaves",
    vars: 8,
    make: (b, [x = 0, y = 0]) => ({ root: b.mk(2, x, b.mk(5, y, x)), region: b.mk(3, FALSE, TRUE) }),
  },
  {
    name: "no header in the region",
    vars: 8,
    make: (b, [x = 0, y = 0]) => ({ root: b.mk(1, x, y), region: FALSE }),
  },
];

/** The new terminals `mapRegion` made (each old leaf `l` in the region becomes `made.get(l)`), checked. */
function check(b: Bdd, vars: number, root: number, region: number, leaves: readonly number[]): void {
  const made = new Map(leaves.map((l) => [l, b.terminal()]));
  const before = b.countsUnder(root, vars);
  const cut = mapRegion(b, root, region, (t) => (t === TRUE ? (l) => made.get(l) ?? l : undefined), vars, "test");
  const after = b.countsUnder(cut.root, vars);
  const inRegion = b.countsUnder(region, vars).get(TRUE) ?? 0n;
  let moved = 0n;
  for (const [old, t] of made) {
    const got = cut.reached.get(t);
    expect(got?.count ?? 0n, `leaf ${old}`).toBe(after.get(t) ?? 0n);
    // Old headers: those it had, less those that moved.
    expect((after.get(old) ?? 0n) + (got?.count ?? 0n)).toBe(before.get(old) ?? 0n);
    moved += got?.count ?? 0n;
    if (got === undefined) continue;
    // Its first path a header that reaches it, in the region.
    const set = new Set(got.path);
    let n = cut.root;
    while (!b.isTerminal(n)) n = set.has(b.variable(n)) ? b.high(n) : b.low(n);
    expect(n).toBe(t);
    let q = region;
    while (!b.isTerminal(q)) q = set.has(b.variable(q)) ? b.high(q) : b.low(q);
    expect(q).toBe(TRUE);
  }
  expect(moved).toBe(inRegion);
}

describe("mapRegion: the region's leaves made again, their headers counted in the same walk", () => {
  it.each(cases)("$name", ({ vars, make }) => {
    const b = new Bdd();
    const leaves = [b.terminal(), b.terminal()];
    const { root, region } = make(b, leaves);
    check(b, vars, root, region, leaves);
  });

  it("random diagrams and regions, over 40 and over 120 variables", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(40, deep),
        fc.array(fc.nat(1000), { minLength: 8, maxLength: 64 }),
        fc.array(fc.nat(1000), { minLength: 8, maxLength: 64 }),
        (vars, picks, regionPicks) => {
          const b = new Bdd();
          const leaves = [b.terminal(), b.terminal(), b.terminal()];
          const root = diagram(b, vars, leaves, picks);
          const region = diagram(b, vars, [FALSE, TRUE], regionPicks);
          check(b, vars, root, region, leaves);
        },
      ),
      { numRuns: 200, seed: 30 },
    );
  });
});
