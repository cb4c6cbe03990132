// A P4 toolchain folder for `strata deploy` in the tests whose p4c-bm2-ss answers from the tests' p4c cache
// (bench/p4/p4c.ts, shared by every P4 test file and vitest worker): deploy compiles each machine's program with
// its own p4c-bm2-ss run, which the cache never sees, and the deploy tests compiled ~80 programs (~0.8 s of CPU
// each) on every run. Here the programs a test deploys are compiled through the cache first (found there from the
// second run on), and the folder's p4c-bm2-ss, a shell script, writes a cached program's JSON where deploy asks for
// it; any other program it hands to the real p4c-bm2-ss, as it does any run with other arguments than deploy's
// (ARGS: the cache's compilation less its P4Info). deploy's own path is unchanged: it finds the folder through
// STRATA_P4TOOLS, runs the compiler in a directory of its own and reads main.json back. lib/ and share/ are the
// real ones. docs-bmv2.test.ts puts its bin/ on the PATH of the doc's shell block, which runs p4c-bm2-ss alike.

import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileP4 } from "../../../bench/p4/p4c.js";
import type { P4Tools } from "./toolchain.js";

export interface CachedToolchain {
  /** The folder, for STRATA_P4TOOLS. */
  readonly root: string;
  /** Compiles `programs` through the cache (at most one p4c per core) and makes them the folder's to answer. */
  add(programs: readonly string[]): Promise<void>;
  close(): void;
}

/** How deploy runs p4c-bm2-ss (src/deploy/p4c.ts): only this run is answered from the cache. */
const ARGS = "--arch v1model -o main.json main.p4";

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");

export function cachedToolchain(tools: P4Tools): CachedToolchain {
  const root = mkdtempSync(join(tmpdir(), "strata-p4c-cached-"));
  for (const d of ["lib", "share"]) symlinkSync(join(tools.root, d), join(root, d));
  const bin = join(root, "bin");
  const known = join(root, "known");
  mkdirSync(bin);
  mkdirSync(known);
  // p4c-bm2-ss ARGS: main.json copied from known/<sha256 of main.p4>.json where the cache holds the program.
  const script = [
    "#!/bin/sh",
    `json=${known}/$(sha256sum < main.p4 2>/dev/null | cut -c1-64).json`,
    `if [ "$*" = "${ARGS}" ] && [ -f "$json" ]; then exec cp "$json" main.json; fi`,
    `exec '${tools.p4cBm2Ss}' "$@"`,
    "",
  ].join("\n");
  writeFileSync(join(bin, "p4c-bm2-ss"), script);
  chmodSync(join(bin, "p4c-bm2-ss"), 0o755);
  return {
    root,
    add: async (programs) => {
      await Promise.all(
        programs.map(async (program) => {
          const compiled = await compileP4(tools, program, "bm2");
          if (compiled.json !== undefined) writeFileSync(join(known, `${sha256(program)}.json`), compiled.json);
        }),
      );
    },
    close: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** Runs `fn` with STRATA_P4TOOLS naming `root`, and puts it back after. */
export async function withToolchain<T>(root: string, fn: () => Promise<T>): Promise<T> {
  const before = process.env["STRATA_P4TOOLS"];
  process.env["STRATA_P4TOOLS"] = root;
  try {
    return await fn();
  } finally {
    if (before === undefined) delete process.env["STRATA_P4TOOLS"];
    else process.env["STRATA_P4TOOLS"] = before;
  }
}
