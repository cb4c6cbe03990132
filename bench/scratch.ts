// The benchmarks' captures go to one private directory per process (mkdtemp: mode 0700, a
// fresh name), removed when the process exits: nothing another user or an earlier run left in
// a fixed place under /tmp is read, or written through.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

let dir: string | undefined;

/** This process's scratch directory, made on first use. */
export function scratchDir(): string {
  if (dir === undefined) {
    const made = mkdtempSync(join(tmpdir(), "strata-bench-"));
    process.on("exit", () => rmSync(made, { recursive: true, force: true }));
    dir = made;
  }
  return dir;
}
