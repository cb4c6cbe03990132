// The quick reader (src/description/quick-source.ts) against the yaml library (./source.ts): on
// every text it takes, the same data, the same place for every path and key, the same source text.

import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { stringify } from "yaml";
import { type Path, Problems } from "../../src/description/problems.js";
import { Unplaced } from "../../src/description/quick-places.js";
import { quickSource } from "../../src/description/quick-source.js";
import { type ParsedSource, parseSource } from "../../src/description/source.js";

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path);
    return /\.(ya?ml|json)$/.test(name) ? [path] : [];
  });
}

/** Every path of `data` (with one past each container's end), for locate and sourceText. */
function pathsOf(data: unknown, at: Path = []): Path[] {
  const out: Path[] = [at];
  if (Array.isArray(data)) {
    data.forEach((v, i) => out.push(...pathsOf(v, [...at, i])));
    out.push([...at, data.length], [...at, "x"]);
  } else if (typeof data === "object" && data !== null) {
    for (const [k, v] of Object.entries(data)) out.push(...pathsOf(v, [...at, k]));
    out.push([...at, "no such key"], [...at, 0]);
  }
  return out;
}

/** What a source says about each path; an Unplaced answer as such. */
function answers(source: ParsedSource, paths: readonly Path[]): unknown[] {
  const ask = (f: () => unknown): unknown => {
    try {
      return f();
    } catch (err) {
      if (err instanceof Unplaced) return "unplaced";
      throw err;
    }
  };
  return paths.map((p) => [
    ask(() => source.locator.locate(p, false)),
    ask(() => source.locator.locate(p, true)),
    ask(() => source.sourceText(p)),
  ]);
}

/** Whether the quick reader took `text`; when it did, it must agree with the library everywhere but Unplaced. */
function agrees(text: string): boolean {
  const quick = quickSource(text);
  if (quick === undefined) return false;
  const slow = parseSource(text, new Problems("t.yaml"));
  expect(slow, "the library refuses what the quick reader took").toBeDefined();
  if (slow === undefined) return true;
  expect(quick.data).toStrictEqual(slow.data);
  const paths = pathsOf(slow.data);
  const q = answers(quick, paths);
  const s = answers(slow, paths);
  q.forEach((a, i) => {
    const b = s[i] as unknown[];
    (a as unknown[]).forEach((x, j) => {
      if (x !== "unplaced") expect([paths[i], j, x]).toStrictEqual([paths[i], j, b[j]]);
    });
  });
  return true;
}

const FILES = [...filesUnder("examples"), ...filesUnder("test/fixtures")].filter((f) => statSync(f).size < 2e6);

describe("every example and fixture", () => {
  test.each(FILES)("%s", (file) => {
    const text = readFileSync(file, "utf8");
    agrees(text);
    // The same data as JSON, as a program writes it: indented and on one line.
    const slow = parseSource(text, new Problems(file));
    if (slow === undefined) return;
    expect(agrees(JSON.stringify(slow.data, null, 2))).toBe(true);
    expect(agrees(JSON.stringify(slow.data))).toBe(true);
  });
});
