// Where each row came from, as strata says it: `check --rows` (text and JSON),
// and `analyze` on stated demands, met and not met; bad intents through the CLI
// are one `strata:` line and exit 2.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { EXIT_BAD_INPUT, EXIT_OK, EXIT_PROBLEM } from "../../src/cli/exit-codes.js";

const FAT_TREE = "examples/routed-fat-tree/network.yaml";
const dir = mkdtempSync(join(tmpdir(), "strata-intents-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function strata(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo();
  const code = await main(argv, io);
  return { code, stdout: io.stdout.text, stderr: io.stderr.text };
}

/** The example with `text` put before its `routes:` line (hand tables), written to a file of its own. */
function variant(name: string, text: string): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, readFileSync(FAT_TREE, "utf8").replace("    routes: {}\n", `${text}    routes: {}\n`));
  return file;
}

describe("strata check --rows", () => {
  test("lists every compiled row with the intent that made it, hand rows as hand rows", async () => {
    const file = variant(
      "hand",
      "    tables:\n      core:\n        forward: [ { match: { dst: 10.9.0.0/16 }, out: 1 } ]\n",
    );
    const r = await strata("check", file, "--rows", "--no-analyze");
    expect(r.code).toBe(EXIT_OK);
    const lines = r.stdout.split("\n");
    const at = lines.indexOf("  ip.core forward");
    expect(lines.slice(at + 1, at + 4).map((l) => l.replace(/\s+/g, " ").trim())).toEqual([
      `dst 10.9.0.0/16 → out 1 hand: 50:20 networks.ip.tables.core.forward[0]`,
      "dst 10.0.0.2/32 → out 1 routes: a1",
      "dst 10.0.0.3/32 → out 2 routes: a2",
    ]);
    expect(r.stdout).toContain("dst 10.0.1.8/30 → out 1");
    expect(r.stdout).toMatch(/out 1 → physical \(default\)\s+compiler \(default row\)/);
  });

  test("--json: the same rows, each with its origin", async () => {
    const r = await strata("check", FAT_TREE, "--rows", "--json", "--no-analyze");
    expect(r.code).toBe(EXIT_OK);
    const report = JSON.parse(r.stdout) as { rows: { member: string; table: string; text: string; from: object }[] };
    expect(report.rows.find((x) => x.member === "ip.core" && x.text === "dst 10.0.1.12/30 → out 2")).toEqual({
      member: "ip.core",
      table: "forward",
      text: "dst 10.0.1.12/30 → out 2",
      from: { intent: "routes", destination: "h5..h8 (4)" },
    });
    expect(report.rows.filter((x) => "compiler" in x.from).every((x) => x.table === "transmit")).toBe(true);
  });

  test("without --rows, no rows", async () => {
    const r = await strata("check", FAT_TREE, "--json", "--no-analyze");
    expect(JSON.parse(r.stdout)).not.toHaveProperty("rows");
  });
});

describe("strata analyze: stated demands", () => {
  test("met on the example", async () => {
    const r = await strata("analyze", FAT_TREE);
    expect(r.code).toBe(EXIT_OK);
    expect(r.stdout).toContain("holds Network_satisfies_communication_demands (210 stated pairs)");
  });

  test("not met: a hand row that drops part of what a pair needs, with the path", async () => {
    // Only UDP to h3 is dropped: the load check cannot tell (the row matches proto too), the analysis can.
    const file = variant(
      "drop",
      "    tables:\n      e1:\n        forward: [ { match: { dst: 10.0.1.10, proto: 17 }, out: drop } ]\n",
    );
    const r = await strata("analyze", file);
    expect(r.code).toBe(EXIT_PROBLEM);
    expect(r.stdout).toContain("FAILS Network_satisfies_communication_demands (210 stated pairs)");
    expect(r.stdout).toContain(
      "ip.h1 must reach ip.h3 (networks.ip.demands[0]), but dst=10.0.1.10 proto=17 ttl=64 " +
        "is dropped at ip.e1 (forward-drop)",
    );
  });
});

describe("bad intents on the command line", () => {
  const CASES: { name: string; text: string; line: RegExp }[] = [
    {
      name: "a hand row that contradicts a demand",
      text: "    tables:\n      e1:\n        forward: [ { match: { dst: 10.0.1.10 }, out: drop } ]\n",
      line: new RegExp(
        "^strata: .*contradiction\\.yaml: 50:20 networks\\.ip\\.tables\\.e1\\.forward\\[0\\]: " +
          "this hand row drops what networks\\.ip\\.demands\\[0\\] asks for \\(e1 → h3\\) at e1, " +
          "where the routes intent sends it on out-link 1 \\(e1-a1\\) " +
          "\\(take the row out, narrow its match, or remove the demand\\)\n$",
      ),
    },
  ];
  test.each(CASES)("$name: one strata: line, exit 2", async ({ text, line }) => {
    const r = await strata("check", variant("contradiction", text));
    expect(r.code).toBe(EXIT_BAD_INPUT);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(line);
  });
});
