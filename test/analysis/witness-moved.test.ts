// A write that moves a class's witness header to another class (the row that
// took it out, or sending it elsewhere) leaves the class with headers that
// other rows of the same fate take: the running analysis walks it again from a
// header it still holds, so that the paths it prints name rows that take the
// class (those an analysis afresh prints), not the old witness's.
//
// ip.r's forward rows 1, 2 and 3 (10.0.2.0/24, 10.0.5.0/24, 10.0.6.0/24) all send
// out on link 2, where h2 takes only 10.0.2.2: one class, a black hole at h2's
// acquire, whose path names the row its witness takes.

import { describe, expect, it } from "vitest";
import { Analysis, type RowChange } from "../../src/analysis/analysis.js";
import { LiveAnalysis } from "../../src/analysis/live.js";
import type { Relations } from "../../src/analysis/properties.js";
import { ComponentRelation } from "../../src/analysis/relations.js";
import { trafficRelation } from "../../src/analysis/traffic.js";
import { Words } from "../../src/analysis/words.js";
import { compile } from "../../src/control/compile.js";
import { parseSpec } from "../../src/description/load.js";

const SPEC = `networks:
  ip:
    header: ipv4
    members:
      h1: { name: 10.0.1.1 }
      r:  { name: 10.0.1.254, role: infra }
      h2: { name: 10.0.2.2 }
    links:
      - { from: h1.1, to: r.1, mode: two-way }
      - { from: r.2, to: h2.1, mode: two-way }
    tables:
      h1:
        acquire:  [ { match: { dst: 10.0.1.1 }, do: receive } ]
        receive:  [ { do: deliver } ]
        forward:  [ { in: self, out: 1 } ]
      r:
        acquire:  [ { match: { dst: 10.0.1.254 }, do: receive }, { do: forward } ]
        receive:  [ { do: deliver } ]
        forward:
          kind: lpm
          rows:
            - { match: { dst: 10.0.1.0/24 }, out: 1 }
            - { match: { dst: 10.0.2.0/24 }, out: 2 }
            - { match: { dst: 10.0.5.0/24 }, out: 2 }
            - { match: { dst: 10.0.6.0/24 }, out: 2 }
      h2:
        acquire:  [ { match: { dst: 10.0.2.2 }, do: receive } ]
        receive:  [ { do: deliver } ]
        forward:  [ { in: self, out: 1 } ]
`;
const compiled = compile(parseSpec(SPEC, "witness.yaml"));
const H2_HOLE = "ip.h2 acquire";

/** Each black hole's paths, as `strata analyze` prints them: "member table: path". */
function holes(a: Analysis, relations: Relations): string[] {
  const words = new Words(a);
  const out = [...relations.relation.values()].flatMap((rel) =>
    rel.holes().map((h) => `${a.member(h.hole.member).member.qualified} ${h.hole.table}: ${words.path(h.path)}`),
  );
  return [...new Set(out)].sort();
}

function fresh(changes: readonly RowChange[]): string[] {
  const a = new Analysis(compiled);
  a.apply(changes);
  const relation = new Map(a.components.map((c) => [c, new ComponentRelation(a, c)]));
  const traffic = new Map(a.components.map((c) => [c, trafficRelation(a, c)]));
  return holes(a, { relation, traffic });
}

/** The forward row of ip.r the path to h2's hole names (the witness's). */
function witnessRow(paths: readonly string[]): number {
  const m = paths.find((p) => p.startsWith(H2_HOLE))?.match(/ip\.r forward row (\d+)/);
  return Number(m?.[1] ?? -1);
}

const cases: { name: string; change: (row: number) => RowChange }[] = [
  {
    name: "the witness's row taken out",
    change: (row) => ({ member: "ip.r", role: "forward", row, installed: false }),
  },
  {
    name: "the witness's row sent back out of link 1",
    change: (row) => ({
      member: "ip.r",
      role: "forward",
      row,
      installed: true,
      action: { kind: "out", outLinks: [1] },
    }),
  },
];

describe("a class whose witness a write moves away is walked again from a header it holds", () => {
  it.each(cases)("$name", ({ change }) => {
    const live = new LiveAnalysis(compiled);
    const before = holes(live.analysis, live.relations);
    const row = witnessRow(before);
    expect([1, 2, 3]).toContain(row);
    const changes = [change(row)];
    live.apply(changes);
    const after = holes(live.analysis, live.relations);
    // The class still meets h2's hole, by another of the rows.
    expect([1, 2, 3].filter((r) => r !== row)).toContain(witnessRow(after));
    expect(after).toEqual(fresh(changes));
  });
});
