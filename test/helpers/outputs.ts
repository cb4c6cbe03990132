// What a replay wrote into --out, to compare a queued run's with a one-thread run's: every file under DIR (the marker
// too), by path; summary.json without its timing.

import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { expect } from "vitest";

export function outFiles(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, e.name);
      if (e.isDirectory()) walk(path);
      else files.set(relative(dir, path), readFileSync(path));
    }
  };
  walk(dir);
  const summary = files.get("summary.json");
  if (summary !== undefined)
    files.set(
      "summary.json",
      Buffer.from(String(summary).replace(/"(elapsedSeconds|packetsPerSecond)": [\d.e+-]+/g, '"$1": 0')),
    );
  return files;
}

/** Every file of `expected`'s DIR is in `got`'s, byte for byte, and no other. */
export function expectSameFiles(got: string, expected: string): void {
  const a = outFiles(got);
  const b = outFiles(expected);
  expect([...a.keys()].sort()).toEqual([...b.keys()].sort());
  for (const [file, bytes] of b) expect(a.get(file)?.equals(bytes), `${file}: the same bytes`).toBe(true);
}

/** The files of a DIR claimed by a run that did not end: none but the marker (and its empty subdirectories). */
export function writtenFiles(dir: string): string[] {
  return [...outFiles(dir).keys()].filter((f) => f !== ".strata-output");
}
