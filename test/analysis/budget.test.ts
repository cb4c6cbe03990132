// The analysis's budget (src/analysis/budget.ts): a bound on header classes, on
// the class diagram's nodes, and on time (read from a clock the test drives,
// never the wall). Reaching one is a stop the analysis reports, with what it
// found — never an exception, a stack overflow or a run without end — and a
// budget that is not reached changes nothing.

import { readdirSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { Analysis } from "../../src/analysis/analysis.js";
import { Bdd, FALSE, TRUE } from "../../src/analysis/bdd.js";
import { Budget, type Progress } from "../../src/analysis/budget.js";
import { LiveAnalysis } from "../../src/analysis/live.js";
import { computeRelations, report } from "../../src/analysis/properties.js";
import { cheapFindings } from "../../src/analysis/queries.js";
import { compile } from "../../src/control/compile.js";
import type { CompiledSpec } from "../../src/control/compiled.js";
import type { Installed } from "../../src/control/install.js";
import { loadSpec, parseSpec } from "../../src/description/load.js";
import { edgeRouter, hub, ternaryAcl } from "./helpers/generate.js";
import { REPLAY_EXAMPLES } from "../helpers/examples.js";

const compileYaml = (yaml: string, file: string): CompiledSpec => compile(parseSpec(yaml, file));

const EXAMPLES = REPLAY_EXAMPLES.flatMap((d) =>
  readdirSync(`examples/${d}`)
    .filter((f) => f === "network.yaml" || f === "merged.yaml")
    .map((f) => `examples/${d}/${f}`),
);

/** A clock that stands still until `start` says so, then moves one millisecond a reading. */
function steppedClock(): { now: () => number; start(): void } {
  let t = 0;
  let running = false;
  return { now: () => (running ? ++t : t), start: () => (running = true) };
}

describe("a budget that is not reached changes nothing", () => {
  test.each(EXAMPLES)("%s", (file) => {
    const c = compile(loadSpec(file));
    const clock = steppedClock();
    clock.start();
    const bounded = new Analysis(c, { budget: new Budget({ maxClasses: 1000, timeLimit: 3600, now: clock.now }) });
    expect(report(bounded)).toEqual(report(new Analysis(c)));
    expect(cheapFindings(bounded)).toEqual(cheapFindings(new Analysis(c)));
  });
});

/** Descriptions whose classes stop at a bound: which one, and where. */
const CLASS_STOPS: readonly {
  name: string;
  yaml: () => string;
  budget: () => Budget;
  limit: string;
  design: string;
  unit: string;
}[] = [
  {
    name: "a hub of 300 members (299 behaviours of its forward table), --max-classes 100",
    yaml: () => hub(300),
    budget: () => new Budget({ maxClasses: 100 }),
    limit: "classes",
    design: "ethernet",
    unit: "behaviours",
  },
  // Behaviours past their share of the nodes: the rows cut the classes instead, and the classes they made are kept.
  ...[34, 64, 128].map((rows) => ({
    name: `a ternary ACL of ${rows} rows, a diagram of at most 50,000 nodes`,
    yaml: () => ternaryAcl(rows),
    budget: () => new Budget({ maxNodes: 50_000 }),
    limit: "nodes",
    design: "ipv4",
    unit: "row patterns",
  })),
  {
    name: "an edge router (2,048 ternary rows, 64 ranges, 2,000 routes), --max-classes 10",
    yaml: () => edgeRouter(2048, 2000, 64),
    budget: () => new Budget({ maxClasses: 10 }),
    limit: "classes",
    design: "ipv4",
    unit: "behaviours",
  },
  {
    name: "an edge router, a diagram of at most 200,000 nodes",
    yaml: () => edgeRouter(2048, 2000, 64),
    budget: () => new Budget({ maxNodes: 200_000 }),
    limit: "nodes",
    design: "ipv4",
    unit: "behaviours and row patterns",
  },
];

describe("building the classes stops at a bound: a stop, not an exception", () => {
  test.each(CLASS_STOPS)("$name", ({ yaml, budget, limit, design, unit }) => {
    const b = budget();
    const a = new Analysis(compileYaml(yaml(), "stop.yaml"), { budget: b });
    expect(a.built).toBe(false);
    expect(b.stopped).toMatchObject({ limit, stage: `building the ${design} header classes`, unit });
    // Partial classes to report: the rows cut makes them one pattern at a time.
    expect(a.spaces.all().find((x) => x.design.name === design)?.made).toBeGreaterThan(1);
    const rep = report(a);
    expect(rep).toMatchObject({ ok: false, complete: false, components: [], inclusions: [] });
    expect(rep.layering).toMatchObject({ unknown: true });
    expect(cheapFindings(a)).toEqual({ loops: [], sessionHoles: [], walked: { classes: 0, of: 0 } });
  });
});

describe("a table's behaviours past their share of the budget: its rows cut the classes instead", () => {
  test("past half the time left (the test's clock): the classes and report of the cut `rows`, no stop", () => {
    const c = compileYaml(ternaryAcl(8), "acl.yaml");
    // The clock stands at 0 until the ACL's behaviours begin (its 8 rows), then jumps past half the limit, not all of
    // it.
    let t = 0;
    let readings = -1;
    const now = (): number => {
      if (readings >= 0 && ++readings === 2) t = 6000;
      return t;
    };
    const progress = (p: Progress): void => {
      if (p.unit === "rows of a table" && p.total === 8) readings = 0;
    };
    const a = new Analysis(c, { budget: new Budget({ timeLimit: 10, now, progress }) });
    expect(a.budget.stopped).toBeUndefined();
    expect(a.spaces.all().map((x) => x.tablesByRows)).toEqual([1]);
    const rows = new Analysis(c, { cut: "rows" });
    expect(report(a)).toEqual(report(rows));
    expect(cheapFindings(a)).toEqual(cheapFindings(rows));
  });

  test("Bdd.attempt past the nodes: the store as it was, its nodes found again by their parts, no stop", () => {
    const budget = new Budget({ maxNodes: 200 });
    const b = new Bdd(budget);
    const chain = (from: number, to: number): number => {
      let n = TRUE;
      for (let v = to - 1; v >= from; v--) n = b.mk(v, FALSE, n);
      return n;
    };
    const kept = chain(0, 20);
    const size = b.size;
    // Every pair of 2 x 120 variables: past 200 nodes.
    expect(b.attempt(() => b.or(chain(0, 120), chain(120, 240)))).toBeUndefined();
    expect([b.size, budget.stopped]).toEqual([size, undefined]);
    expect(chain(0, 20)).toBe(kept);
    expect(b.size).toBe(size);
    expect(b.attempt(() => chain(20, 40))).toBe(size + 19);
  });
});

describe("the time limit, read from the test's clock", () => {
  const c = compileYaml(hub(200), "hub.yaml");

  test("stops the walk part-way: the classes walked are kept, what is left is unknown", () => {
    const clock = steppedClock();
    const stages: Progress[] = [];
    const budget = new Budget({
      timeLimit: 0.05,
      now: clock.now,
      progress: (p) => {
        stages.push(p);
        if (p.stage.startsWith("walking reachable")) clock.start();
      },
    });
    const a = new Analysis(c, { budget });
    const r = computeRelations(a);
    const stop = budget.stopped;
    expect(stop).toMatchObject({ limit: "time", stage: "walking reachable in network lan", unit: "header classes" });
    const rel = [...r.relation.values()][0];
    expect(rel?.complete).toBe(false);
    expect(rel?.walked.classes).toBe(stop?.done);
    expect(stop?.done).toBeGreaterThan(0);
    expect(stop?.done).toBeLessThan(stop?.total ?? 0);
    const rep = report(a, r);
    expect(rep.complete).toBe(false);
    const props = Object.fromEntries((rep.components[0]?.properties ?? []).map((p) => [p.name, p]));
    // Nothing loops in what was walked, which proves nothing of the rest; the hub has no row that copies: nothing to
    // walk, and the property holds.
    expect(props["No_routing_loops"]).toMatchObject({ holds: false, unknown: true });
    expect(props["Fully_reachable"]).toMatchObject({ holds: false, unknown: true });
    expect(props["Only_unicast_forwarding"]).toMatchObject({ holds: true });
    expect(stages.map((p) => p.stage).filter((s, i, all) => all.indexOf(s) === i)).toEqual([
      "building the ethernet header classes",
      "walking reachable in network lan",
      "walking the traffic model in network lan",
      "checking Only_unicast_forwarding in network lan",
      "checking the layering demands",
    ]);
  });

  test("a limit that is not reached: every class walked, the same report as without one", () => {
    const clock = steppedClock();
    clock.start();
    const a = new Analysis(c, { budget: new Budget({ timeLimit: 1000, now: clock.now }) });
    expect(report(a)).toEqual(report(new Analysis(c)));
  });
});

describe("a running emulation's analysis (serve --analyze) within a budget", () => {
  /** The tables as installed with every row in (what LiveAnalysis reads of an installation). */
  const installed = (c: CompiledSpec): Installed =>
    ({ compiled: c, entries: new Map(c.tables.map((t) => [t.id, t.rows.map((_, k) => k)])) }) as unknown as Installed;

  test("a reload whose rows cut more classes than the budget allows: a stop that counts says, not an exception", () => {
    const small = compileYaml(hub(30), "hub.yaml");
    const live = new LiveAnalysis(small, { budget: new Budget({ maxClasses: 100 }) });
    expect(live.stopped).toBeUndefined();
    expect(live.line()).toBe("analysis: every property holds (7)");
    live.update(installed(compileYaml(hub(300), "hub.yaml")));
    expect(live.stopped).toMatchObject({ limit: "classes" });
    expect(live.line()).toMatch(
      /^analysis: .*; cut short by its classes limit in adding a row's patterns to the ethernet header classes: /,
    );
    // Further writes are not followed, and do not throw.
    expect(live.update(installed(small))).toEqual({ rows: 0, classes: 0, ms: 0 });
  });

  test("a reload whose rows grow the class diagram past its bound: the line says what to do (no flag lifts it)", () => {
    const small = compileYaml(hub(30), "hub.yaml");
    const built = new Analysis(small).spaces.all().reduce((n, s) => n + s.nodes, 0);
    const live = new LiveAnalysis(small, { budget: new Budget({ maxNodes: built + 100 }) });
    expect(live.stopped).toBeUndefined();
    live.update(installed(compileYaml(hub(300), "hub.yaml")));
    expect(live.stopped).toMatchObject({ limit: "nodes" });
    expect(live.line()).toMatch(
      /; cut short by its nodes limit in [^:]+ \(fewer ternary and range rows make fewer classes\): \d+ propert/,
    );
  });
});
