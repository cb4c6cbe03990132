// docs/api.md and the README's library section stay true: every TypeScript snippet runs (from the repository's root,
// "strata" being this checkout's src/index.ts) and prints what the text block under it shows.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { format } from "node:util";
import { afterAll, describe, expect, test, vi } from "vitest";
import { DOC_SNIPPETS, snippets } from "./snippets.js";

const SNIPPETS = DOC_SNIPPETS;
const INDEX = resolve("src/index.ts");
const dir = mkdtempSync(join(tmpdir(), "strata-api-docs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("docs/api.md and README.md", () => {
  test("have snippets, the README's ten lines or fewer", () => {
    expect(snippets("docs/api.md").length).toBeGreaterThanOrEqual(5);
    const readme = snippets("README.md");
    expect(readme.length).toBe(1);
    expect(readme[0]?.code.trimEnd().split("\n").length).toBeLessThanOrEqual(10);
  });

  test.each(SNIPPETS.map((s, i) => ({ ...s, i })))("$name prints what is shown", async ({ code, prints, i }) => {
    const file = join(dir, `snippet-${i}.ts`);
    writeFileSync(file, code.replaceAll('from "strata"', `from ${JSON.stringify(INDEX)}`));
    const lines: string[] = [];
    const log = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void lines.push(format(...args)));
    try {
      await import(file);
    } finally {
      log.mockRestore();
    }
    if (prints !== undefined) expect(lines.map((l) => `${l}\n`).join("")).toBe(prints);
  });
});
