// `npm run bench [-- --json] [-- --only NAME]`: times each scenario with benchmark.js and
// reports the median sample as Mpps, ns/packet and (where it means something) MB/s.

import Benchmark from "benchmark";
import { positive, readFlags } from "./args.js";
import type { Figure, FigureScenario, Scenario } from "./scenario.js";
import { SCENARIOS } from "./scenarios.js";
import { median } from "./stats.js";
import { isScript } from "./script.js";

export interface Result {
  scenario: string;
  mpps: number;
  nsPerPacket: number;
  /** Megabytes (10^6) per second, when the scenario counts bytes. */
  mbPerSec?: number;
  /** Timed samples the median was taken from. */
  samples: number;
  /** Times faster than the TypeScript reference interpreter on the same tables (when the scenario has one). */
  vsReference?: number;
  /** The reference's own speed. */
  referenceMpps?: number;
  /** Times faster than the export on simple_switch with the same program, entries and packets (when the scenario has a
   * bmv2 twin). */
  vsBmv2?: number;
  /** simple_switch's own speed. */
  bmv2Mpps?: number;
}

/** Runs of a scenario that times itself (bmv2's switches: tens of seconds each). */
const TIMED_RUNS = 3;

export async function measure(scenario: Scenario, maxTimeSec: number): Promise<Result> {
  await scenario.setup();
  try {
    const timedRun = scenario.timedRun?.bind(scenario);
    if (timedRun !== undefined) {
      const seconds: number[] = [];
      for (let i = 0; i < TIMED_RUNS; i++) seconds.push(await timedRun());
      const secPerRun = median(seconds);
      return {
        scenario: scenario.name,
        mpps: scenario.packets / secPerRun / 1e6,
        nsPerPacket: (secPerRun * 1e9) / scenario.packets,
        samples: seconds.length,
      };
    }
    // Called through a closure: benchmark.js cannot inline a function that uses outer variables.
    const bench = new Benchmark(scenario.name, () => scenario.run(), {
      minSamples: 5,
      maxTime: maxTimeSec,
      async: false,
    });
    bench.run();
    if (bench.error !== undefined) throw bench.error;
    const secPerRun = median(bench.stats.sample);
    const result: Result = {
      scenario: scenario.name,
      mpps: scenario.packets / secPerRun / 1e6,
      nsPerPacket: (secPerRun * 1e9) / scenario.packets,
      samples: bench.stats.sample.length,
    };
    if (scenario.bytes !== undefined && scenario.bytes > 0) result.mbPerSec = scenario.bytes / secPerRun / 1e6;
    return result;
  } finally {
    await scenario.teardown?.();
  }
}

/** A figure scenario's figures, each with whether it met its goal. */
export interface FigureResult {
  scenario: string;
  figures: (Figure & { met?: boolean })[];
}

const isFigures = (s: Scenario | FigureScenario): s is FigureScenario => "figures" in s;

async function measureFigures(scenario: FigureScenario): Promise<FigureResult> {
  const figures = await scenario.figures();
  return {
    scenario: scenario.name,
    figures: figures.map((f) =>
      f.goal === undefined
        ? f
        : { ...f, met: f.goal.better === "lower" ? f.value <= f.goal.value : f.value >= f.goal.value },
    ),
  };
}

function aligned(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]?.map((_, c) => Math.max(...rows.map((row) => (row[c] ?? "").length))) ?? [];
  return rows
    .map((row) =>
      row
        .map((cell, c) => (c <= 1 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

function figureTable(results: readonly FigureResult[]): string {
  const number = (v: number): string =>
    v >= 1000 ? Math.round(v).toLocaleString("en-US") : v >= 10 ? v.toFixed(1) : v.toFixed(3);
  return aligned([
    ["scenario", "figure", "value", "unit", "goal"],
    ...results.flatMap((r) =>
      r.figures.map((f) => [
        r.scenario,
        f.name,
        number(f.value),
        f.unit,
        f.goal === undefined
          ? ""
          : `${f.goal.better === "lower" ? "≤" : "≥"} ${number(f.goal.value)} ${f.met === true ? "met" : "MISSED"}`,
      ]),
    ),
  ]);
}

function table(results: readonly Result[]): string {
  const rows = [
    ["scenario", "Mpps", "ns/packet", "MB/s", "vs reference", "vs bmv2", "samples"],
    ...results.map((r) => [
      r.scenario,
      r.mpps.toFixed(2),
      r.nsPerPacket.toFixed(1),
      r.mbPerSec === undefined ? "-" : r.mbPerSec.toFixed(0),
      r.vsReference === undefined ? "-" : `${r.vsReference.toFixed(0)}× (${(r.referenceMpps ?? 0).toFixed(3)} Mpps)`,
      r.vsBmv2 === undefined ? "-" : `${r.vsBmv2.toFixed(0)}× (${((r.bmv2Mpps ?? 0) * 1000).toFixed(1)} kpps)`,
      String(r.samples),
    ]),
  ];
  const widths = rows[0]?.map((_, c) => Math.max(...rows.map((row) => (row[c] ?? "").length))) ?? [];
  return rows
    .map((row) =>
      row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0))).join("  "),
    )
    .join("\n");
}

