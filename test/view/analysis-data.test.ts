// What strata view --analysis puts in a page, by a component's size: a matrix with a path per
// reachable cell when small, a matrix alone up to 200 members, only the reachable pair count above.

import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fatTreeSpec } from "../../bench/dataplane.js";
import { compile } from "../../src/control/compile.js";
import { loadSpec, parseSpec } from "../../src/description/load.js";
import { analysisData } from "../../src/view/analysis-data.js";

const root = new URL("../..", import.meta.url).pathname;

describe("analysisData: the matrix and its paths by a component's size", () => {
  const cases = [
    {
      name: "ip-router",
      spec: () => compile(loadSpec(join(root, "examples/ip-router/network.yaml"))),
      matrix: true,
      paths: true,
    },
    {
      name: "fat-tree of 75 members",
      spec: () => compile(parseSpec(fatTreeSpec(2, 4, 8).yaml, "fat-tree.yaml")),
      matrix: true,
      paths: false,
    },
    {
      name: "fat-tree of 293 members",
      spec: () => compile(parseSpec(fatTreeSpec(4, 8, 8).yaml, "fat-tree.yaml")),
      matrix: false,
      paths: false,
    },
  ];
  it.each(cases)("$name", ({ spec, matrix, paths }) => {
    for (const c of analysisData(spec()).components) {
      const n = c.members.length;
      const cells = c.classes.flatMap((row, i) => row.map((k, j) => ({ i, j, k })));
      expect(cells).toHaveLength(matrix ? n * n : 0);
      const reached = cells.filter((x) => x.i !== x.j && x.k > 0).map((x) => `${x.i}.${x.j}`);
      if (matrix) expect(reached).toHaveLength(c.reachable.pairs);
      expect(c.reachable.pairs).toBeGreaterThan(0);
      expect(Object.keys(c.routes).sort()).toEqual(paths ? reached.sort() : []);
    }
  });
});

describe("analysisData: a search for example paths cut short is said, not silent", () => {
  const cases = [
    { name: "ip-router, searched whole", file: "examples/ip-router/network.yaml", steps: undefined, cut: false },
    {
      name: "a session loop, 2,000 steps a member",
      file: "test/fixtures/analysis/session-loop.yaml",
      steps: 2_000,
      cut: true,
    },
  ];
  it.each(cases)("$name", ({ file, steps, cut }) => {
    const data = analysisData(compile(loadSpec(join(root, file))), steps);
    const notes = data.components.map((c) => c.pathsCut).filter((s) => s !== "");
    expect(notes.length > 0).toBe(cut);
    for (const note of notes)
      expect(note).toMatch(/^the search for example paths from \S.* stopped after 2,000 steps: /);
  });
});
