// replay() is `strata run`: for every example, the library's replay writes the files the command writes, byte for
// byte (summary.json but for the time it took), and a description built in code replays as its file does.

import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { readDescription, replay } from "../../src/index.js";
import { REPLAY_EXAMPLES } from "../helpers/examples.js";

interface Example {
  readonly inputs: readonly string[];
}

const EXAMPLES = REPLAY_EXAMPLES.map((d) => ({
  spec: `examples/${d}/network.yaml`,
  inputs: (JSON.parse(readFileSync(`examples/${d}/example.json`, "utf8")) as Example).inputs,
})).filter((e) => e.inputs.length > 0);

const dir = mkdtempSync(join(tmpdir(), "strata-api-replay-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let made = 0;
const fresh = (): string => join(dir, `out-${made++}`);

/** Every file under `root` but the claim's marker and lock, by path, its bytes (summary.json without its times). */
function files(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (!name.startsWith(".")) out[relative(root, path)] = readFileSync(path).toString("base64");
    }
  };
  walk(root);
  const summary = out["summary.json"];
  if (summary !== undefined) {
    const s = JSON.parse(Buffer.from(summary, "base64").toString()) as Record<string, unknown>;
    delete s["elapsedSeconds"];
    delete s["packetsPerSecond"];
    out["summary.json"] = JSON.stringify(s);
  }
  return out;
}

async function strataRun(spec: string, inputs: readonly string[], more: readonly string[] = []): Promise<string> {
  const out = fresh();
  const io = memoryIo();
  const code = await main(["run", spec, ...inputs.flatMap((i) => ["--in", i]), "--out", out, ...more], io);
  expect(io.stderr.text).toBe("");
  expect(code).toBe(0);
  return out;
}

const byEndpoint = (inputs: readonly string[]): Record<string, string> =>
  Object.fromEntries(inputs.map((i) => [i.slice(0, i.indexOf("=")), i.slice(i.indexOf("=") + 1)]));

describe("replay() writes what strata run writes", () => {
  test.each(EXAMPLES)("$spec", async ({ spec, inputs }) => {
    const cli = await strataRun(spec, inputs, ["--trace"]);
    const out = fresh();
    const result = replay(spec, { inputs: byEndpoint(inputs), out, trace: true });
    expect(result.errors).toEqual([]);
    const written = files(out);
    expect(Object.keys(written)).toContain("trace.jsonl");
    expect(written).toEqual(files(cli));
  });

  test("a description in code replays as its file does (its recordings byte for byte)", async () => {
    const { spec, inputs } = EXAMPLES.find((e) => e.spec.includes("ip-router/")) ?? { spec: "", inputs: [] };
    const cli = files(await strataRun(spec, inputs));
    const out = fresh();
    replay(readDescription(spec), { inputs: byEndpoint(inputs), out, name: spec });
    expect(files(out)).toEqual(cli);
  });
});
