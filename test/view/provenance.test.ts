// `strata view --run` shows where each row came from beside it (issue 31: every compiled row carries its provenance):
// the rows that matched, in a member's details, with the intent that made each, the place a hand row is written, or
// the compiler for a default row; and a played trace's steps with the intent beside the row, as `strata trace` prints.

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { packetLines, pageDataOf } from "./page-helpers.js";

const root = new URL("../..", import.meta.url).pathname;
const FAT_TREE = join(root, "examples/routed-fat-tree/network.yaml");
const HUB = join(root, "examples/hub-and-spoke/network.yaml");

async function strata(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo();
  const code = await main(argv, io);
  return { code, stdout: io.stdout.text, stderr: io.stderr.text };
}

let tmp = "";
/** The page of a run of `spec` with `inputs`. */
async function viewed(spec: string, name: string, inputs: readonly string[]): Promise<ReturnType<typeof pageDataOf>> {
  const run = join(tmp, `${name}-run`);
  const page = join(tmp, `${name}.html`);
  expect((await strata("run", spec, ...inputs.flatMap((i) => ["--in", i]), "--out", run, "--trace")).code).toBe(0);
  expect(await strata("view", spec, "--run", run, "--out", page)).toMatchObject({ code: 0, stderr: "" });
  return pageDataOf(readFileSync(page, "utf8"));
}

let fatTree: ReturnType<typeof pageDataOf>;
let hub: ReturnType<typeof pageDataOf>;
beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), "strata-view-provenance-"));
  fatTree = await viewed(FAT_TREE, "fat-tree", [
    `ip:h1=${join(root, "pcaps/example-fat-tree-h1.pcap")}`,
    `ip:h8=${join(root, "pcaps/example-fat-tree-h8.pcap")}`,
  ]);
  hub = await viewed(HUB, "hub", [`lan:h1.1=${join(root, "pcaps/example-hub-h1.pcap")}`]);
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("strata view --run: each row that matched, with where it came from", () => {
  it.each([
    { page: () => fatTree, member: "ip.a1", table: "acquire", row: 1, origin: "routes: transit" },
    { page: () => fatTree, member: "ip.a1", table: "forward", row: 5, origin: "routes: h1..h2 (2)" },
    { page: () => fatTree, member: "ip.core", table: "forward", row: 5, origin: "routes: h5..h8 (4)" },
    { page: () => fatTree, member: "ip.core", table: "transmit", row: "default", origin: "compiler (default row)" },
    // The hand rows' places in examples/hub-and-spoke/network.yaml: line 20 column 20, line 23 column 13.
    {
      page: () => hub,
      member: "lan.hub",
      table: "acquire",
      row: 0,
      origin: "hand: 20:20 networks.lan.tables.hub.acquire[0]",
    },
    {
      page: () => hub,
      member: "lan.hub",
      table: "forward",
      row: 1,
      origin: "hand: 23:13 networks.lan.tables.hub.forward[1]",
    },
  ])("$member $table row $row: $origin", ({ page, member, table, row, origin }) => {
    const rows = page().run?.rows ?? [];
    expect(
      rows.filter((r) => r.member === member && r.table === table && r.row === row).map((r) => r.origin),
    ).toContain(origin);
  });

  it("every row that matched has its origin", () => {
    for (const page of [fatTree, hub]) {
      const rows = page.run?.rows ?? [];
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.filter((r) => typeof r.origin !== "string" || r.origin === "")).toEqual([]);
    }
  });

  it("a played packet's steps show the intent beside the row, as strata trace does", () => {
    const lines = packetLines(fatTree, 0)?.lines ?? [];
    expect(lines).toContain("  [0] forward  ip.h1  in self  row 5: dst 10.0.1.12/30 → out 1  (routes: h5..h8 (4))");
    expect(lines).toContain("  [0] acquire  ip.e1  in 2     row 1: any → forward  (routes: transit)");
  });
});

describe("strata view --analysis: a path's rows made by an intent say which, as strata trace does", () => {
  it("the routed fat-tree's example paths", async () => {
    const page = join(tmp, "fat-tree-analysis.html");
    expect(await strata("view", FAT_TREE, "--analysis", "--out", page)).toMatchObject({ code: 0, stderr: "" });
    const data = pageDataOf(readFileSync(page, "utf8"));
    const steps = (data.analysis?.components ?? []).flatMap((c) => Object.values(c.routes).flatMap((r) => r.steps));
    const rows = steps.filter((s) => s.step === "row");
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.filter((s) => !/ {2}\((routes|l2|overlays): [^)]+\)+$/.test(s.text)).map((s) => s.text)).toEqual([]);
  });
});
