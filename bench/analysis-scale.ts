// The analysis at the size of real tables (issue 30): header classes cut by
// each table's behaviours against classes cut by every row's patterns, on the
// ternary ACL of random masks (the adversarial case: rows that overlap every
// which way) from 8 to 2,048 rows, and on the edge router (2,048 ternary rows,
// a range table, 2,000 LPM routes). Each point is built once within a time
// limit: a point the limit stops says so (its figure is the time it ran), and
// so does one with a table whose behaviours passed their share of the budget
// (its rows cut the classes instead: the classes are theirs).

import { Analysis } from "../src/analysis/analysis.js";
import { Budget } from "../src/analysis/budget.js";
import type { ClassCut } from "../src/analysis/header-space.js";
import { compile } from "../src/control/compile.js";
import { parseSpec } from "../src/description/load.js";
import { edgeRouter, ternaryAcl } from "./analysis-descriptions.js";
import type { Figure, FigureScenario } from "./scenario.js";

const ACL_ROWS: readonly number[] = [8, 16, 24, 32, 64, 128, 512, 2048];
/** Seconds one point may take. */
const TIME_LIMIT = 30;

/** The classes `yaml` is cut into, and the CPU time it took; `stopped` when the budget ended it first; `byRows`, the
 * tables whose behaviours passed their share of the budget (their rows cut the classes instead). */
function classesOf(
  yaml: string,
  cut: ClassCut,
): { classes: number; cpu: number; stopped: string | undefined; byRows: number } {
  const c = compile(parseSpec(yaml, "scale.yaml"));
  const cpu0 = process.cpuUsage();
  const a = new Analysis(c, { cut, budget: new Budget({ timeLimit: TIME_LIMIT }) });
  const used = process.cpuUsage(cpu0);
  const classes = a.spaces.all().reduce((n, s) => n + (a.built ? s.atoms().length : s.made), 0);
  const byRows = a.spaces.all().reduce((n, s) => n + s.tablesByRows, 0);
  const stop = a.budget.stopped;
  return {
    classes,
    cpu: (used.user + used.system) / 1000,
    stopped: stop === undefined ? undefined : stop.limit,
    byRows,
  };
}

function point(what: string, cut: ClassCut, yaml: string): Figure[] {
  const m = classesOf(yaml, cut);
  const byRows = m.byRows === 0 ? "" : `, ${m.byRows} table${m.byRows === 1 ? "" : "s"} by rows`;
  const stopped = m.stopped === undefined ? byRows : ` (stopped by its ${m.stopped} limit${byRows})`;
  return [
    { name: `${what}, cut by ${cut}: classes${stopped}`, value: m.classes, unit: "classes" },
    { name: `${what}, cut by ${cut}: building them (CPU)${stopped}`, value: m.cpu, unit: "ms" },
  ];
}

async function aclFigures(): Promise<Figure[]> {
  const out: Figure[] = [];
  for (const rows of ACL_ROWS)
    for (const cut of ["behaviour", "rows"] as const)
      out.push(...point(`ternary ACL of ${rows} rows`, cut, ternaryAcl(rows)));
  return out;
}

async function edgeFigures(): Promise<Figure[]> {
  const yaml = edgeRouter(2048, 2000, 64);
  return [...point("edge router", "behaviour", yaml), ...point("edge router", "rows", yaml)];
}

export const analyzeAclCurve: FigureScenario = {
  name: "analyze-acl-curve",
  description:
    `header classes of a ternary ACL of random masks, ${ACL_ROWS.join(", ")} rows: cut by behaviour and by every ` +
    `row, classes and CPU time (each point within ${TIME_LIMIT} s)`,
  figures: aclFigures,
};

export const analyzeEdgeRouter: FigureScenario = {
  name: "analyze-edge-router",
  description:
    "header classes of the edge router (2,048 ternary rows, 64 ranges, 2,000 routes): by behaviour and by row",
  figures: edgeFigures,
};
