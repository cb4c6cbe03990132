// A next hop changed (a modify: a row's action `out: 3` becomes `out: 4`) on the
// update path: LiveAnalysis.apply with the row's new action (RowChange.action)
// gives the relations an analysis computed afresh gives for the description
// with that row so written — on an LPM FIB held as a prefix trie
// (src/analysis/prefix-trie.ts) and on a ternary table of the same rows,
// composed row by row; the row in force, taken out and put back with its new
// action, and the default route's; and the LPM FIB under a ternary ACL, whose
// classes a write cuts where its region meets them (src/analysis/region-walk.ts).

import { describe, expect, it } from "vitest";
import { Analysis, type RowChange } from "../../src/analysis/analysis.js";
import { LiveAnalysis } from "../../src/analysis/live.js";
import { ComponentRelation } from "../../src/analysis/relations.js";
import type { CompiledSpec } from "../../src/control/compiled.js";
import { compileText } from "../pipeline/helpers/cases.js";
import { fibRouter } from "./helpers/generate.js";
import { relationView } from "./helpers/relation-view.js";

/** A write to the router's forward table: row `row` in force or not, with the next hop after its own when `retold`. */
interface Write {
  readonly row: number;
  readonly installed: boolean;
  readonly retold?: boolean;
}

const FIB = fibRouter(60, 0, 5, 14);
const TERNARY = FIB.replace("kind: lpm", "kind: ternary");
/** The FIB's default route (`{ out: 2 }`, the last row). */
const DEFAULT_ROW = 60;
/** The same number of prefixes under an ACL of 80 ternary rows (prefix pairs, protocols, port ranges). */
const UNDER_ACL = fibRouter(60, 80, 5, 14);

const cases: { name: string; text: string; writes: readonly (readonly Write[])[] }[] = [
  { name: "LPM trie: a prefix's next hop", text: FIB, writes: [[{ row: 7, installed: true, retold: true }]] },
  {
    name: "LPM trie: next hops of nested prefixes, one write each",
    text: FIB,
    writes: [[{ row: 3, installed: true, retold: true }], [{ row: 41, installed: true, retold: true }]],
  },
  {
    name: "LPM trie: a prefix taken out, then put back with another next hop",
    text: FIB,
    writes: [[{ row: 12, installed: false }], [{ row: 12, installed: true, retold: true }]],
  },
  {
    name: "LPM trie: the default route's next hop",
    text: FIB,
    writes: [[{ row: DEFAULT_ROW, installed: true, retold: true }]],
  },
  { name: "under an ACL: a prefix's next hop", text: UNDER_ACL, writes: [[{ row: 7, installed: true, retold: true }]] },
  {
    name: "under an ACL: next hops of nested prefixes, then one taken out and put back with another",
    text: UNDER_ACL,
    writes: [
      [{ row: 3, installed: true, retold: true }],
      [{ row: 41, installed: true, retold: true }],
      [{ row: 12, installed: false }],
      [{ row: 12, installed: true, retold: true }],
    ],
  },
  {
    name: "under an ACL: the default route's next hop",
    text: UNDER_ACL,
    writes: [[{ row: DEFAULT_ROW, installed: true, retold: true }]],
  },
  { name: "ternary: a row's next hop", text: TERNARY, writes: [[{ row: 7, installed: true, retold: true }]] },
  {
    name: "ternary: two rows' next hops in one apply",
    text: TERNARY,
    writes: [
      [
        { row: 3, installed: true, retold: true },
        { row: 41, installed: true, retold: true },
      ],
    ],
  },
  {
    name: "ternary: a row given a new next hop while out, then put back",
    text: TERNARY,
    writes: [[{ row: 7, installed: false, retold: true }], [{ row: 7, installed: true }]],
  },
];

/** The next hop after `out` among the router's (2..5). */
const nextHop = (out: number): number => ((out - 1) % 4) + 2;

/** `text` with the forward table's rows `retold` given their next hop after the one written. */
function retell(text: string, retold: ReadonlySet<number>): string {
  const lines = text.split("\n");
  const first = lines.indexOf("        forward:") + 3;
  for (const row of retold) {
    const k = first + row;
    lines[k] = (lines[k] ?? "").replace(/out: (\d+)/, (_, out: string) => `out: ${nextHop(Number(out))}`);
  }
  return lines.join("\n");
}

function compiled(text: string): CompiledSpec {
  const c = compileText(text);
  if (c === undefined) throw new Error("the description does not compile");
  return c;
}

describe("a next hop changed: LiveAnalysis.apply = an analysis afresh of the rows so written", () => {
  it.each(cases)("$name", ({ text, writes }) => {
    const live = new LiveAnalysis(compiled(text));
    const retold = new Set<number>();
    const installed = new Map<number, boolean>();
    for (const step of writes) {
      for (const w of step) if (w.retold === true) retold.add(w.row);
      // The rows' actions as the description with them retold reads them.
      const router = compiled(retell(text, retold)).members.find((m) => m.qualified === "ip.r");
      const rows = router?.tables.forward?.spec?.rows;
      const changes = step.map((w): RowChange => {
        installed.set(w.row, w.installed);
        const action = rows?.[w.row]?.action;
        if (action === undefined) throw new Error(`no forward row ${w.row}`);
        return { member: "ip.r", role: "forward", row: w.row, installed: w.installed, action };
      });
      const u = live.apply(changes);
      expect(u.rows).toBe(changes.length);
    }
    const fresh = new Analysis(compiled(retell(text, retold)), { spaces: live.analysis.spaces });
    expect(fresh.built).toBe(true);
    fresh.apply([...installed].map(([row, on]) => ({ member: "ip.r", role: "forward" as const, row, installed: on })));
    for (const k of fresh.components) {
      const updated = [...live.relations.relation].find(([c]) => c.name === k.name)?.[1];
      if (updated === undefined) throw new Error(`no relation for ${k.name}`);
      expect(relationView(live.analysis, updated)).toEqual(relationView(fresh, new ComponentRelation(fresh, k)));
    }
  });
});
