// The analysis scenarios (issue 20, docs/analysis.md): all-pairs reachability
// over every header class of the bench's fat-tree, how time and memory grow
// with the members, and a single-row change updated from the rows it touches.
// Times are CPU time of this process (the machine is shared: wall-clock time
// counts the other processes too), wall time beside it.

import { Analysis, type RowChange } from "../src/analysis/analysis.js";
import { computeRelations } from "../src/analysis/properties.js";
import { compile } from "../src/control/compile.js";
import type { CompiledSpec } from "../src/control/compiled.js";
import { parseSpec } from "../src/description/load.js";
import { fatTreeSpec } from "./descriptions.js";
import type { Figure, FigureScenario } from "./scenario.js";
import { median, quantile } from "./stats.js";

/**
 * Fat-trees of about 1k and 5k members: pods, edge switches per pod, hosts per edge switch. The
 * all-pairs walk grows as classes × members (one class per host here): 20k members (64, 16, 18)
 * take minutes of CPU, too long for a bench run.
 */
const SIZES: readonly (readonly [number, number, number])[] = [
  [16, 8, 8],
  [32, 8, 18],
];
/** Single-row changes timed (each a delete and an insert). */
const UPDATES = 200;

function fatTree(pods: number, edges: number, hosts: number): CompiledSpec {
  return compile(parseSpec(fatTreeSpec(pods, edges, hosts).yaml, "fat-tree.yaml"));
}

/** Runs `f`, and returns its CPU and wall time in ms and what it kept on the heap in MiB. */
function measure<T>(f: () => T): { value: T; cpu: number; wall: number; heap: number } {
  (globalThis as { gc?: () => void }).gc?.();
  const heap0 = process.memoryUsage().heapUsed;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const value = f();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(cpu0);
  (globalThis as { gc?: () => void }).gc?.();
  return { value, cpu: (c.user + c.system) / 1000, wall, heap: (process.memoryUsage().heapUsed - heap0) / 2 ** 20 };
}

function allPairs(c: CompiledSpec): { a: Analysis; pairs: number; classes: number } {
  const a = new Analysis(c);
  const r = computeRelations(a);
  let pairs = 0;
  for (const rel of r.relation.values()) pairs += rel.pairs.reached;
  return { a, pairs, classes: a.spaces.all().reduce((n, s) => n + s.atoms().length, 0) };
}

async function fatTreeFigures(): Promise<Figure[]> {
  const c = fatTree(16, 8, 8);
  allPairs(c); // warm
  const m = measure(() => allPairs(c));
  return [
    {
      name: `all-pairs reachability, ${c.members.length} members, ${m.value.classes} header classes (CPU)`,
      value: m.cpu,
      unit: "ms",
      goal: { value: 5000, better: "lower" },
    },
    { name: "the same, wall clock", value: m.wall, unit: "ms" },
    { name: `member pairs reached`, value: m.value.pairs, unit: "pairs" },
  ];
}

async function growthFigures(): Promise<Figure[]> {
  const out: Figure[] = [];
  for (const [p, e, h] of SIZES) {
    const c = fatTree(p, e, h);
    const m = measure(() => allPairs(c));
    const n = c.members.length;
    out.push(
      { name: `${n} members, ${m.value.classes} classes: all-pairs (CPU)`, value: m.cpu, unit: "ms" },
      { name: `${n} members: heap kept`, value: m.heap, unit: "MiB" },
    );
  }
  return out;
}

async function updateFigures(): Promise<Figure[]> {
  const c = fatTree(16, 8, 8);
  const a = new Analysis(c);
  const r = computeRelations(a);
  // Edge switches' rows for their hosts: one out, then back in.
  const rows: RowChange[] = c.members
    .filter((m) => /^e\d+$/.test(m.key))
    .flatMap((m) =>
      (m.tables.forward?.spec?.rows ?? [])
        .slice(0, -1)
        .map((_, row) => ({ member: m.qualified, role: "forward" as const, row, installed: false })),
    );
  const times: number[] = [];
  const cpuTimes: number[] = [];
  for (let i = 0; i < UPDATES; i++) {
    const ch = rows[(i * 7919) % rows.length];
    if (ch === undefined) continue;
    for (const installed of [false, true]) {
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      for (const [k, affected] of a.apply([{ ...ch, installed }])) r.relation.get(k)?.update(affected);
      times.push(performance.now() - t0);
      const cpu = process.cpuUsage(cpu0);
      cpuTimes.push((cpu.user + cpu.system) / 1000);
    }
  }
  return [
    {
      name: `one forward row out or in, ${c.members.length} members: median (CPU)`,
      value: median(cpuTimes),
      unit: "ms",
      goal: { value: 1, better: "lower" },
    },
    {
      name: "the same, p99 (CPU)",
      value: quantile(cpuTimes, 0.99),
      unit: "ms",
      goal: { value: 10, better: "lower" },
    },
    { name: "median, wall clock", value: median(times), unit: "ms" },
    { name: "p99, wall clock", value: quantile(times, 0.99), unit: "ms" },
  ];
}

export const analyzeFatTree: FigureScenario = {
  name: "analyze-fat-tree",
  description:
    "strata analyze's relations on the fat-tree (1,169 members): reachable over every header class, all pairs",
  figures: fatTreeFigures,
};

export const analyzeGrowth: FigureScenario = {
  name: "analyze-growth",
  description:
    `the same on fat-trees ` +
    `of ${SIZES.map(([p, e, h]) => 1 + p + p * e + p * e * h).join(", ")} members: CPU time and the heap the ` +
    `relations keep`,
  figures: growthFigures,
};

export const analyzeUpdate: FigureScenario = {
  name: "analyze-update",
  description:
    `the fat-tree's relations updated after one edge switch row is taken out or put back ` +
    `(${UPDATES} of each): only the header classes the row matches are walked again`,
  figures: updateFigures,
};
