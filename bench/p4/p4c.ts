// p4c on exported programs, for the tests and the bench: p4c-bm2-ss (bmv2's JSON and p4c's own P4Info) and
// p4test, each program compiled once per toolchain. Results are kept in a cache under the
// system's temporary directory, keyed by the program's text and the compiler's version, so the
// test files that need the same program (compile, P4Info, the bmv2 runs) share one compilation,
// also across vitest's worker processes (a lock per program and compiler); compilations run in
// parallel, one per core.

import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import type { P4Tools } from "./toolchain.js";

export interface Compiled {
  /** Where p4c-bm2-ss wrote its files: main.p4, main.json, p4info.txtpb. */
  readonly dir: string;
  /** bmv2's JSON (p4c-bm2-ss -o), or undefined when p4c-bm2-ss failed. */
  readonly json: string | undefined;
  /** p4c's P4Info in text format (--p4runtime-files). */
  readonly p4info: string | undefined;
  /** Exit codes and everything each compiler wrote on stderr (its warnings and errors). */
  readonly bm2: { readonly status: number; readonly stderr: string };
  readonly p4test: { readonly status: number; readonly stderr: string };
}

/** Which compilers to run: p4test is a check of its own; the bmv2 runs need only p4c-bm2-ss. */
export type Compilers = "both" | "bm2";

const CACHE = join(tmpdir(), "strata-p4c-cache");

let version: string | undefined;
function compilerVersion(tools: P4Tools): string {
  version ??= spawnSync(tools.p4cBm2Ss, ["--version"], { env: tools.env, encoding: "utf8" }).stdout.trim();
  return version;
}

/** The program's directory in the cache. */
export function cacheDir(tools: P4Tools, program: string): string {
  return join(
    CACHE,
    createHash("sha256").update(compilerVersion(tools)).update("\0").update(program).digest("hex").slice(0, 32),
  );
}

/** Runs at most one compiler per core at a time, in this process. */
const slots = { free: Math.max(1, availableParallelism()), waiting: [] as (() => void)[] };
async function limited<T>(run: () => Promise<T>): Promise<T> {
  if (slots.free === 0) await new Promise<void>((resolve) => slots.waiting.push(resolve));
  else slots.free--;
  try {
    return await run();
  } finally {
    const next = slots.waiting.shift();
    if (next !== undefined) next();
    else slots.free++;
  }
}

function run(
  tools: P4Tools,
  command: string,
  args: readonly string[],
  cwd: string,
): Promise<{ status: number; stderr: string }> {
  return limited(
    () =>
      new Promise((resolve, reject) => {
        const child = spawn(command, args, { cwd, env: tools.env, stdio: ["ignore", "ignore", "pipe"] });
        let stderr = "";
        child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
        child.on("error", reject);
        child.on("close", (status) => resolve({ status: status ?? -1, stderr }));
      }),
  );
}

const read = (path: string): string | undefined => (existsSync(path) ? readFileSync(path, "utf8") : undefined);

type Compiler = "bm2" | "p4test";
type Result = { readonly status: number; readonly stderr: string };
const NOT_RUN: Result = { status: -1, stderr: "(not run)" };

const ARGS: Record<Compiler, (tools: P4Tools) => [string, string[]]> = {
  bm2: (tools) => [
    tools.p4cBm2Ss,
    ["--arch", "v1model", "-o", "main.json", "--p4runtime-files", "p4info.txtpb", "main.p4"],
  ],
  p4test: (tools) => [tools.p4test, ["main.p4"]],
};

/** Compiles a program (or finds it compiled): `p4c-bm2-ss --arch v1model` and, with "both", `p4test`. */
export async function compileP4(tools: P4Tools, program: string, compilers: Compilers = "both"): Promise<Compiled> {
  const dir = cacheDir(tools, program);
  const [bm2, p4test] = await Promise.all([
    compileWith(tools, program, dir, "bm2"),
    compilers === "both" ? compileWith(tools, program, dir, "p4test") : Promise.resolve(NOT_RUN),
  ]);
  return {
    dir: join(dir, "bm2"),
    json: read(join(dir, "bm2", "main.json")),
    p4info: read(join(dir, "bm2", "p4info.txtpb")),
    bm2,
    p4test,
  };
}

/** One compiler's result, in <dir>/<compiler>/: from the cache, or compiled now. */
async function compileWith(tools: P4Tools, program: string, dir: string, compiler: Compiler): Promise<Result> {
  const place = join(dir, compiler);
  const result = (): Result | undefined => {
    const text = read(join(place, "result.json"));
    return text === undefined ? undefined : (JSON.parse(text) as Result);
  };
  const cached = result();
  if (cached !== undefined) return cached;
  mkdirSync(dir, { recursive: true });
  // Another test process compiling the same program: wait for its result rather than compile it twice, as long as that
  // process runs (it may have many compilations queued before this one: on a busy machine, minutes of them).
  const lock = `${place}.lock`;
  if (!claim(lock)) {
    while (held(lock)) await sleep(50);
    const theirs = result();
    if (theirs !== undefined) return theirs;
    claim(lock, true);
  }
  try {
    // Compile aside, then move into place: a reader never sees half a result.
    const work = mkdtempSync(join(dir, `${compiler}-`));
    writeFileSync(join(work, "main.p4"), program);
    const [command, args] = ARGS[compiler](tools);
    const r = await run(tools, command, args, work);
    writeFileSync(join(work, "result.json"), JSON.stringify(r));
    rmSync(place, { recursive: true, force: true });
    renameSync(work, place);
    return r;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Takes the lock (a file made only where there is none, holding this process's id); `force` takes it whatever. */
function claim(lock: string, force = false): boolean {
  try {
    writeFileSync(lock, String(process.pid), { flag: "wx" });
    return true;
  } catch {
    if (!force) return false;
    rmSync(lock, { recursive: true, force: true });
    writeFileSync(lock, String(process.pid));
    return true;
  }
}

/** Whether `lock` is there and its process runs (one whose id is not written yet counts as running). */
function held(lock: string): boolean {
  let id: string;
  try {
    id = readFileSync(lock, "utf8");
  } catch {
    return false; // released, or not a lock this code made
  }
  if (id === "") return true;
  try {
    process.kill(Number(id), 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Compiles many programs, as many at a time as there are cores. */
export function compileAll(
  tools: P4Tools,
  programs: readonly string[],
  compilers: Compilers = "both",
): Promise<Compiled[]> {
  return Promise.all(programs.map((p) => compileP4(tools, p, compilers)));
}

/** The warnings and errors of a compiler's stderr, one line each ("main.p4(33): [--Wwarn=unused] warning: 'X' is
 * unused"). */
export function diagnostics(stderr: string): string[] {
  return stderr.split("\n").filter((l) => /\b(warning|error)\b/.test(l));
}
