// A command that writes a directory per machine holds at most a few dozen of them open at once
// (src/out-dir.ts OPEN_SUBDIRECTORIES): export p4 of a 200-spoke hub is 201 directories, and under
// `ulimit -n 100` it once failed with EMFILE part-way. Run in a shell of its own so that the limit
// is the process's; a second run over the same --out reopens every directory it closed, and the
// files each holds are the same.

import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = new URL("../..", import.meta.url).pathname;
const CLI = join(root, "dist/src/cli/main.js");

/** A hub with `n` spokes, each a machine of its own. */
function hub(n: number): string {
  const spokes = Array.from({ length: n }, (_, i) => i + 1);
  const mac = (i: number): string =>
    `02:00:00:00:${(i >> 8).toString(16).padStart(2, "0")}:${(i & 255).toString(16).padStart(2, "0")}`;
  return [
    "networks:",
    "  lan:",
    "    header: ethernet",
    "    members:",
    '      hub: { name: "02:00:00:00:ff:ff" }',
    ...spokes.map((i) => `      h${i}: { name: "${mac(i)}" }`),
    "    links:",
    ...spokes.map((i) => `      - { from: h${i}.1, to: hub.${i}, mode: two-way }`),
    "",
  ].join("\n");
}

let dir = "";
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "strata-fds-"));
  writeFileSync(join(dir, "hub.yaml"), hub(200));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** strata with at most `fds` descriptors open. */
function limited(fds: number, ...argv: string[]): { status: number | null; stderr: string } {
  const quoted = argv.map((a) => `'${a}'`).join(" ");
  const r = spawnSync("sh", ["-c", `ulimit -n ${fds} && exec '${process.execPath}' '${CLI}' ${quoted}`], {
    encoding: "utf8",
  });
  return { status: r.status, stderr: r.stderr };
}

describe("export p4 of 201 machines with 100 descriptors", () => {
  const out = (): string => join(dir, "out");
  it.each([
    { name: "into an empty --out", run: 1 },
    { name: "again over its own output", run: 2 },
  ])("$name: exit 0, a directory and the same files per machine", ({ run }) => {
    const r = limited(100, "export", "p4", join(dir, "hub.yaml"), "--out", out());
    expect(r.stderr).toBe("");
    expect(r.status, `run ${run}`).toBe(0);
    const machines = readdirSync(out(), { withFileTypes: true }).filter((e) => e.isDirectory());
    expect(machines).toHaveLength(201);
    const files = new Set(machines.map((m) => readdirSync(join(out(), m.name)).sort().join(",")));
    expect(files.size).toBe(1);
    expect(readFileSync(join(out(), "h200", "p4info.json"), "utf8")).toContain("strata-h200");
  });
});
