// Entries that are no row of the description, read back as rows
// (src/analysis/entry-rows.ts) and put among the rows where the data plane
// orders them (TableIndex.setOthers): on every example and analysis fixture,
// an analysis whose header tables' description rows are all taken out and
// written back as a controller's entries — the compiled rows' key vectors,
// actions and priorities — says what the analysis of the description says:
// the same properties, the same member pairs, holes and loops. Ternary, range,
// LPM (inferred and written), exact and optional tables are among them, and
// transmit and send tables: their rows too, and a transmit table the
// description does not write given its defaults as a controller's entries.

import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Analysis, type RowChange } from "../../src/analysis/analysis.js";
import type { OtherEntry } from "../../src/analysis/entry-rows.js";
import { currentProperties } from "../../src/analysis/properties.js";
import { ComponentRelation } from "../../src/analysis/relations.js";
import { trafficRelation } from "../../src/analysis/traffic.js";
import { compile } from "../../src/control/compile.js";
import type { CompiledSpec } from "../../src/control/compiled.js";
import { loadSpec } from "../../src/description/load.js";
import { REPLAY_EXAMPLES } from "../helpers/examples.js";

const root = new URL("../..", import.meta.url).pathname;
/** Too large to analyse twice in a test (hundreds of classes or behaviours). */
const LARGE = new Set(["acl-34.yaml", "hub-300.yaml"]);

const FILES = [
  ...REPLAY_EXAMPLES.flatMap((d) =>
    readdirSync(join(root, "examples", d))
      .filter((f) => f === "network.yaml" || f === "merged.yaml")
      .map((f) => `examples/${d}/${f}`),
  ),
  ...readdirSync(join(root, "test/fixtures/analysis"))
    .filter((f) => f.endsWith(".yaml") && !LARGE.has(f))
    .map((f) => `test/fixtures/analysis/${f}`),
];

function verdicts(a: Analysis): object {
  const relation = new Map(a.components.map((c) => [c, new ComponentRelation(a, c)]));
  const traffic = new Map(a.components.map((c) => [c, trafficRelation(a, c)]));
  const properties = currentProperties(a, { relation, traffic }).map((p) => `${p.name}: ${p.holds}`);
  const name = (m: number): string => a.member(m).member.qualified;
  const relations = [...relation].map(([c, rel]) => ({
    component: c.name,
    pairs: c.members.flatMap((m0) =>
      c.members.filter((m1) => rel.reaches(m0, m1)).map((m1) => `${name(m0)}>${name(m1)}`),
    ),
    holes: [...new Set(rel.holes().map((h) => `${name(h.hole.member)} ${h.hole.table} ${String(h.hole.link)}`))].sort(),
    loops: rel.loops().length > 0,
    // Who gets whose sessions (not how many classes: the entries' cuts may split the classes finer).
    deliveries: [
      ...new Set(
        traffic.get(c)?.deliveries.map((d) => `${name(d.session.member)}@${d.session.session}>${name(d.member)}`),
      ),
    ].sort(),
  }));
  return { properties, relations };
}

/** Every description row, taken out; and the same rows as entries beyond the description's (with those of transmit
 * tables the description does not write: its defaults). */
function asEntries(c: CompiledSpec): { out: RowChange[]; others: Map<number, OtherEntry[]> } {
  const out: RowChange[] = [];
  const others = new Map<number, OtherEntry[]>();
  for (const t of c.tables) {
    const member = c.members[t.member]?.qualified ?? "";
    const rows = t.spec === undefined ? t.rows : t.rows.filter((r) => r.row >= 0);
    for (const r of rows) if (r.row >= 0) out.push({ member, role: t.role, row: r.row, installed: false });
    others.set(
      t.id,
      rows.map((r) => ({ match: r.match, action: r.action })),
    );
  }
  return { out, others };
}

describe("a controller's entries are analysed as the rows they are", () => {
  it.each(FILES)("%s", (file) => {
    const c = compile(loadSpec(join(root, file)));
    const want = verdicts(new Analysis(c));
    const a = new Analysis(c);
    const { out, others } = asEntries(c);
    // The entries first, then the rows out: no table is empty on the way (a table all of whose rows are out, the last
    // without patterns, leaves sessions with no class on 20a61ac too: session-loop.yaml's n1.m0 receive).
    expect(a.setOthers(others)).toBe([...others.values()].reduce((n, l) => n + l.length, 0));
    a.apply(out);
    expect(verdicts(a)).toEqual(want);
    // The rows back, the entries out: as before.
    a.apply(out.map((ch) => ({ ...ch, installed: true })));
    expect(a.setOthers(new Map())).toBe([...others.values()].reduce((n, l) => n + l.length, 0));
    expect(verdicts(a)).toEqual(want);
  });

  it("covers ternary, range and LPM tables, sessions, and transmit tables written or not", () => {
    const tables = FILES.flatMap((f) => compile(loadSpec(join(root, f))).tables);
    const kinds = new Set(tables.map((t) => t.kind));
    for (const k of ["exact", "lpm", "ternary"]) expect(kinds).toContain(k);
    const actions = new Set(
      tables.flatMap((t) => t.rows.map((r) => `${t.role} ${r.action.name} ${t.spec !== undefined}`)),
    );
    for (const a of ["transmit physical false", "transmit external-session true", "send push true"])
      expect(actions).toContain(a);
  });
});
