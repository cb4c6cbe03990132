// `strata deploy` onto strata's own P4Runtime server, started empty, for every example: --plan
// writes nothing; a deploy leaves each device holding exactly what the export's WriteRequest
// says (read with the tests' own client); a second deploy and a second plan write nothing.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EXAMPLE_SPECS, exportSpec } from "../p4/helpers/examples.js";
import { canonical, deploy, held, REPO, serveEmpty, spec } from "./helpers.js";
import type { M } from "../p4runtime/client.js";
import type { MachineExport } from "../../src/p4/export.js";

/** What the export says a device holds, as held() reads it. */
function exported(ex: MachineExport): { want: string[]; keyless: number[]; profiles: number[] } {
  const info = ex.messages.p4info;
  const keyless = (info.tables ?? []).filter((t) => (t.matchFields ?? []).length === 0).map((t) => t.preamble?.id ?? 0);
  const profiles = (info.actionProfiles ?? []).map((p) => p.preamble?.id ?? 0);
  const want = [...new Set((ex.messages.entries.updates ?? []).map((u) => canonical(u.entity as unknown as M)))].sort();
  return { want, keyless, profiles };
}

describe.each(EXAMPLE_SPECS)("%s onto strata p4runtime --empty", (spec) => {
  it("--plan writes nothing; deploy: each device's Read equals the export; again: nothing written", async () => {
    const exports = exportSpec(spec);
    const server = await serveEmpty(`${REPO}/${spec}`);
    try {
      const targets = exports.flatMap((ex) => ["--target", `${ex.manifest.machine}=${server.address}`]);
      const readAll = (): Promise<string[][]> =>
        Promise.all(
          exports.map((ex) => {
            const e = exported(ex);
            return held(server.address, ex.manifest.deviceId, e.keyless, e.profiles);
          }),
        );
      const before = await readAll();

      const plan = await deploy([`${REPO}/${spec}`, ...targets, "--plan"]);
      expect(plan.err).toBe("");
      expect(plan.code).toBe(0);
      for (const ex of exports)
        expect(plan.out).toMatch(new RegExp(`^${ex.manifest.machine} \\(.*: pipeline to set`, "m"));
      expect(await readAll()).toEqual(before);

      const first = await deploy([`${REPO}/${spec}`, ...targets, "--json"]);
      expect(first.err).toBe("");
      expect(first.code).toBe(0);
      const after = await readAll();
      exports.forEach((ex, i) => expect(after[i], ex.manifest.machine).toEqual(exported(ex).want));
      const written = JSON.parse(first.out) as { machines: { inserted: number; modified: number }[] };
      expect(written.machines.map((m) => m.inserted + m.modified)).toEqual(
        exports.map((ex) => exported(ex).want.length),
      );

      for (const extra of [[], ["--plan"]]) {
        const again = await deploy([`${REPO}/${spec}`, ...targets, ...extra]);
        expect(again.code).toBe(0);
        expect(again.out.split("\n").filter((l) => l !== "")).toEqual(
          exports.map(
            (ex) =>
              `${ex.manifest.machine} (${server.address} device ${ex.manifest.deviceId}): converged, nothing to write`,
          ),
        );
      }
      expect(await readAll()).toEqual(after);
      expect(server.warnings).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe("--plan, after the description changed", () => {
  it("names each change per table with the row it comes from, and writes nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "strata-deploy-plan-"));
    const server = await serveEmpty(spec("ip-router"));
    try {
      const file = join(dir, "net.yaml");
      const text = readFileSync(spec("ip-router"), "utf8");
      writeFileSync(file, text);
      expect((await deploy([file, "--target", `r=${server.address}`])).code).toBe(0);
      writeFileSync(
        file,
        text.replace("{ match: { dst: 10.0.2.0/24 }, out: 2 }", "{ match: { dst: 10.0.3.0/24 }, out: 2 }"),
      );
      const before = await held(server.address, 2, [], []);
      const plan = await deploy([file, "--target", `r=${server.address}`, "--plan"]);
      expect(plan.code).toBe(0);
      expect(plan.out.split("\n")).toEqual([
        `r (${server.address} device 2): 1 to insert, 0 to modify, 1 to delete`,
        "  ip_r_forward:",
        expect.stringMatching(/^ {4}- table \d+ 1=0a000200\/24 priority 0 \(not in the description\)$/),
        `    + ip.r forward row 1: dst 10.0.3.0/24 → out 2 (${file}:73)`,
        "",
      ]);
      expect(await held(server.address, 2, [], [])).toEqual(before);
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
