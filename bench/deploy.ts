// deploy (issue 32, Speed): `strata deploy` onto strata's own P4Runtime server (started empty, in
// this process: the CPU times are both sides'), on the bench's 1,169-member fat-tree. Its largest
// machine deployed (entries a second); a reconcile of every machine that finds nothing to write
// (what --watch does at each poll); with --watch on the changed machine alone, then on every
// machine, one row changed in the file (its out-link): from the save to the Write that puts it on
// the device (then read back to check). A row changed, not added: strata's server runs the
// description it was started on, and a row more can change a table's size in the P4Info. The edit
// stays inside core's tables: the watch reads and compiles them alone (src/control/reload.ts).

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compile } from "../src/control/compile.js";
import { desiredState, type MachineDesired } from "../src/deploy/desired.js";
import { keyOf } from "../src/deploy/entities.js";
import { type DeployOptions, MachineLink } from "../src/deploy/machine.js";
import { Watch } from "../src/deploy/watch.js";
import { loadSpec } from "../src/description/load.js";
import { EngineEmulation } from "../src/p4runtime/emulation.js";
import { P4RuntimeServer } from "../src/p4runtime/server.js";
import { fatTreeSpec } from "./descriptions.js";
import type { Figure, FigureScenario } from "./scenario.js";
import { median } from "./stats.js";

const ROUNDS = 5;
/** Edits made under --watch before those timed: the first few run code V8 has not compiled yet (65-170 ms of CPU). */
const WARM_EDITS = 4;
const OPTIONS: DeployOptions = { electionId: 1n, role: "", batch: 1000, connectMs: 30_000 };
/** The machine whose row changes: its first forward row, out on the first pod's link, then the second's. */
const CHANGED = "core";

/** CPU (this process: server and client) and wall ms of `f`. */
async function timed<T>(f: () => Promise<T>): Promise<{ value: T; cpu: number; wall: number }> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const value = await f();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(cpu0);
  return { value, cpu: (c.user + c.system) / 1000, wall };
}

interface Setup {
  dir: string;
  file: string;
  yaml: string;
  desired: MachineDesired[];
  server: P4RuntimeServer;
  emulation: EngineEmulation;
}

async function start(): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), "strata-bench-deploy-"));
  const file = join(dir, "fat-tree.yaml");
  const { yaml } = fatTreeSpec();
  writeFileSync(file, yaml);
  const compiled = compile(loadSpec(file));
  const emulation = EngineEmulation.local(compiled, false);
  const server = await P4RuntimeServer.start(emulation, { address: "127.0.0.1:0", empty: true, warn: () => {} });
  return { dir, file, yaml, desired: desiredState(compiled, file), server, emulation };
}

const targetOf = (s: Setup, d: MachineDesired) => ({
  machine: d.machine,
  address: `127.0.0.1:${s.server.port}`,
  deviceId: BigInt(d.deviceId),
});

async function open(s: Setup): Promise<MachineLink[]> {
  const links = s.desired.map((d) => new MachineLink(targetOf(s, d), OPTIONS));
  for (const l of links) await l.open(true);
  return links;
}

/** The largest machine deployed onto its empty device; then every other machine (not timed). */
async function deployAll(s: Setup, links: readonly MachineLink[]): Promise<Figure[]> {
  const largest = s.desired.reduce((a, b) => (b.entities.length > a.entities.length ? b : a));
  const i = s.desired.indexOf(largest);
  const one = await timed(() => (links[i] as MachineLink).converge(largest, false));
  await Promise.all(links.map((l, k) => (k === i ? undefined : l.converge(s.desired[k] as MachineDesired, false))));
  const n = one.value.written;
  return [
    { name: `deploy ${largest.machine} (${n} entries, ${one.value.writes} writes), CPU`, value: one.cpu, unit: "ms" },
    { name: `the same, per CPU second`, value: Math.round(n / (one.cpu / 1000)), unit: "entries/s" },
    { name: "the same, wall clock", value: one.wall, unit: "ms" },
  ];
}

/** Every machine reconciled at once, ROUNDS times, each finding nothing to write. */
async function noChange(s: Setup, links: readonly MachineLink[]): Promise<Figure[]> {
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t = await timed(() => Promise.all(links.map((l, k) => l.converge(s.desired[k] as MachineDesired, false))));
    const wrote = t.value.reduce((n, o) => n + o.changes.length, 0);
    if (wrote !== 0) throw new Error(`a no-change reconcile wrote ${wrote} changes`);
    cpu.push(t.cpu);
    wall.push(t.wall);
  }
  const n = links.length.toLocaleString("en-US");
  return [
    {
      name: `no-change reconcile of all ${n} machines, CPU (median of ${ROUNDS})`,
      value: median(cpu),
      unit: "ms",
      goal: { value: 1000, better: "lower" },
    },
    { name: "the same, wall clock", value: median(wall), unit: "ms" },
  ];
}

