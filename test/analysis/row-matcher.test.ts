// A table lookup reads a class's rows by bit vectors (src/analysis/row-matcher.ts): for every class, in every table,
// the row it names first is the row the reference interpreter (src/model/rows.ts, winner: one packet, its patterns as
// written) picks for the class's witness header — on ternary ACLs of prefixes, protocols and masked ports, on masks
// that overlap every which way, on a range table (rows that are no cube, evaluated on their diagrams), and after FIB
// writes have cut new classes.

import { describe, expect, it } from "vitest";
import { Analysis, type RowChange } from "../../src/analysis/analysis.js";
import type { Hit } from "../../src/analysis/tables.js";
import { headerDesign } from "../../src/model/headers.js";
import { winner } from "../../src/model/rows.js";
import { compileText } from "../pipeline/helpers/cases.js";
import { edgeRouter, fibRouter, ternaryAcl } from "./helpers/generate.js";

/** FIB rows 0, 5, 10, … taken out (new classes cut where their prefixes are). */
const fibWrites = (n: number): RowChange[] =>
  Array.from({ length: n }, (_, k) => ({ member: "ip.r", role: "forward", row: 5 * k, installed: false }));

const cases: { name: string; text: string; writes: readonly RowChange[] }[] = [
  { name: "a FIB under a 120-row ACL of prefixes, protocols and port masks", text: fibRouter(64, 120, 7), writes: [] },
  { name: "the same after 10 FIB rows taken out", text: fibRouter(64, 120, 7), writes: fibWrites(10) },
  { name: "a 16-row ACL of random masks", text: ternaryAcl(16, 3), writes: [] },
  { name: "an edge router: an ACL, a range table, LPM routes", text: edgeRouter(40, 16, 12), writes: [] },
];

describe("each class's first row is the reference interpreter's winner for its witness header", () => {
  it.each(cases)("$name", ({ text, writes }) => {
    const c = compileText(text);
    if (c === undefined) throw new Error("the description does not compile");
    const a = new Analysis(c);
    expect(a.built).toBe(true);
    a.apply(writes);
    let compared = 0;
    for (const v of a.members) {
      const design = headerDesign(v.space.design.name);
      for (const t of Object.values(v.tables)) {
        // The rows in force, as a description with only them would be written.
        const kept = t.spec.rows.flatMap((_, i) => (t.isActive(i) ? [i] : []));
        const spec = { ...t.spec, rows: kept.map((i) => t.spec.rows[i]).filter((r) => r !== undefined) };
        for (const atom of v.space.atoms()) {
          const w = v.space.witness(atom);
          const hits: Hit[] = [];
          t.lookup(1, atom, v.space.allHops, hits);
          const found = hits[0]?.row.index ?? -1;
          const won = winner(design, spec, 1, w);
          expect(found, `class ${atom} of ${v.member.qualified}'s table`).toBe(won < 0 ? -1 : kept[won]);
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(10);
  });
});
