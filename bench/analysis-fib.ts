// The FIB scale target of issue 30: an IPv4 router with a FIB of 1k, 10k and
// 100k prefixes in the public BGP table's length distribution, with and
// without a 2,000-row ternary ACL (bench/analysis-descriptions.ts, fibRouter):
// per point, loading it (parse, compile) and analysing it apart, the classes,
// and the heap after the analysis (after a collection when node runs with
// --expose-gc); then single-row updates of the 100k FIB through the path
// `serve --analyze` takes (LiveAnalysis.apply: Analysis.apply, the table's
// setActive, ComponentRelation.update): a prefix withdrawn and put back.
// Times are CPU time of this process (the machine may be shared).

import { Analysis, type RowChange } from "../src/analysis/analysis.js";
import { Budget } from "../src/analysis/budget.js";
import { LiveAnalysis } from "../src/analysis/live.js";
import { compile } from "../src/control/compile.js";
import { parseSpec } from "../src/description/load.js";
import { fibRouter, random } from "./analysis-descriptions.js";
import type { Figure, FigureScenario } from "./scenario.js";

const PREFIXES: readonly number[] = [1000, 10_000, 100_000];
const ACL_ROWS = 2000;
/** Updates timed (each a withdrawal and a put-back: two timed writes), after WARM_UP untimed ones. */
const UPDATES = 1000;
const WARM_UP = 200;
/** Seconds one analysis may take. */
const TIME_LIMIT = 120;

const cpuMs = (since: NodeJS.CpuUsage): number => {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
};

/** The heap in use, after a collection when node was started with --expose-gc. */
function heapMiB(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

function point(prefixes: number, acl: number): Figure[] {
  const what = `FIB of ${prefixes.toLocaleString("en-US")} prefixes${acl === 0 ? "" : `, ACL of ${acl} rows`}`;
  const yaml = fibRouter(prefixes, acl);
  let t = process.cpuUsage();
  const spec = parseSpec(yaml, "fib.yaml");
  const parse = cpuMs(t);
  t = process.cpuUsage();
  const compiled = compile(spec);
  const compileMs = cpuMs(t);
  t = process.cpuUsage();
  const a = new Analysis(compiled, { budget: new Budget({ timeLimit: TIME_LIMIT }) });
  const analysis = cpuMs(t);
  const stop = a.budget.stopped;
  const stopped = stop === undefined ? "" : ` (stopped by its ${stop.limit} limit)`;
  const classes = a.spaces.all().reduce((n, s) => n + (a.built ? s.atoms().length : s.made), 0);
  const heap = heapMiB();
  const big = prefixes === 100_000 && acl === ACL_ROWS;
  return [
    { name: `${what}: load, parse (CPU)`, value: parse, unit: "ms" },
    { name: `${what}: load, compile (CPU)`, value: compileMs, unit: "ms" },
    {
      name: `${what}: analysis (CPU)${stopped}`,
      value: analysis,
      unit: "ms",
      ...(big ? { goal: { value: 10_000, better: "lower" as const } } : {}),
    },
    { name: `${what}: header classes`, value: classes, unit: "classes" },
    {
      name: `${what}: heap after the analysis`,
      value: heap,
      unit: "MiB",
      ...(big ? { goal: { value: 1024, better: "lower" as const } } : {}),
    },
  ];
}

async function curveFigures(): Promise<Figure[]> {
  const out: Figure[] = [];
  for (const prefixes of PREFIXES) for (const acl of [0, ACL_ROWS]) out.push(...point(prefixes, acl));
  return out;
}

const percentile = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;

/** Single-row writes of the FIB of `prefixes`: a prefix withdrawn, then put back, UPDATES times. */
async function updateFigures(prefixes = 100_000): Promise<Figure[]> {
  const compiled = compile(parseSpec(fibRouter(prefixes, 0), "fib.yaml"));
  const live = new LiveAnalysis(compiled, { budget: new Budget({ timeLimit: TIME_LIMIT }) });
  const fib = live.analysis.memberNamed("ip.r")?.tables.forward;
  if (fib === undefined) throw new Error("the FIB router has no forward table");
  // Writes before the timed ones, so that the code is compiled as it will be (steady state).
  const warm = random(99);
  for (let i = 0; i < WARM_UP; i++) {
    const row = warm() % prefixes;
    for (const installed of [false, true]) live.apply([{ member: "ip.r", role: "forward", row, installed }]);
  }
  const r = random(11);
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let i = 0; i < UPDATES; i++) {
    const row = r() % prefixes;
    for (const installed of [false, true]) {
      const change: RowChange = { member: "ip.r", role: "forward", row, installed };
      const t0 = process.cpuUsage();
      const w0 = performance.now();
      live.apply([change]);
      wall.push(performance.now() - w0);
      cpu.push(cpuMs(t0));
    }
  }
  cpu.sort((x, y) => x - y);
  wall.sort((x, y) => x - y);
  const what = `one FIB row out or in, ${prefixes.toLocaleString("en-US")} prefixes`;
  return [
    {
      name: `${what}: median (CPU)`,
      value: percentile(cpu, 0.5) * 1000,
      unit: "us",
      goal: { value: 100, better: "lower" },
    },
    {
      name: `${what}: p99 (CPU)`,
      value: percentile(cpu, 0.99) * 1000,
      unit: "us",
      goal: { value: 1000, better: "lower" },
    },
    { name: `${what}: median, wall clock`, value: percentile(wall, 0.5) * 1000, unit: "us" },
    { name: `${what}: p99, wall clock`, value: percentile(wall, 0.99) * 1000, unit: "us" },
    {
      name: `${what}: header classes after ${2 * UPDATES} writes`,
      value: live.analysis.spaces.all()[0]?.atoms().length ?? 0,
      unit: "classes",
    },
  ];
}

export const analyzeFib: FigureScenario = {
  name: "analyze-fib",
  description:
    `an IPv4 router's FIB of ${PREFIXES.map((n) => n.toLocaleString("en-US")).join(", ")} prefixes, with and without ` +
    `a ${ACL_ROWS}-row ternary ACL: load and analysis CPU time, classes, heap after the analysis`,
  figures: curveFigures,
};

export const analyzeFibUpdate: FigureScenario = {
  name: "analyze-fib-update",
  description: `the 100k FIB's analysis kept current by single-row writes (${UPDATES} prefixes withdrawn and put back)`,
  figures: () => updateFigures(),
};
