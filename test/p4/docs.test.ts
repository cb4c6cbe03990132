// docs/targets.md stays true: the commands it shows print what it shows, its
// profile excerpt is the bundled asic-example, its fleet is the router example's.

import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../..//src/cli/main.js";
import { loadFleet } from "../../src/p4/fleet.js";
import { loadProfile, parseProfile } from "../../src/p4/targets.js";

const DOC = readFileSync("docs/targets.md", "utf8");

function blocks(lang: string): string[] {
  return [...DOC.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1] ?? "");
}

/** Lines without comments and blank lines. */
const bare = (text: string): string =>
  text
    .split("\n")
    .filter((l) => l.trim() !== "" && !l.trim().startsWith("#"))
    .join("\n");

describe("docs/targets.md", () => {
  const shown = blocks("text").filter((b) => b.startsWith("$ strata "));

  test.each(shown.map((b) => [b.split("\n")[0] ?? "", b] as const))(
    "%s prints what is shown",
    async (command, block) => {
      const io = memoryIo();
      await main(command.slice("$ strata ".length).split(" "), io);
      expect(block).toBe(`${command}\n${io.stdout.text}${io.stderr.text}`);
    },
  );

  test("the profile excerpt is targets/asic-example.yaml", () => {
    const excerpt = blocks("yaml").find((b) => b.startsWith("# targets/asic-example.yaml"));
    const { file: _a, summary: _b, ...shown } = parseProfile(excerpt ?? "", "excerpt.yaml");
    const { file: _c, summary: _d, ...bundled } = loadProfile("asic-example");
    expect(shown).toEqual(bundled);
  });

  test("the fleet is examples/ip-router/fleet.yaml", () => {
    const fleet = blocks("yaml").find((b) => b.startsWith("# examples/ip-router/fleet.yaml"));
    expect(bare(fleet ?? "")).toBe(bare(readFileSync("examples/ip-router/fleet.yaml", "utf8")));
    expect(loadFleet("examples/ip-router/fleet.yaml").targets.length).toBe(2);
  });
});
