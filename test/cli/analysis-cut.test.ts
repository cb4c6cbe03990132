// A ternary ACL of random masks, 128 rows (bench/analysis-descriptions.ts): its behaviours outgrow the class
// diagram, and the rows cut the classes instead (src/analysis/tables.ts), making classes as they go. strata analyze
// ends with the classes made and one line saying what was and was not proven, exit 3 (not 1, "a property fails");
// strata check says the description is valid, exit 0, and that the analysis was cut short, with the flag to run it in
// full. The budgets are time limits (analyze --time-limit 1, check's own 3 s): the counts vary with the machine, and
// the test reads the words and that some classes were made (the same made deterministically, by a node bound, in
// test/analysis/budget.test.ts). How many tables the time cut by their rows depends on the CPU the limit got: on a
// loaded machine the first table's share runs out sooner, and the others' too (CI saw 3 tables, 1 class made). Each
// case spends its whole time limit: one ACL, the larger (64 rows said nothing more).

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { EXIT_INCOMPLETE, EXIT_OK } from "../../src/cli/exit-codes.js";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { ternaryAcl } from "../analysis/helpers/generate.js";

const dir = mkdtempSync(join(tmpdir(), "strata-analysis-cut-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function strata(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo();
  const code = await main(argv, io);
  return { code, stdout: io.stdout.text, stderr: io.stderr.text };
}

const ACLS = [128].map((rows) => {
  const file = join(dir, `acl-${rows}.yaml`);
  writeFileSync(file, ternaryAcl(rows));
  return { rows, file };
});

/** A loaded machine: the analyses take seconds each (a limit for a hang, not a budget). */
const TIMEOUT_MS = 120_000;

/** The number of header classes a line says were made. */
const made = (line: string): number => Number(/ipv4 ([\d,]+) made/.exec(line)?.[1]?.replace(/,/g, ""));

describe("strata analyze on a random-mask ternary ACL: the classes made, one line, exit 3", () => {
  test.each(ACLS)(
    "$rows rows",
    async ({ rows, file }) => {
      const r = await strata("analyze", file, "--time-limit", "1");
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: EXIT_INCOMPLETE, stderr: "" });
      const [first, last, ...more] = r.stdout.trimEnd().split("\n");
      expect(more).toEqual([]);
      expect(first).toMatch(
        new RegExp(
          `^${file}: header classes: ipv4 [\\d,]+ made before the analysis stopped \\((1 table cut by its rows, its|` +
            "[\\d,]+ tables cut by their rows, their) behaviours past their share of the budget\\)$",
        ),
      );
      expect(made(first ?? "")).toBeGreaterThan(0);
      expect(last).toMatch(
        new RegExp(
          `^cut short: --time-limit 1 s ran out while building the ipv4 header classes \\(\\d+ of ${rows} row ` +
            "patterns\\); no property was checked \\(the description is valid\\) \\(--time-limit 0 runs it in full\\)$",
        ),
      );
    },
    TIMEOUT_MS,
  );
});

describe("strata check on a random-mask ternary ACL, its own budget: valid, exit 0, the analysis cut short", () => {
  test.each(ACLS)(
    "$rows rows",
    async ({ file }) => {
      const r = await strata("check", file);
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: EXIT_OK, stderr: "" });
      expect(r.stdout.startsWith(`${file}: valid, 1 network\n`)).toBe(true);
      const last = r.stdout.trimEnd().split("\n").at(-1) ?? "";
      expect(last).toMatch(
        new RegExp(
          "^analysis cut short: --time-limit 3 s ran out while building the ipv4 header classes \\(\\d+ of \\d+ row " +
            "patterns\\); no warning was looked for \\(header classes: ipv4 [\\d,]+ made; 1 table cut by its rows, " +
            "its behaviours past their share of the budget\\) \\(strata check --time-limit 0 runs it in full\\)$",
        ),
      );
      expect(made(last)).toBeGreaterThan(1);
    },
    TIMEOUT_MS,
  );
});
