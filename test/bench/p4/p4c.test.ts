// p4c's cache (bench/p4/p4c.ts) between test processes: a program another process is compiling
// is waited for as long as that process runs, however long (on a busy machine its queue of
// compilations takes minutes), and a lock left by a process that died is taken over at once, not
// after a time.

import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cacheDir, compileP4 } from "../../../bench/p4/p4c.js";
import { exportSpec } from "../../p4/helpers/examples.js";
import { findP4Tools, P4_REQUIRED } from "../../p4/helpers/toolchain.js";
import { HANG_MS } from "../../helpers/wait.js";

const tools = findP4Tools();
const skip = !P4_REQUIRED && "missing" in tools;
const why = "missing" in tools ? ` (skipped: ${tools.missing})` : "";

/** A program no cache holds yet: an example's, with a comment of its own. */
const fresh = (): string =>
  `// ${process.pid} ${Math.random()}\n${exportSpec("examples/ip-router/network.yaml")[0]?.files["main.p4"] as string}`;

/** The id of a process that has exited. */
const deadPid = (): number => spawnSync("true").pid ?? 0;

describe.skipIf(skip)(`p4c's cache, shared between test processes${why}`, () => {
  it(
    "a lock left by a process that died is taken over at once: the program is compiled",
    async () => {
      if ("missing" in tools) throw new Error(tools.missing);
      const program = fresh();
      const dir = cacheDir(tools, program);
      mkdirSync(dir, { recursive: true });
      try {
        writeFileSync(join(dir, "bm2.lock"), String(deadPid()));
        const compiled = await compileP4(tools, program, "bm2");
        expect(compiled.bm2.status).toBe(0);
        expect(compiled.json).toBeDefined();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    // 62363b8 waited 120 s on any lock before taking it.
    HANG_MS,
  );

  it("a lock its process holds is waited for, and that process's result taken", async () => {
    if ("missing" in tools) throw new Error(tools.missing);
    const program = fresh();
    const dir = cacheDir(tools, program);
    mkdirSync(join(dir, "bm2"), { recursive: true });
    try {
      writeFileSync(join(dir, "bm2.lock"), String(process.pid));
      const waiting = compileP4(tools, program, "bm2");
      // The holder's result, as compileWith writes it, then its lock released: a compilation of the waiter's own would
      // have p4c's stderr instead.
      writeFileSync(join(dir, "bm2", "main.json"), "{}");
      writeFileSync(join(dir, "bm2", "result.json"), JSON.stringify({ status: 0, stderr: "the holder's" }));
      rmSync(join(dir, "bm2.lock"));
      expect((await waiting).bm2.stderr).toBe("the holder's");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
