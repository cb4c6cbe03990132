// A write into --out that fails part-way (the disk fills) is one line and exit 2, and leaves a
// directory the next command accepts: the marker is never cut short (src/out-dir.ts writes it
// whole, then renames it into place), and it lists every file that may be there before the
// first is written. The disk is simulated in the failing strata's process (helpers/full-disk.cjs):
// node:fs's writes fail with ENOSPC once a budget of bytes is spent, having written what fit.

import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { snapshot } from "./helpers/snapshot.js";

const root = new URL("../..", import.meta.url).pathname;
const HUB = join(root, "examples/hub-and-spoke/network.yaml");
const H1 = join(root, "pcaps/example-hub-h1.pcap");

const CLI = join(root, "dist/src/cli/main.js");
const FULL_DISK = join(root, "test/cli/helpers/full-disk.cjs");

let dir = "";
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "strata-full-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** strata in a process of its own whose disk takes `left` more bytes. */
function onFullDisk(left: number, argv: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["--require", FULL_DISK, CLI, ...argv], {
    cwd: root,
    env: { ...process.env, STRATA_TEST_DISK_LEFT: String(left) },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

/** Bytes of every file under `path`: about what a command writes there (a little less: the marker is written twice). */
const bytesUnder = (path: string): number =>
  readdirSync(path, { recursive: true, encoding: "utf8" })
    .map((f) => statSync(join(path, f)))
    .reduce((n, stat) => n + (stat.isFile() ? stat.size : 0), 0);

async function strata(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo();
  const code = await main(argv, io);
  return { code, stdout: io.stdout.text, stderr: io.stderr.text };
}

const WRITERS = [
  { name: "export p4", argv: (out: string) => ["export", "p4", HUB, "--out", out] },
  { name: "run", argv: (out: string) => ["run", HUB, "--in", `lan:h1.1=${H1}`, "--out", out, "--trace"] },
];

/** Each writer's output on a disk with room, written once: what the next command after a failed one must write. */
let cleanDir = "";
const clean = (w: { readonly name: string }): string => join(cleanDir, w.name.replace(" ", "-"));
beforeAll(async () => {
  cleanDir = mkdtempSync(join(tmpdir(), "strata-full-clean-"));
  for (const w of WRITERS) expect((await strata(...w.argv(clean(w)))).code).toBe(0);
});
afterAll(() => rmSync(cleanDir, { recursive: true, force: true }));

/** Where the disk fills: bytes left when the command starts, fixed or a share of what it writes whole. */
const FILLS = {
  start: { name: "full from the start", left: () => 0, refused: true },
  marker: { name: "room for the lock and part of the marker", left: () => 150, refused: true },
  half: { name: "full half way", left: (whole: number) => Math.floor(whole / 2), refused: false },
  end: { name: "full just before the end", left: (whole: number) => whole - 10, refused: false },
};

describe("a disk that fills during a write into --out: exit 2, one line, and the next command accepts DIR", () => {
  const [exportP4, run] = WRITERS as [(typeof WRITERS)[number], (typeof WRITERS)[number]];
  const table = [
    ...[FILLS.start, FILLS.marker, FILLS.half, FILLS.end].map((f) => ({ ...f, w: exportP4, earlier: false })),
    ...[FILLS.marker, FILLS.half, FILLS.end].map((f) => ({ ...f, w: exportP4, earlier: true })),
    ...[FILLS.start, FILLS.half].map((f) => ({ ...f, w: run, earlier: false })),
  ].map((c) => ({ ...c, label: `${c.w.name}, ${c.earlier ? "over its earlier output" : "new --out"}: ${c.name}` }));
  it.each(table)("$label", async ({ w, earlier, left, refused }) => {
    const out = join(dir, "out");
    if (earlier) expect((await strata(...w.argv(out))).code).toBe(0);

    const failed = await onFullDisk(left(bytesUnder(clean(w))), w.argv(out));
    expect(failed.stderr).toMatch(/^strata: .*: no space left on the device( \(.*\))?\n$/);
    expect(failed.code).toBe(2);
    // Refused before the first file is written (the marker cannot be), a new --out is not left behind.
    if (!earlier && refused) expect(existsSync(out)).toBe(false);

    const next = await strata(...w.argv(out));
    expect(next.stderr).toBe("");
    expect(next.code).toBe(0);
    // Its elapsed time aside, summary.json is checked by the run tests; here only the files must be the same.
    const summary = (f: string): boolean => f === "summary.json";
    expect(snapshot(out, summary)).toEqual(snapshot(clean(w), summary));
  });
});
