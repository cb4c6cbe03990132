// An --out directory is one command's while it runs (src/out-dir.ts): a second claim, in this
// process or another, is refused with one line naming the first's pid and leaves nothing behind;
// a lock left by a strata that was killed is taken over. And every file is made through the
// directories strata opened: a subdirectory swapped for a symbolic link after the claim is never
// written through.

import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InputError } from "../../src/errors.js";
import { OutDir } from "../../src/out-dir.js";
import { openCapture } from "../../src/pcap/index.js";
import type { Summary } from "../../src/engine/summary.js";
import { openServed } from "../engine/served.js";
import { snapshot } from "./helpers/snapshot.js";

const root = new URL("../..", import.meta.url).pathname;
const CLI = join(root, "dist/src/cli/main.js");
const HUB = join(root, "examples/hub-and-spoke/network.yaml");
const H1 = join(root, "pcaps/example-hub-h1.pcap");
const H3 = join(root, "pcaps/example-hub-h3.pcap");
const ROUTER = join(root, "examples/live-router/network.yaml");
const ROUTER_H1 = join(root, "pcaps/example-router-h1.pcap");

let dir = "";
const claims: OutDir[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "strata-claims-"));
});
afterEach(() => {
  try {
    for (const c of claims.splice(0)) c.release();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const RUN_FILES = { command: "run", inputs: [], files: ["links/a.pcap", "summary.json"], dirs: ["links"] };

const claim = (out: string): OutDir => {
  const c = OutDir.claim(out, RUN_FILES);
  claims.push(c);
  return c;
};

/** The lock file a strata with this pid and start would make. */
const lockName = (pid: number, start: string): string => `.strata-lock.${pid}.${start}.1`;

/** A pid no process has now: one that ran and ended. */
function deadPid(): number {
  const r = spawnSync("true");
  if (r.pid === undefined) throw new Error("no pid");
  return r.pid;
}

describe("a second claim of a directory a strata holds is refused, one line naming the pid, nothing left", () => {
  it.each([
    { name: "into a new directory (the first made it)", out: () => join(dir, "new", "out") },
    { name: "into an empty directory", out: () => dir },
    {
      name: "into a directory strata wrote before",
      out: () => {
        claim(dir).release();
        return dir;
      },
    },
  ])("$name", ({ out }) => {
    const path = out();
    claim(path);
    const before = snapshot(dir);
    let error: unknown;
    try {
      claim(path);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InputError);
    expect((error as Error).message).toBe(
      `${path}: --out is being written by another strata (pid ${process.pid}) ` +
        "(wait for it to end, or choose another --out)",
    );
    expect(snapshot(dir)).toEqual(before);
    // Once the first lets it go, the directory is claimed again, and its lock is gone.
    for (const c of claims.splice(0)) c.release();
    expect(readdirSync(path).filter((n) => n.startsWith(".strata-lock"))).toEqual([]);
    claim(path);
  });
});

describe("a lock whose strata is gone is taken over; it does not make a directory strata's or not empty", () => {
  const start = readFileSync("/proc/self/stat", "utf8").split(") ")[1]?.split(" ")[19] ?? "0";
  it.each([
    { name: "its process ended", lock: () => lockName(deadPid(), "1") },
    { name: "its pid is another process's now (another start)", lock: () => lockName(process.pid, `${start}0`) },
  ])("$name", ({ lock }) => {
    const stale = lock();
    writeFileSync(join(dir, stale), "strata run, pid …\n");
    claim(dir); // an empty directory but for the lock: no --force needed
    expect(existsSync(join(dir, stale))).toBe(false);
    expect(readdirSync(dir).filter((n) => n.startsWith(".strata-lock"))).toHaveLength(1);
  });

  it("a directory with a stale lock and other files is still not strata's", () => {
    writeFileSync(join(dir, lockName(deadPid(), "1")), "");
    writeFileSync(join(dir, "notes.txt"), "mine");
    const before = snapshot(dir);
    expect(() => claim(dir)).toThrow(/--out is not empty and has no \.strata-output/);
    expect(snapshot(dir)).toEqual(before);
  });
});

/** A child's exit code and what it printed. */
function exited(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

/** Resolves once `path` exists (the first run has claimed --out), or rejects once `child` has ended. */
async function appears(path: string, child: ChildProcess): Promise<void> {
  while (!existsSync(path)) {
    if (child.exitCode !== null) throw new Error(`the first run ended (${child.exitCode}) before it claimed --out`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The records of a capture. */
function records(file: string): number {
  const r = openCapture(file);
  let n = 0;
  for (const b of r.batches()) n += b.count;
  r.close();
  return n;
}

describe("two strata runs into one new --out", () => {
  it("the second is refused while the first runs; the first's outputs are its own, as its summary says", async () => {
    // The first run reads its capture from a pipe: it holds --out, deterministically, until the pipe is written.
    const fifo = join(dir, "h1.fifo");
    execFileSync("mkfifo", [fifo]);
    const out = join(dir, "out");
    const first = spawn(process.execPath, [CLI, "run", HUB, "--in", `lan:h1.1=${fifo}`, "--out", out], { cwd: root });
    const firstDone = exited(first);
    const pipe = await open(fifo, "w");
    const capture = readFileSync(H1);
    await pipe.write(capture.subarray(0, 24)); // the file header: the run opens its input, then claims --out
    await appears(join(out, ".strata-output"), first);

    const second = await exited(
      spawn(process.execPath, [CLI, "run", HUB, "--in", `lan:h3.1=${H3}`, "--out", out], { cwd: root }),
    );
    expect(second.code).toBe(2);
    expect(second.stdout).toBe("");
    expect(second.stderr).toBe(
      `strata: ${out}: --out is being written by another strata (pid ${first.pid}) ` +
        "(wait for it to end, or choose another --out)\n",
    );

    await pipe.write(capture.subarray(24));
    await pipe.close();
    const done = await firstDone;
    expect(done.stderr).toBe("");
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(new RegExp(`^outputs in ${out}: `, "m"));
    const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as Summary;
    expect(summary.inputs.map((i) => i.file)).toEqual([fifo]);
    // Every recording is the first run's: the files the summary names, each with the records it counts, and no other.
    const files = Object.values(summary.links).flatMap((l) => (l.file === null ? [] : [l.file]));
    expect(readdirSync(join(out, "links")).map((f) => `links/${f}`)).toEqual(files.sort());
    for (const l of Object.values(summary.links))
      if (l.file !== null) expect(records(join(out, l.file))).toBe(l.packets);
    for (const d of Object.values(summary.delivered)) expect(records(join(out, d.file))).toBe(d.packets);
    expect(readdirSync(out).sort()).toEqual([".strata-output", "delivered", "links", "summary.json"]);
  }, 60_000);
});

describe("a strata that a signal ends: its lock goes with it, or the next command takes it over", () => {
  const locks = (out: string): string[] => readdirSync(out).filter((n) => n.startsWith(".strata-lock"));
  it.each([
    {
      name: "strata serve --out, SIGTERM: it stops cleanly and removes its lock",
      argv: (out: string) => ["serve", HUB, "--out", out],
      ready: (stderr: string) => /^serving /m.test(stderr),
      signal: "SIGTERM" as const,
      left: 0,
    },
    {
      name: "strata run, SIGKILL while it reads a pipe: its lock stays, and the next run takes it over",
      argv: (out: string) => {
        const fifo = join(dir, "h1.fifo");
        execFileSync("mkfifo", [fifo]);
        return ["run", HUB, "--in", `lan:h1.1=${fifo}`, "--out", out];
      },
      ready: (_: string, out: string) => existsSync(join(out, ".strata-output")),
      signal: "SIGKILL" as const,
      left: 1,
    },
  ])(
    "$name",
    async ({ argv, ready, signal, left }) => {
      const out = join(dir, "out");
      const args = argv(out);
      const child = spawn(process.execPath, [CLI, ...args], { cwd: root });
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      const done = exited(child);
      const fifo = args.find((a) => a.endsWith(".fifo"))?.split("=")[1];
      const pipe = fifo === undefined ? undefined : await open(fifo, "w");
      await pipe?.write(readFileSync(H1).subarray(0, 24));
      while (!ready(stderr, out)) {
        if (child.exitCode !== null) throw new Error(`strata ended (${child.exitCode}): ${stderr}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      child.kill(signal);
      await done;
      await pipe?.close();
      expect(locks(out)).toHaveLength(left);
      const next = spawnSync(process.execPath, [CLI, "run", HUB, "--in", `lan:h3.1=${H3}`, "--out", out], {
        cwd: root,
        encoding: "utf8",
      });
      expect(next.stderr).toBe("");
      expect(next.status).toBe(0);
      expect(locks(out)).toEqual([]);
    },
    60_000,
  );
});

describe("a subdirectory swapped for a symbolic link after the claim is never written through", () => {
  const swaps = [
    {
      name: "moved away, a link in its place",
      swap: (sub: string) => {
        renameSync(join(dir, "out", sub), join(dir, "out", `${sub}.moved`));
        symlinkSync(join(dir, "elsewhere", sub), join(dir, "out", sub));
      },
    },
    {
      name: "removed (empty), a link in its place",
      swap: (sub: string) => {
        rmdirSync(join(dir, "out", sub));
        symlinkSync(join(dir, "elsewhere", sub), join(dir, "out", sub));
      },
    },
  ];
  it.each(swaps)("$name: links/ and delivered/", ({ swap }) => {
    const [frame] = (() => {
      const r = openCapture(ROUTER_H1);
      const out: Uint8Array[] = [];
      for (const b of r.batches())
        for (let i = 0; i < b.count; i++)
          out.push(b.data.slice(b.offset[i] ?? 0, (b.offset[i] ?? 0) + (b.capLen[i] ?? 0)));
      r.close();
      return out;
    })();
    if (frame === undefined) throw new Error("empty capture");
    mkdirSync(join(dir, "elsewhere", "links"), { recursive: true });
    mkdirSync(join(dir, "elsewhere", "delivered"), { recursive: true });
    const out = join(dir, "out");
    const { em, stop } = openServed({ spec: ROUTER, endpoints: ["lanA:hostA"], out, flushMs: 0 });
    // Claimed; before the first recording is made, both subdirectories are swapped.
    swap("links");
    swap("delivered");
    let error: unknown;
    try {
      for (let k = 0; k < 4; k++) {
        em.submit(0, frame);
        em.flush();
      }
      stop();
    } catch (err) {
      error = err;
    }
    expect(snapshot(join(dir, "elsewhere"))).toEqual({ links: "dir", delivered: "dir" });
    // Written where strata made them, or refused (whichever subdirectory is checked first): never through the link.
    expect(error).toBeInstanceOf(InputError);
    expect((error as Error).message).toMatch(
      new RegExp(
        "(/links/[^ ]+\\.pcap: cannot create: no such file" +
          "|: (links|delivered) was moved or replaced while strata wrote in it)",
      ),
    );
  });
});