/** Where the bench writes: stdout gets the results only, stderr the progress. */
export interface BenchOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

const processOutput: BenchOutput = {
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
};

/** The most seconds --max-time gives a scenario: ten minutes each, hours for them all. */
const MAX_TIME_MOST = 600;

const USAGE = "npm run bench [-- --json] [-- --only NAME ...] [-- --list] [-- --max-time SECONDS]";

/** The flags of `argv`, with --max-time as seconds; or what is wrong with them. */
function benchArgs(argv: string[]) {
  const parsed = readFlags({
    args: argv,
    options: {
      json: { type: "boolean", default: false },
      only: { type: "string", multiple: true },
      "max-time": { type: "string", default: "3" },
      list: { type: "boolean", default: false },
    },
  });
  if (typeof parsed === "string") return parsed;
  const maxTime = positive("--max-time", parsed.values["max-time"], MAX_TIME_MOST);
  if (typeof maxTime === "string") return maxTime;
  return { values: parsed.values, maxTime };
}

/** `npm run bench` and `strata bench`: runs the scenarios; returns the exit code. */
export async function runBench(argv: string[], out: BenchOutput = processOutput): Promise<number> {
  const args = benchArgs(argv);
  if (typeof args === "string") {
    out.stderr(`bench: ${args}\nusage: ${USAGE}\n`);
    return 2;
  }
  const { values, maxTime } = args;
  if (values.list) {
    for (const s of SCENARIOS) out.stdout(`${s.name}  ${s.description}\n`);
    return 0;
  }
  const only = values.only ?? [];
  const unknown = only.filter((name) => !SCENARIOS.some((s) => s.name === name));
  if (unknown.length > 0) {
    out.stderr(`bench: no scenario ${unknown.join(", ")} (have: ${SCENARIOS.map((s) => s.name).join(", ")})\n`);
    return 2;
  }
  const chosen = only.length === 0 ? SCENARIOS : SCENARIOS.filter((s) => only.includes(s.name));
  const results: Result[] = [];
  const figures: FigureResult[] = [];
  for (const scenario of chosen) {
    const missing = isFigures(scenario) ? undefined : scenario.unavailable?.();
    if (missing !== undefined) {
      out.stderr(`bench: ${scenario.name}: left out: ${missing}\n`);
      continue;
    }
    if (!values.json) out.stderr(`bench: ${scenario.name}: ${scenario.description}\n`);
    if (isFigures(scenario)) {
      figures.push(await measureFigures(scenario));
      continue;
    }
    const result = await measure(scenario, maxTime);
    if (scenario.reference !== undefined) {
      const ref = await measure(scenario.reference, maxTime);
      result.referenceMpps = ref.mpps;
      result.vsReference = result.mpps / ref.mpps;
    }
    if (scenario.bmv2 !== undefined) {
      const twin = await measure(scenario.bmv2, maxTime);
      result.bmv2Mpps = twin.mpps;
      result.vsBmv2 = result.mpps / twin.mpps;
    }
    results.push(result);
  }
  if (values.json) out.stdout(`${JSON.stringify([...results, ...figures])}\n`);
  else
    out.stdout(
      [...(results.length > 0 ? [table(results)] : []), ...(figures.length > 0 ? [figureTable(figures)] : [])].join(
        "\n\n",
      ) + "\n",
    );
  return 0;
}

if (isScript(import.meta.url)) {
  // A reader that goes away (`| head`) ends the output, not the process with a stack trace.
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") throw err;
  });
  runBench(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
