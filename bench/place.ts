// How placement grows with preemption: `npm run bench:place [-- T…] [--json]`.
// The fleet of preemptionFleet: T targets, each full with 16 low-priority
// machines, and T high-priority machines that must each displace 8 of them.
// Prints, for each T, the machines, the seconds place() took (wall and CPU) and the fit
// checks it made (PlaceWork.evaluations). test/p4/place.test.ts holds the
// same fleet to a bound on the checks.

import { positive, readFlags, refuse } from "./args.js";
import type { Fleet, MachinePolicy } from "../src/p4/fleet.js";
import { place, type Placement, type PlaceWork } from "../src/p4/place.js";
import type { MachineRequirements } from "../src/p4/requirements.js";
import type { TargetProfile } from "../src/p4/targets.js";
import { isScript } from "./script.js";

/** Low-priority machines on each target, and how many of them one high-priority machine displaces. */
export const LOW_PER_TARGET = 16;
export const DISPLACED_PER_HIGH = 8;
const LOW_ENTRIES = 1024;

const PROFILE: TargetProfile = {
  name: "bench",
  file: "bench.yaml",
  summary: "",
  architecture: "v1model",
  matchKinds: ["exact"],
  maxKeyBits: 256,
  tables: 4 * LOW_PER_TARGET,
  capacity: { exact: LOW_PER_TARGET * LOW_ENTRIES, lpm: 0, ternary: 0, range: 0, optional: 0 },
  multicastGroups: 0,
  selectorGroups: 0,
  selectorGroupSize: 0,
};

function machine(name: string, size: number): MachineRequirements {
  const table = {
    name: `${name}_acquire`,
    network: "n",
    member: name,
    role: "acquire",
    kind: "exact",
    fields: [{ name: "dst", bits: 48, kind: "exact" }],
    keyBits: 48,
    size,
    entries: 1,
  } as const;
  return {
    machine: name,
    members: [`n.${name}`],
    tables: [table],
    tableCount: 1,
    multicastGroups: [],
    actionSelectors: [],
  };
}

const pad = (i: number): string => String(i).padStart(3, "0");

/** T targets t000…, each hosting 16 machines of priority 0 (placedOn) that fill its exact entries; T machines of
 * priority 10, each needing the room of 8. */
export function preemptionFleet(targets: number): { reqs: MachineRequirements[]; fleet: Fleet } {
  const reqs: MachineRequirements[] = [];
  const machines = new Map<string, MachinePolicy>();
  for (let t = 0; t < targets; t++) {
    for (let i = 0; i < LOW_PER_TARGET; i++) {
      const name = `low${pad(t)}-${String(i).padStart(2, "0")}`;
      reqs.push(machine(name, LOW_ENTRIES));
      machines.set(name, { priority: 0, requires: {}, prefers: [], placedOn: `t${pad(t)}` });
    }
    const high = `high${pad(t)}`;
    reqs.push(machine(high, DISPLACED_PER_HIGH * LOW_ENTRIES));
    machines.set(high, { priority: 10, requires: {}, prefers: [] });
  }
  const fleet: Fleet = {
    file: "bench-fleet.yaml",
    targets: Array.from({ length: targets }, (_, t) => ({
      name: `t${pad(t)}`,
      profile: PROFILE,
      labels: {},
      maxMachines: Number.POSITIVE_INFINITY,
      at: { file: "bench-fleet.yaml", path: `targets[${t}]`, line: 0, column: 0 },
    })),
    machines,
    defaults: { priority: 0, requires: {}, prefers: [] },
  };
  return { reqs, fleet };
}

export interface PlaceBenchRow {
  readonly targets: number;
  readonly machines: number;
  /** Wall time, and the CPU time of this process (user and system): on a shared machine, the second is the steadier. */
  readonly seconds: number;
  readonly cpuSeconds: number;
  readonly evaluations: number;
  readonly placed: number;
  readonly displaced: number;
}

export function benchPlace(targets: number): PlaceBenchRow {
  const { reqs, fleet } = preemptionFleet(targets);
  const work: PlaceWork = { evaluations: 0 };
  const start = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  const p: Placement = place(reqs, fleet, work);
  const used = process.cpuUsage(cpu);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return {
    targets,
    machines: reqs.length,
    seconds,
    cpuSeconds: (used.user + used.system) / 1e6,
    evaluations: work.evaluations,
    placed: p.placed.length,
    displaced: p.displaced.length,
  };
}

/** The most targets: place() grows as T² (T=200 took 3 s of CPU; 1,000 takes 25 times that). */
const T_MOST = 1000;

function main(): void {
  const usage = "npm run bench:place [-- T ...] [-- --json]";
  const flags = readFlags({ options: { json: { type: "boolean" } }, allowPositionals: true });
  if (typeof flags === "string") return refuse("bench:place", flags, usage);
  const { values, positionals } = flags;
  const sizes: number[] = [];
  for (const given of positionals.length > 0 ? positionals : ["4", "8", "16", "25", "50", "100"]) {
    const t = positive("T", given, T_MOST, true);
    if (typeof t === "string") return refuse("bench:place", t, usage);
    sizes.push(t);
  }
  const rows: PlaceBenchRow[] = [];
  for (const t of sizes) {
    const row = benchPlace(t);
    rows.push(row);
    if (values.json !== true) {
      console.log(
        `T=${String(t).padStart(3)}  ${String(row.machines).padStart(5)} machines  ` +
          `${row.seconds.toFixed(3).padStart(8)} s ` +
          `(CPU ${row.cpuSeconds.toFixed(3).padStart(8)} s)  ${String(row.evaluations).padStart(9)} fit ` +
          `checks  ${row.placed} placed, ${row.displaced} displaced`,
      );
    }
  }
  if (values.json === true) console.log(JSON.stringify(rows));
}

if (isScript(import.meta.url)) main();
