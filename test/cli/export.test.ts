// `strata export p4`: files per machine, the --json manifest, and errors as
// one `strata: …` line with exit 2 — a description v1model cannot run names
// the link and the reason; --target checks every machine against a profile first.

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../..//src/cli/main.js";
import { EXIT_BAD_INPUT, EXIT_OK } from "../..//src/cli/exit-codes.js";
import { FILES, type MachineManifest } from "../../src/p4/export.js";

const ROUTER = "examples/ip-router/network.yaml";
const dir = mkdtempSync(join(tmpdir(), "strata-export-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo();
  const code = await main(["export", ...argv], io);
  return { code, stdout: io.stdout.text, stderr: io.stderr.text };
}

/** A group link split across its sender's machine and another: no P4 device can be both. */
const SPLIT = "test/fixtures/specs/p4-split-group.yaml";

describe("strata export p4", () => {
  test("writes every file for every machine and says so", async () => {
    const out = join(dir, "router");
    const { code, stdout, stderr } = await run("p4", ROUTER, "--out", out);
    expect({ code, stderr }).toEqual({ code: EXIT_OK, stderr: "" });
    expect(stdout).toBe(
      `${out}/h1: 2 members, 9 tables, 1 ports, 9 updates\n${out}/r: 3 members, 14 tables, 2 ports, ` +
        `17 updates\n${out}/h2: 2 members, 9 tables, 1 ports, 9 updates\n`,
    );
    expect(readdirSync(out).sort()).toEqual([".strata-output", "h1", "h2", "r"]);
    for (const m of ["h1", "h2", "r"]) expect(readdirSync(join(out, m)).sort()).toEqual([...FILES].sort());
    const manifest = JSON.parse(readFileSync(join(out, "r", "manifest.json"), "utf8")) as MachineManifest;
    expect(manifest.ports).toEqual([
      { port: 1, member: "lanA.r", link: 1, links: ["lanA.h1.1-r.1"], peers: ["lanA.h1.1"], alsoSentBy: [] },
      { port: 2, member: "lanB.r", link: 1, links: ["lanB.r.1-h2.1"], peers: ["lanB.h2.1"], alsoSentBy: [] },
    ]);
    expect(manifest.leftOut.map((l) => l.what)).toContain("link ip.r.2-h2.1 (from ip.r.2)");
  });

  test("--json prints the manifests", async () => {
    const out = join(dir, "json");
    const { code, stdout } = await run("p4", ROUTER, "--out", out, "--json");
    expect(code).toBe(EXIT_OK);
    const printed = JSON.parse(stdout) as { source: string; out: string; machines: MachineManifest[] };
    expect(printed.source).toBe(ROUTER);
    expect(printed.machines.map((m) => [m.machine, m.deviceId])).toEqual([
      ["h1", 1],
      ["r", 2],
      ["h2", 3],
    ]);
    expect(printed.machines[1]).toEqual(JSON.parse(readFileSync(join(out, "r", "manifest.json"), "utf8")));
  });

  test.each([
    [
      "what v1model cannot run: the link and the reason",
      [SPLIT, "--out", join(dir, "split")],
      `strata: ${SPLIT}: link lan.s.1-all (lan.s.1): receivers both on machine s (the sender's) and on other ` +
        `machines cannot be exported to P4 (put all receivers of the link on other machines)\n`,
    ],
    [
      "a description that is not there",
      ["nope.yaml", "--out", join(dir, "nope")],
      "strata: nope.yaml: cannot read file: no such file",
    ],
    ["no --out", [ROUTER], "strata: required option '--out <dir>' not specified"],
  ])("%s: exit 2", async (_, argv, message) => {
    const { code, stderr } = await run("p4", ...argv);
    expect(code).toBe(EXIT_BAD_INPUT);
    expect(stderr).toContain(message);
    expect(stderr.trim().split("\n").length).toBeLessThanOrEqual(2);
  });

  test("--target that fits: the files are written", async () => {
    const out = join(dir, "fits");
    const { code, stderr } = await run("p4", ROUTER, "--out", out, "--target", "bmv2");
    expect({ code, stderr }).toEqual({ code: EXIT_OK, stderr: "" });
    expect(readdirSync(out).sort()).toEqual([".strata-output", "h1", "h2", "r"]);
  });

  test("--target that does not fit: one line per violated limit, exit 2, nothing written", async () => {
    const out = join(dir, "nofit");
    const chain = "examples/filter-chain/network.yaml";
    const { code, stderr } = await run("p4", chain, "--out", out, "--target", "asic-example");
    expect(code).toBe(EXIT_BAD_INPUT);
    const lines = stderr.trim().split("\n");
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines)
      expect(l).toMatch(/^strata: examples\/filter-chain\/network\.yaml: machine \S+ does not fit asic-example: /);
    expect(stderr).toContain("range");
    expect(existsSync(out)).toBe(false);
  });
});