/** --watch on `watched` (every machine, or CHANGED alone); CHANGED's first forward row sent out another link and back,
 * `rounds` times each: from the save to the Write done, median of the 2 x `rounds`. */
async function oneRow(s: Setup, watched: readonly MachineDesired[], rounds: number): Promise<Figure[]> {
  let onLine: (l: { machine: string; event: string; reason?: string }) => void = () => {};
  let stop = (): void => {};
  const stopped = new Promise<void>((r) => (stop = r));
  const say = (line: string): void => onLine(JSON.parse(line) as { machine: string; event: string });
  const watch = new Watch(
    s.file,
    watched.map((d) => targetOf(s, d)),
    OPTIONS,
    600_000,
    s.desired,
    say,
    true,
  );
  // Every machine is converged already: a watch's first reconciles write nothing and say nothing; their tallies count.
  const started = new Promise<void>((resolve) => {
    const poll = setInterval(() => {
      if ([...watch.tallies.values()].filter((t) => t.reconciliations > 0).length < watched.length) return;
      clearInterval(poll);
      resolve();
    }, 20);
  });
  const running = watch.run(stopped);
  await started;
  const reader = new MachineLink(targetOf(s, s.desired.find((d) => d.machine === CHANGED) as MachineDesired), OPTIONS);
  await reader.open(false);
  const withRow = s.yaml.replace(/(\n {6}core:\n[^]*?forward:\n[^\n]*out: )1 \}/, (_, head: string) => `${head}2 }`);
  if (withRow === s.yaml) throw new Error("no core forward row to change");
  const warm: { cpu: number; wall: number }[] = [];
  const timedEdits: { cpu: number; wall: number }[] = [];
  try {
    // The first edits after a watch starts run code V8 has not compiled yet: WARM_EDITS of them are timed apart.
    for (let r = 0; r < WARM_EDITS + 2 * rounds; r++) {
      const text = r % 2 === 0 ? withRow : s.yaml;
      const t = await timed(
        () =>
          new Promise<void>((resolve) => {
            onLine = (l) => {
              if (l.machine === CHANGED && l.event === "converged") resolve();
            };
            writeFileSync(s.file, text);
          }),
      );
      const d = desiredState(compile(loadSpec(s.file)), s.file).find((m) => m.machine === CHANGED) as MachineDesired;
      const held = new Set((await reader.read(d)).map((e) => keyOf(e)));
      if (!d.entities.every((e) => held.has(e.key))) throw new Error("the device's Read does not show the change");
      (r < WARM_EDITS ? warm : timedEdits).push(t);
    }
  } finally {
    reader.close();
    stop();
    await running;
  }
  const which = watched.length === 1 ? `${CHANGED} alone` : `all ${watched.length.toLocaleString("en-US")} machines`;
  return [
    {
      name:
        `--watch on ${which}: a row changed, file save to Write done, wall ` +
        `(median of ${2 * rounds}, after ${WARM_EDITS} edits)`,
      value: median(timedEdits.map((t) => t.wall)),
      unit: "ms",
      goal: { value: 50, better: "lower" },
    },
    { name: "the same, CPU", value: median(timedEdits.map((t) => t.cpu)), unit: "ms" },
    { name: "the watch's first edit, wall", value: warm[0]?.wall ?? NaN, unit: "ms" },
    { name: "the watch's first edit, CPU", value: warm[0]?.cpu ?? NaN, unit: "ms" },
  ];
}

async function figures(): Promise<Figure[]> {
  const s = await start();
  try {
    const links = await open(s);
    let out: Figure[];
    try {
      out = [...(await deployAll(s, links)), ...(await noChange(s, links))];
    } finally {
      for (const l of links) l.close();
    }
    const alone = s.desired.filter((d) => d.machine === CHANGED);
    // The row's edit is read and compiled alone, and only its machine's desired state built again, whichever are
    // watched.
    return [...out, ...(await oneRow(s, alone, ROUNDS)), ...(await oneRow(s, s.desired, ROUNDS))];
  } finally {
    await s.server.close(0);
    s.emulation.close();
    rmSync(s.dir, { recursive: true, force: true });
  }
}

export const deploy: FigureScenario = {
  name: "deploy",
  description:
    "strata deploy onto strata's own P4Runtime server, the bench fat-tree's 1,169 machines: the largest deployed, " +
    "a no-change reconcile of all, and with --watch a row changed, from file save to the device",
  figures,
};
