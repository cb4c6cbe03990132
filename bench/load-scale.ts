// Loading a description at the size of real tables (issue 30): a router whose LPM forward table
// holds 10,000 and 100,000 IPv4 prefixes, written as YAML (a row a line, as people write tables)
// and as JSON (as programs write them, indented), parsed and validated (parseSpec), then compiled.
// The router and its prefixes are analyze-fib's (fibRouter in ./analysis-descriptions.ts: a seeded
// generator, prefix lengths in the public BGP table's mix, about 60% /24), without the ACL.
// Figures are CPU time, each the median of three runs.

import { parse } from "yaml";
import { compile } from "../src/control/compile.js";
import { parseSpec } from "../src/description/load.js";
import { fibRouter } from "./analysis-descriptions.js";
import type { Figure, FigureScenario } from "./scenario.js";
import { median } from "./stats.js";

const SIZES: readonly number[] = [10_000, 100_000];
const RUNS = 3;
/** The goal at 100,000 rows: parsed, validated and compiled within this many ms of CPU. */
const GOAL_MS = 2000;

/** The bench's FIB router (fibRouter: no ACL) with `n` prefixes, as YAML, a row a line. */
export function fibYaml(n: number): string {
  return fibRouter(n, 0);
}

/** The same description as JSON, indented by two as JSON.stringify writes it. */
export function fibJson(n: number): string {
  return JSON.stringify(parse(fibYaml(n)), null, 2);
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

/** parseSpec's and compile's CPU time on `text`, the median of RUNS. */
function loadTimes(text: string, file: string): { parse: number; compile: number } {
  const parse: number[] = [];
  const compiled: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const t0 = process.cpuUsage();
    const spec = parseSpec(text, file);
    parse.push(cpuMs(t0));
    const t1 = process.cpuUsage();
    compile(spec);
    compiled.push(cpuMs(t1));
  }
  return { parse: median(parse), compile: median(compiled) };
}

async function loadFigures(): Promise<Figure[]> {
  const out: Figure[] = [];
  for (const n of SIZES) {
    for (const [form, text] of [
      ["YAML", fibYaml(n)],
      ["JSON", fibJson(n)],
    ] as const) {
      const t = loadTimes(text, `fib.${form.toLowerCase()}`);
      const what = `${n.toLocaleString("en-US")} LPM rows, ${form}`;
      const goal = n === 100_000 ? { goal: { value: GOAL_MS, better: "lower" as const } } : {};
      out.push(
        { name: `${what}: parse and validate (CPU)`, value: t.parse, unit: "ms" },
        { name: `${what}: compile (CPU)`, value: t.compile, unit: "ms" },
        { name: `${what}: parse, validate and compile (CPU)`, value: t.parse + t.compile, unit: "ms", ...goal },
      );
    }
  }
  return out;
}

export const loadFib: FigureScenario = {
  name: "load-fib",
  description:
    "a router with a FIB of 10,000 and 100,000 IPv4 prefixes (mostly /24), as YAML and as JSON: parse and validate, " +
    `compile, CPU time (median of ${RUNS})`,
  figures: loadFigures,
};
