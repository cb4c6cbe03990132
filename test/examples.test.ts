// Every example under examples/ is replayed and checked: where each packet
// went (its fate in the trace), the summary's counts, and every output capture
// byte for byte against the example's expected/ folder.
// UPDATE_GOLDENS=1 rewrites expected/ from a run (then read them with tshark).

import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fate } from "../src/cli/trace.js";
import { main } from "../src/cli/main.js";
import { memoryIo } from "../src/cli/io.js";
import type { Summary } from "../src/run/summary.js";
import type { TraceLine } from "../src/run/trace.js";

interface Example {
  summary: string;
  inputs: string[];
  expect: { packets: Summary["packets"]; fates: string[]; links: Record<string, number> };
}

const root = new URL("..", import.meta.url).pathname;
const examples = readdirSync(join(root, "examples"), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);

function captures(dir: string): string[] {
  return ["links", "delivered"].flatMap((sub) => (existsSync(join(dir, sub)) ? readdirSync(join(dir, sub)).map((f) => `${sub}/${f}`) : [])).sort();
}

describe.each(examples)("example %s", (name) => {
  const dir = join(root, "examples", name);
  const example = JSON.parse(readFileSync(join(dir, "example.json"), "utf8")) as Example;

  it("replays to the expected outputs", async () => {
    const out = mkdtempSync(join(tmpdir(), `strata-${name}-`));
    try {
      const io = memoryIo();
      const args = ["run", join(dir, "network.yaml"), ...example.inputs.flatMap((i) => ["--in", i.replace("=pcaps/", `=${root}pcaps/`)]), "--out", out, "--trace"];
      const code = await main(args, io);
      expect(io.stderr.text).toBe("");
      expect(code).toBe(0);

      const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as Summary;
      expect(summary.packets).toEqual(example.expect.packets);
      expect(Object.fromEntries(Object.entries(summary.links).map(([k, v]) => [k, v.packets]))).toEqual(example.expect.links);

      const lines = readFileSync(join(out, "trace.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as TraceLine);
      expect(lines.map((l) => fate(l.steps))).toEqual(example.expect.fates);

      const golden = join(dir, "expected");
      if (process.env.UPDATE_GOLDENS === "1") {
        rmSync(golden, { recursive: true, force: true });
        for (const f of captures(out)) cpSync(join(out, f), join(golden, f));
      }
      // No marker: strata refuses expected/ as an --out like any directory it did not write.
      expect(existsSync(join(golden, ".strata-output"))).toBe(false);
      expect(captures(out)).toEqual(captures(golden));
      for (const f of captures(golden)) expect(readFileSync(join(out, f)), f).toEqual(readFileSync(join(golden, f)));
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
