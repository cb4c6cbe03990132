// What a reconcile asks of a device, counted (work, not time): the pipeline is asked for once a
// session, while that session stays primary on the default role; with --watch, a description
// change wakes only the machines whose desired state it changed.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { compile } from "../../src/control/compile.js";
import { desiredState, type MachineDesired } from "../../src/deploy/desired.js";
import { type DeployOptions, MachineLink } from "../../src/deploy/machine.js";
import { Watch } from "../../src/deploy/watch.js";
import { loadSpec } from "../../src/description/load.js";
import { until } from "../helpers/wait.js";
import { serveEmpty, spec } from "./helpers.js";

const IP = spec("ip-router");
const OPTIONS: DeployOptions = { electionId: 1n, role: "", batch: 1000, connectMs: 5000 };
const tmp = mkdtempSync(join(tmpdir(), "strata-deploy-reconcile-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const machineR = (): MachineDesired =>
  desiredState(compile(loadSpec(IP)), IP).find((d) => d.machine === "r") as MachineDesired;

const PIPELINE_CASES = [
  { name: "the default role: asked once, on the first reconcile", role: "", asked: [2, 0, 0] },
  {
    name: "a role of its own: asked every reconcile (another role's primary may set it)",
    role: "ctl",
    asked: [2, 1, 1],
  },
];

describe("a reconcile's calls", () => {
  it.each(PIPELINE_CASES)("$name", async ({ role, asked }) => {
    const server = await serveEmpty(IP);
    const d = machineR();
    const link = new MachineLink({ machine: "r", address: server.address, deviceId: 2n }, { ...OPTIONS, role });
    try {
      expect((await link.open(true))?.primary).toBe(true);
      const get = vi.spyOn(link.client, "getPipeline");
      const counts: number[] = [];
      for (let i = 0; i < asked.length; i++) {
        const before = get.mock.calls.length;
        const o = await link.converge(d, false);
        expect(o.changes.length > 0).toBe(i === 0);
        counts.push(get.mock.calls.length - before);
      }
      expect(counts).toEqual(asked);
    } finally {
      link.close();
      await server.close();
    }
  });

  it("a new session asks again (the device may have restarted)", async () => {
    const server = await serveEmpty(IP);
    const d = machineR();
    const target = { machine: "r", address: server.address, deviceId: 2n };
    const first = new MachineLink(target, OPTIONS);
    await first.open(true);
    await first.converge(d, false);
    first.close();
    const second = new MachineLink(target, OPTIONS);
    try {
      await second.open(true);
      const get = vi.spyOn(second.client, "getPipeline");
      expect((await second.converge(d, false)).changes).toEqual([]);
      expect(get).toHaveBeenCalledTimes(1);
    } finally {
      second.close();
      await server.close();
    }
  });
});

describe("strata deploy --watch, a description change", () => {
  it("wakes only the machines whose desired state it changed", async () => {
    const file = join(tmp, "net.yaml");
    const text = readFileSync(IP, "utf8");
    writeFileSync(file, text);
    const server = await serveEmpty(IP);
    const desired = desiredState(compile(loadSpec(file)), file);
    const targets = desired.map((x) => ({ machine: x.machine, address: server.address, deviceId: BigInt(x.deviceId) }));
    const lines: { machine: string; reason?: string }[] = [];
    let stop = (): void => {};
    const stopped = new Promise<void>((r) => (stop = r));
    // No poll in the test's time: every reconcile after the first is a wake.
    const w = new Watch(file, targets, OPTIONS, 600_000, desired, (l) => lines.push(JSON.parse(l)), true);
    const done = w.run(stopped);
    const reconciled = (m: string): number => w.tallies.get(m)?.reconciliations ?? 0;
    try {
      await until(
        () => desired.every((x) => reconciled(x.machine) === 1),
        () => "not every machine reconciled once",
      );
      writeFileSync(
        file,
        text.replace("{ match: { dst: 10.0.2.0/24 }, out: 2 }", "{ match: { dst: 10.0.3.0/24 }, out: 2 }"),
      );
      await until(
        () => reconciled("r") === 2,
        () => `r not reconciled again: ${JSON.stringify(lines)}`,
      );
    } finally {
      stop();
      await done;
      await server.close();
    }
    // Stopped: a machine woken before the stop has reconciled by now.
    expect(lines.filter((l) => l.reason === "the description changed").map((l) => l.machine)).toEqual(["r"]);
    expect(desired.map((x) => [x.machine, reconciled(x.machine)])).toEqual(
      desired.map((x) => [x.machine, x.machine === "r" ? 2 : 1]),
    );
  });
});
