// The library's deploy() (src/index.ts), onto strata's own P4Runtime server: the same reconciler as
// the command — each device's Read equals the export afterwards, a second deploy writes nothing, a
// plan says what it would write and writes nothing, another primary is a refusal, not a throw.

import { describe, expect, it } from "vitest";
import { compile } from "../../src/control/compile.js";
import { loadSpec } from "../../src/description/load.js";
import { deploy, InputError, readDescription } from "../../src/index.js";
import { exportP4 } from "../../src/p4/export.js";
import { Client, type M } from "../p4runtime/client.js";
import { canonical, held, serveEmpty, spec } from "./helpers.js";

const IP = spec("ip-router");

/** Each machine's device holds what the export says. */
async function expectExport(address: string): Promise<void> {
  for (const ex of exportP4(compile(loadSpec(IP)), IP)) {
    const info = ex.messages.p4info;
    const keyless = (info.tables ?? [])
      .filter((t) => (t.matchFields ?? []).length === 0)
      .map((t) => t.preamble?.id ?? 0);
    const want = [...new Set((ex.messages.entries.updates ?? []).map((u) => canonical(u.entity as unknown as M)))];
    expect(await held(address, ex.manifest.deviceId, keyless, []), ex.manifest.machine).toEqual(want.sort());
  }
}

const SOURCES = [
  { name: "a file", source: (): string | ReturnType<typeof readDescription> => IP },
  { name: "a description in code", source: (): string | ReturnType<typeof readDescription> => readDescription(IP) },
];

describe("deploy() from the library", () => {
  it.each(SOURCES)("from $name: converged, the Read equals the export; again: nothing written", async ({ source }) => {
    const server = await serveEmpty(IP);
    const targets = ["h1", "r", "h2"].map((machine) => ({ machine, address: server.address }));
    try {
      const plan = await deploy(source(), targets, { plan: true });
      expect(plan.map((m) => [m.machine, m.pipelineSet, m.refused])).toEqual([
        ["h1", true, undefined],
        ["r", true, undefined],
        ["h2", true, undefined],
      ]);
      expect(await held(server.address, 2, [], [])).toEqual([]);
      const first = await deploy(source(), targets);
      expect(first.map((m) => [m.machine, m.deviceId, m.refused, m.failed])).toEqual([
        ["h1", 1n, undefined, []],
        ["r", 2n, undefined, []],
        ["h2", 3n, undefined, []],
      ]);
      const r = first[1];
      expect([r?.inserted, r?.modified, r?.deleted]).toEqual([16, 1, 0]);
      expect(r?.changes[0]?.origin).toMatch(/^lanA\.r acquire row 0: /);
      await expectExport(server.address);
      const again = await deploy(source(), targets);
      expect(again.map((m) => [m.pipelineSet, m.changes.length])).toEqual([
        [false, 0],
        [false, 0],
        [false, 0],
      ]);
    } finally {
      await server.close();
    }
  });

  it("another controller primary: a refusal that says so, nothing written", async () => {
    const server = await serveEmpty(IP);
    const client = new Client(server.address);
    const stream = client.stream();
    try {
      stream.arbitrate(2, 5);
      await stream.next();
      const [r] = await deploy(IP, [{ machine: "r", address: server.address }]);
      expect(r?.notPrimary).toBe(true);
      expect(r?.refused).toMatch(/^another controller \(election id 5\) is primary for device 2; ours is 1: /);
      expect(await held(server.address, 2, [], [])).toEqual([]);
    } finally {
      stream.close();
      client.close();
      await server.close();
    }
  });

  it("a target that names no machine of the description: an InputError, nothing asked", async () => {
    await expect(deploy(IP, [{ machine: "nope", address: "127.0.0.1:1" }])).rejects.toThrow(InputError);
  });
});
