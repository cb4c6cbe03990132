// Table writes to a FIB (a `kind: lpm` table held as a prefix trie, src/analysis/prefix-trie.ts):
//
// - one costs what its row touches, not the table's size (issue 30: one update of a 100k-prefix FIB in
//   microseconds): the work of taking a /24 out of a FIB and putting it back, counted as steps over the decision
//   diagrams (nodes read or made), is bounded by a constant, the same at 256 prefixes as at 8,192. Work, not time:
//   the machine may be busy;
// - every header is in a class after it, and its class's lookup finds the action of the row the longest prefix rule
//   picks, also where one write sends a class's headers two ways (a class split in three by one write once lost a
//   part).

import { afterEach, describe, expect, it, vi } from "vitest";
import type { Hit, IndexedRow } from "../../src/analysis/tables.js";
import { actionKey } from "../../src/analysis/behaviours.js";
import { Analysis, type RowChange } from "../../src/analysis/analysis.js";
import { Bdd } from "../../src/analysis/bdd.js";
import { LiveAnalysis } from "../../src/analysis/live.js";
import { ComponentRelation } from "../../src/analysis/relations.js";
import { TEST_MS } from "../helpers/wait.js";
import { compileText } from "../pipeline/helpers/cases.js";
import { fibRouter } from "./helpers/generate.js";

/**
 * Diagram steps one write may take: a /24's region is 24 levels of the destination's bits and what hangs there, cut
 * and counted in one walk (src/analysis/region-walk.ts), the headers moved to the class of their new fate, found made
 * rather than made again where a write made it before (src/analysis/fate-owner.ts): 356 steps at 256 prefixes, 366 at
 * 8,192 (4e1bf60: 510, each write new classes and nodes; 664 when a second walk of the new diagram counted the new
 * classes' headers).
 */
const MAX_STEPS = 400;
/** Writes measured per table (each row taken out, then put back). */
const WRITES = 10;

/** Counts the steps over every diagram: nodes read (variable, low, high, cofactors) and made or found (mk). */
function countSteps(): () => number {
  const spies = (["variable", "low", "high", "cofactors", "mk"] as const).map((m) => vi.spyOn(Bdd.prototype, m));
  return () => spies.reduce((n, s) => n + s.mock.calls.length, 0);
}

/** The /24 rows of the FIB (none is under another: /24 is the longest length), the first `n`. */
function slash24s(text: string, n: number): number[] {
  const rows = text.split("\n").filter((l) => l.includes("out:") && l.includes("match: { dst:"));
  return rows.flatMap((l, i) => (l.includes("/24 }") ? [i] : [])).slice(0, n);
}

interface Path {
  readonly name: string;
  /** Makes the analysis; returns what one write does. */
  readonly start: (text: string) => (change: RowChange) => void;
}

const paths: Path[] = [
  {
    name: "Analysis.apply, then ComponentRelation.update",
    start: (text) => {
      const c = compileText(text);
      if (c === undefined) throw new Error("the FIB does not compile");
      const a = new Analysis(c);
      const rel = new Map(a.components.map((k) => [k, new ComponentRelation(a, k)]));
      return (change) => {
        for (const [k, affected] of a.apply([change])) rel.get(k)?.update(affected);
      };
    },
  },
  {
    name: "LiveAnalysis.apply (serve --analyze)",
    start: (text) => {
      const c = compileText(text);
      if (c === undefined) throw new Error("the FIB does not compile");
      const live = new LiveAnalysis(c);
      return (change) => live.apply([change]);
    },
  },
];

describe("one FIB row written: work bounded whatever the table's size", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it.each(paths)(
    "$name",
    ({ start }) => {
      const perWrite: Record<number, number> = {};
      for (const prefixes of [256, 8192]) {
        const text = fibRouter(prefixes, 0, 5);
        const write = start(text);
        const [first, ...rows] = slash24s(text, WRITES + 1);
        // The first write counts each class's headers once (HeaderSpace.countHeaders; LiveAnalysis does it up front).
        write({ member: "ip.r", role: "forward", row: first ?? 0, installed: false });
        const steps = countSteps();
        for (const row of rows)
          for (const installed of [false, true]) write({ member: "ip.r", role: "forward", row, installed });
        perWrite[prefixes] = steps() / (2 * WRITES);
        vi.restoreAllMocks();
      }
      expect(perWrite[8192]).toBeLessThanOrEqual(MAX_STEPS);
      expect(perWrite[256]).toBeLessThanOrEqual(MAX_STEPS);
    },
    TEST_MS,
  );
});

/** Steps one FIB write may take under an ACL of ACL_ROWS.large rows: the /24's region, once (the destination's bits are
 * the diagram's first variables; with the source's first it was walked again in each of the ACL's source contexts that
 * meet it, a few dozen), its headers moved to the classes of their new fates (the classes there already: none walked
 * again), and what the ACL makes below the /24 found made where a write gave its headers that fate before (src/
 * analysis/fate-owner.ts, Refates): 658 steps (636 at 200 rows). At 4e1bf60 each write cut new classes, made the ACL's
 * ~510 nodes below the /24 again with new leaves and walked the new classes, each one's ACL rows read as bit vectors:
 * 1,612 steps (2,238 when the new diagram was walked again to count the new classes' headers).
 */
