// docs/analysis.md stays true: every command it shows prints what it shows,
// and every example has its analysis there.

import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { REPLAY_EXAMPLES } from "../helpers/examples.js";

const DOC = readFileSync("docs/analysis.md", "utf8");
const shown = [...DOC.matchAll(/```text\n(\$ strata [^\n]*)\n([\s\S]*?)```/g)].map((m) => ({
  command: m[1] ?? "",
  output: m[2] ?? "",
}));

describe("docs/analysis.md", () => {
  test.each(shown)("$command prints what is shown", async ({ command, output }) => {
    const io = memoryIo();
    await main(command.slice("$ strata ".length).split(" "), io);
    expect(`${io.stdout.text}${io.stderr.text}`).toBe(output);
  });

  test("every example is analysed there", () => {
    const examples = REPLAY_EXAMPLES.flatMap((d) =>
      readdirSync(`examples/${d}`)
        .filter((f) => f === "network.yaml" || f === "merged.yaml")
        .map((f) => `examples/${d}/${f}`),
    );
    const analysed = new Set(shown.map((s) => s.command.split(" ")[3]));
    expect(examples.filter((e) => !analysed.has(e))).toEqual([]);
  });
});
