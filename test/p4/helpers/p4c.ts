// p4c on exported programs, for the tests: p4c-bm2-ss (bmv2's JSON and p4c's own P4Info) and
// p4test, each program compiled once per toolchain. Results are kept in a cache under the
// system's temporary directory, keyed by the program's text and the compiler's version, so the
// test files that need the same program (compile, P4Info, the bmv2 runs) share one compilation,
// also across vitest's worker processes; compilations run in parallel, one per core.

import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import type { P4Tools } from "./toolchain.js";

export interface Compiled {
  /** The program's cache directory: main.p4, main.json, p4info.txtpb. */
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
  return join(CACHE, createHash("sha256").update(compilerVersion(tools)).update("\0").update(program).digest("hex").slice(0, 32));
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

function run(tools: P4Tools, command: string, args: readonly string[], cwd: string): Promise<{ status: number; stderr: string }> {
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

function load(dir: string, compilers: Compilers): Compiled | undefined {
  const bm2 = read(join(dir, "bm2.result"));
  const p4test = read(join(dir, "p4test.result"));
  if (bm2 === undefined || (compilers === "both" && p4test === undefined)) return undefined;
  const parse = (text: string | undefined): { status: number; stderr: string } => (text === undefined ? { status: -1, stderr: "(not run)" } : (JSON.parse(text) as { status: number; stderr: string }));
  return { dir, json: read(join(dir, "main.json")), p4info: read(join(dir, "p4info.txtpb")), bm2: parse(bm2), p4test: parse(p4test) };
}

/** Compiles a program (or finds it compiled): `p4c-bm2-ss --arch v1model` and, with "both", `p4test`. */
export async function compileP4(tools: P4Tools, program: string, compilers: Compilers = "both"): Promise<Compiled> {
  const dir = cacheDir(tools, program);
  const cached = load(dir, compilers);
  if (cached !== undefined) return cached;
  mkdirSync(CACHE, { recursive: true });
  // Another test process compiling the same program: wait for its result rather than compile it twice.
  const lock = `${dir}.lock`;
  if (!claim(lock)) {
    for (const started = Date.now(); existsSync(lock) && Date.now() - started < LOCK_STALE_MS; ) await sleep(50);
    const theirs = load(dir, compilers);
    if (theirs !== undefined) return theirs;
    claim(lock, true);
  }
  try {
    return await compileAside(tools, program, dir, compilers);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** A compilation that takes longer than this is taken for one whose process died. */
const LOCK_STALE_MS = 120_000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Takes the lock (a directory: made or not, atomically); `force` takes it whatever. */
function claim(lock: string, force = false): boolean {
  try {
    mkdirSync(lock);
    return true;
  } catch {
    return force;
  }
}

async function compileAside(tools: P4Tools, program: string, dir: string, compilers: Compilers): Promise<Compiled> {
  // Compile aside, then move into place: a reader never sees half a result.
  const work = mkdtempSync(join(CACHE, "work-"));
  try {
    writeFileSync(join(work, "main.p4"), program);
    const [bm2, p4test] = await Promise.all([
      run(tools, tools.p4cBm2Ss, ["--arch", "v1model", "-o", "main.json", "--p4runtime-files", "p4info.txtpb", "main.p4"], work),
      compilers === "both" ? run(tools, tools.p4test, ["main.p4"], work) : Promise.resolve(undefined),
    ]);
    writeFileSync(join(work, "bm2.result"), JSON.stringify(bm2));
    if (p4test !== undefined) writeFileSync(join(work, "p4test.result"), JSON.stringify(p4test));
    const done = load(dir, compilers);
    if (done !== undefined) return done; // another process finished first
    rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(work, dir);
    } catch {
      // another process moved its result into place between the two calls
    }
    return load(dir, compilers) ?? load(work, compilers) ?? { dir: work, json: undefined, p4info: undefined, bm2, p4test: p4test ?? { status: -1, stderr: "(not run)" } };
  } finally {
    if (existsSync(work)) rmSync(work, { recursive: true, force: true });
  }
}

/** Compiles many programs, as many at a time as there are cores. */
export function compileAll(tools: P4Tools, programs: readonly string[], compilers: Compilers = "both"): Promise<Compiled[]> {
  return Promise.all(programs.map((p) => compileP4(tools, p, compilers)));
}

/** The warnings and errors of a compiler's stderr, one line each ("main.p4(33): [--Wwarn=unused] warning: 'X' is unused"). */
export function diagnostics(stderr: string): string[] {
  return stderr.split("\n").filter((l) => /\b(warning|error)\b/.test(l));
}
