// Loading a description at the size of real tables (issue 30): a router whose LPM forward table
// holds 10,000 and 100,000 IPv4 prefixes, written as YAML (a row a line, as people write tables)
// and as JSON (as programs write them, indented), parsed and validated (parseSpec), then compiled.
// The prefixes are drawn with a seeded generator in a length distribution like a border router's
// FIB (about 60% /24, then /22, /23, /20 and /21, a few shorter ones down to /10), each once.
// Figures are CPU time, each the median of three runs.

import { compile } from "../src/control/compile.js";
import { parseSpec } from "../src/description/load.js";
import { random } from "./analysis-descriptions.js";
import type { Figure, FigureScenario } from "./scenario.js";

const SIZES: readonly number[] = [10_000, 100_000];
const RUNS = 3;
/** The goal at 100,000 rows: parsed, validated and compiled within this many ms of CPU. */
const GOAL_MS = 2000;

/** Prefix lengths and their share of the table. */
const LENGTHS: readonly (readonly [number, number])[] = [
  [24, 0.6],
  [23, 0.1],
  [22, 0.12],
  [21, 0.05],
  [20, 0.05],
  [19, 0.025],
  [18, 0.012],
  [17, 0.007],
  [16, 0.014],
  [15, 0.004],
  [14, 0.003],
  [13, 0.002],
  [12, 0.0015],
  [11, 0.001],
  [10, 0.0005],
];

const ip = (x: number): string => [24, 16, 8, 0].map((s) => (x >>> s) & 255).join(".");

/** `n` distinct prefixes, each with an out-link 2..5. */
export function fibRows(n: number, seed = 3): { dst: string; out: number }[] {
  const r = random(seed);
  const length = (): number => {
    let x = r() / 2 ** 32;
    for (const [len, share] of LENGTHS) if ((x -= share) < 0) return len;
    return 24;
  };
  const rows: { dst: string; out: number }[] = [];
  const seen = new Set<string>();
  while (rows.length < n) {
    const len = length();
    const dst = `${ip((r() & ((0xffffffff << (32 - len)) >>> 0)) >>> 0)}/${len}`;
    if (seen.has(dst)) continue;
    seen.add(dst);
    rows.push({ dst, out: 2 + (r() % 4) });
  }
  return rows;
}

/** The router (host h1, four delivering neighbours a..d) with the FIB in r's forward table, as YAML. */
export function fibYaml(n: number): string {
  const rows = fibRows(n).map((row) => `          - { match: { dst: ${row.dst} }, out: ${row.out} }`);
  const ends = ["a", "b", "c", "d"];
  return [
    "networks:",
    "  ip:",
    "    header: ipv4",
    "    ttl: decrement",
    "    members:",
    "      h1: { name: 10.0.0.1 }",
    ...ends.map((m, i) => `      ${m}: { name: 10.0.${i + 1}.1 }`),
    "      r: { name: 10.0.0.254 }",
    "    links:",
    "      - { from: h1.1, to: r.1, mode: two-way }",
    ...ends.map((m, i) => `      - { from: r.${i + 2}, to: ${m}.1, mode: two-way }`),
    "    tables:",
    "      h1: { forward: [ { in: self, out: 1 } ] }",
    ...ends.map((m) => `      ${m}: { acquire: [ { do: receive } ], receive: [ { do: deliver } ] }`),
    "      r:",
    "        forward:",
    "          kind: lpm",
    "          rows:",
    ...rows,
    "",
  ].join("\n");
}

/** The same description as JSON, indented by two as JSON.stringify writes it. */
export function fibJson(n: number): string {
  const ends = ["a", "b", "c", "d"];
  const members: Record<string, { name: string }> = { h1: { name: "10.0.0.1" } };
  ends.forEach((m, i) => (members[m] = { name: `10.0.${i + 1}.1` }));
  members["r"] = { name: "10.0.0.254" };
  const tables: Record<string, unknown> = { h1: { forward: [{ in: "self", out: 1 }] } };
  for (const m of ends) tables[m] = { acquire: [{ do: "receive" }], receive: [{ do: "deliver" }] };
  tables["r"] = {
    forward: { kind: "lpm", rows: fibRows(n).map((row) => ({ match: { dst: row.dst }, out: row.out })) },
  };
  const links = [
    { from: "h1.1", to: "r.1", mode: "two-way" },
    ...ends.map((m, i) => ({ from: `r.${i + 2}`, to: `${m}.1`, mode: "two-way" })),
  ];
  const spec = { networks: { ip: { header: "ipv4", ttl: "decrement", members, links, tables } } };
  return JSON.stringify(spec, null, 2);
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[values.length >> 1] ?? 0;
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
