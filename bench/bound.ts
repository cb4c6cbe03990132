// What interpreting a description costs: `npm run bench:bound [-- --json]`. For
// each data-plane scenario with a bound kernel (assembly/bound/kernels.ts: the
// scenario's one path as a list of the data plane's own step functions, each
// told the case it takes, so that it tests for none), one batch is staged and
// run again and again by the data plane and by the kernel, in turns; medians of
// ns per packet in wasm (staging, timed apart, not included), by CPU time (process.cpuUsage:
// the process's user and system time, which other processes on a shared
// machine disturb less than the wall clock). test/bench/bound.test.ts holds
// each kernel to the data plane's counters.

import type { DataPlane } from "../src/wasm/module.js";
import { readFlags, refuse } from "./args.js";
import { BUILDS, type Built, runStaged } from "./dataplane.js";
import { median } from "./stats.js";
import { isScript } from "./script.js";

/** Scenarios with a kernel, and the kernel's constant in the bound build. */
export const KERNELS = [
  { scenario: "l2-exact", kernel: "KERNEL_L2" },
  { scenario: "hub-and-spoke-8", kernel: "KERNEL_HUB" },
  { scenario: "router-layered", kernel: "KERNEL_ROUTER" },
  { scenario: "vxlan", kernel: "KERNEL_VXLAN" },
] as const;

type Kernel = (typeof KERNELS)[number];

interface BoundExports {
  boundRun(n: number, first: number, base: number, kernel: number): void;
}

/** The scenario set up on the bound build. */
export function boundBuilt(k: Kernel): Built {
  return BUILDS[k.scenario]("bound");
}

/** Runs staged batch `staged` through kernel `k` of data plane `dp`, and empties the recording ring unread (as
 * runStaged runs it through the data plane). */
export function runKernel(dp: DataPlane, k: Kernel, staged: { count: number; base: number }, first: number): void {
  (dp.exports as unknown as BoundExports).boundRun(staged.count, first, staged.base, dp.constant(k.kernel));
  dp.exports.recordingsDrained();
}

export interface BoundResult {
  scenario: string;
  /** ns per packet in wasm: the data plane, and the kernel. */
  dataPlaneNs: number;
  boundNs: number;
}

const ROUNDS = 9;
const PACKETS_PER_ROUND = 2_000_000;

/** The process's CPU time so far (user and system), in ns. */
export function cpuNs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) * 1000;
}

export function measureBound(k: Kernel, packetsPerRound = PACKETS_PER_ROUND, rounds = ROUNDS): BoundResult {
  const { loaded, batches } = boundBuilt(k);
  const first = batches[0];
  if (first === undefined) throw new Error(`${k.scenario}: no batches`);
  const runner = loaded.runner;
  const count = runner.stage(first).count;
  const reps = Math.max(1, Math.ceil(packetsPerRound / count));
  const lane: number[] = [];
  const bound: number[] = [];
  const staging: number[] = [];
  // The batch is staged again for every run (a run writes its packets in place), and staging alone is timed apart
  // and taken off: the figures are the run's.
  const per = (t0: number): number => (cpuNs() - t0) / (reps * count);
  for (let round = 0; round < rounds; round++) {
    let t0 = cpuNs();
    for (let i = 0; i < reps; i++) runStaged(loaded, runner.stage(first), 0);
    lane.push(per(t0));
    t0 = cpuNs();
    for (let i = 0; i < reps; i++) runKernel(loaded.dp, k, runner.stage(first), 0);
    bound.push(per(t0));
    t0 = cpuNs();
    for (let i = 0; i < reps; i++) runner.stage(first);
    staging.push(per(t0));
  }
  const s = median(staging);
  return { scenario: k.scenario, dataPlaneNs: median(lane) - s, boundNs: median(bound) - s };
}

function table(results: readonly BoundResult[]): string {
  const rows = [
    ["scenario", "data plane ns", "bound ns", "interpreting ns", "ratio"],
    ...results.map((r) => [
      r.scenario,
      r.dataPlaneNs.toFixed(1),
      r.boundNs.toFixed(1),
      (r.dataPlaneNs - r.boundNs).toFixed(1),
      (r.dataPlaneNs / r.boundNs).toFixed(2),
    ]),
  ];
  const widths = rows[0]?.map((_, c) => Math.max(...rows.map((row) => (row[c] ?? "").length))) ?? [];
  return rows
    .map((row) =>
      row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0))).join("  "),
    )
    .join("\n");
}

if (isScript(import.meta.url)) {
  const flags = readFlags({ args: process.argv.slice(2), options: { json: { type: "boolean", default: false } } });
  if (typeof flags === "string") {
    refuse("bench:bound", flags, "npm run bench:bound [-- --json]");
    process.exit();
  }
  const { values } = flags;
  const results = KERNELS.map((k) => {
    if (!values.json) process.stderr.write(`bench:bound: ${k.scenario}\n`);
    return measureBound(k);
  });
  process.stdout.write(values.json ? `${JSON.stringify(results)}\n` : `${table(results)}\n`);
}