const MAX_ACL_STEPS = 700;
/** ACLs of these rows (8 times as many): before, each class a write walked again evaluated every ACL row's diagram at
 * its witness (10,105 steps a write at 1,600 rows, 1,700 at 200). */
const ACL_ROWS = { small: 200, large: 1600 };

describe("a FIB row written under a ternary ACL: work follows the classes the prefix meets, not the ACL's rows", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it.each(paths)(
    "$name",
    ({ start }) => {
      const perWrite: Record<number, number> = {};
      for (const acl of [ACL_ROWS.small, ACL_ROWS.large]) {
        const text = fibRouter(256, acl, 5);
        const write = start(text);
        const [first, ...rows] = slash24s(text, WRITES + 1);
        write({ member: "ip.r", role: "forward", row: first ?? 0, installed: false });
        const steps = countSteps();
        for (const row of rows)
          for (const installed of [false, true]) write({ member: "ip.r", role: "forward", row, installed });
        perWrite[acl] = steps() / (2 * WRITES);
        vi.restoreAllMocks();
      }
      const [small, large] = [perWrite[ACL_ROWS.small] ?? 0, perWrite[ACL_ROWS.large] ?? Infinity];
      expect(large).toBeLessThanOrEqual(MAX_ACL_STEPS);
      // Eight times the rows, not eight times the work (before: 5.9 times).
      expect(large).toBeLessThanOrEqual(3 * small);
    },
    TEST_MS,
  );
});

const NESTED = `networks:
  ip:
    header: ipv4
    members:
      h1: { name: 10.0.0.1 }
      a: { name: 10.0.1.1 }
      b: { name: 10.0.2.1 }
      r: { name: 10.0.0.254 }
    links:
      - { from: h1.1, to: r.1, mode: two-way }
      - { from: r.2, to: a.1, mode: two-way }
      - { from: r.3, to: b.1, mode: two-way }
    tables:
      h1:
        forward: [ { in: self, out: 1 } ]
      a: { acquire: [ { do: receive } ], receive: [ { do: deliver } ] }
      b: { acquire: [ { do: receive } ], receive: [ { do: deliver } ] }
      r:
        acquire: [ { do: forward } ]
        forward:
          kind: lpm
          rows:
            - { match: { dst: 20.0.0.0/8 }, out: 2 }
            - { match: { dst: 20.1.0.0/16 }, out: 3 }
            - { match: { dst: 20.1.2.0/24 }, out: 2 }
`;

const ip = (s: string): bigint => s.split(".").reduce((n, o) => n * 256n + BigInt(o), 0n);

// A class may hold headers that rows of one action take (the /8 and the /24 both say out 2): what its lookup finds is
// the action the header's longest prefix takes, the row being its witness's (docs/analysis.md).
describe("after FIB writes, each header's class meets its longest prefix's action", () => {
  const cases: {
    name: string;
    writes: { row: number; installed: boolean }[];
    /** Per destination, the row that wins for it (−1: none). */
    wins: Record<string, number>;
  }[] = [
    {
      name: "the /8 out: its /24 (out 2) and the rest of it (no row) leave one class two ways",
      writes: [{ row: 0, installed: false }],
      wins: { "20.1.2.5": 2, "20.5.0.1": -1, "20.1.9.9": 1, "30.0.0.1": -1 },
    },
    {
      name: "the /8 out and back",
      writes: [
        { row: 0, installed: false },
        { row: 0, installed: true },
      ],
      wins: { "20.1.2.5": 2, "20.5.0.1": 0, "20.1.9.9": 1, "30.0.0.1": -1 },
    },
    {
      name: "the /16 out: its /24 stays, the rest goes to the /8",
      writes: [{ row: 1, installed: false }],
      wins: { "20.1.2.5": 2, "20.5.0.1": 0, "20.1.9.9": 0, "30.0.0.1": -1 },
    },
    {
      name: "the /24 and the /8 out",
      writes: [
        { row: 2, installed: false },
        { row: 0, installed: false },
      ],
      wins: { "20.1.2.5": 1, "20.5.0.1": -1, "20.1.9.9": 1, "30.0.0.1": -1 },
    },
  ];
  it.each(cases)("$name", ({ writes, wins }) => {
    const c = compileText(NESTED);
    if (c === undefined) throw new Error("the description does not compile");
    const a = new Analysis(c);
    for (const w of writes) a.apply([{ member: "ip.r", role: "forward", ...w }]);
    const r = a.memberNamed("ip.r");
    const fib = r?.tables.forward;
    const space = r?.space;
    if (fib === undefined || space === undefined) throw new Error("no FIB");
    const found: Record<string, string> = {};
    const want: Record<string, string> = {};
    const actionOf = (row: IndexedRow | undefined): string => (row === undefined ? "miss" : actionKey(row.row.action));
    for (const [dst, row] of Object.entries(wins)) {
      const atom = space.classify(new Map([["dst", ip(dst)]]));
      const hits: Hit[] = [];
      if (atom >= 0) fib.lookup(1, atom, 1n, hits);
      found[dst] = atom < 0 ? "no class" : actionOf(hits[0]?.row);
      want[dst] = actionOf(fib.rows[row]);
    }
    expect(found).toEqual(want);
  });
});
