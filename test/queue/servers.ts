// The queue tests' own Redis and workers: a redis-server on a free loopback port, its files in a temporary directory,
// stopped by its PID; `strata worker` processes (the built CLI, dist/: npm test builds first), stopped by theirs.
// Without redis-server the tests skip, saying why, unless CI or STRATA_REQUIRE_REDIS=1 asks for them.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { until } from "../helpers/wait.js";

const ROOT = new URL("../..", import.meta.url).pathname;
const CLI = join(ROOT, "dist/src/cli/main.js");

/** Why the queue tests cannot run here, or undefined when they can (and must, in CI). */
export function redisMissing(): string | undefined {
  const found = spawnSync("redis-server", ["--version"], { encoding: "utf8" });
  if (found.status === 0) return undefined;
  const why = "redis-server is not installed (Debian: apt-get install redis-server)";
  if (process.env.CI !== undefined || process.env.STRATA_REQUIRE_REDIS === "1")
    throw new Error(`${why}, and CI or STRATA_REQUIRE_REDIS=1 requires the queue tests`);
  return why;
}

/** A loopback port nothing listens on now: one the kernel gave a server that is closed again (Redis takes no 0). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** A redis-server of the test's own, with its append-only file: start(), restart() (same port, same files), stop(). */
export class TestRedis {
  readonly dir = mkdtempSync(join(tmpdir(), "strata-redis-"));
  port = 0;
  #process: ChildProcess | undefined;

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (this.port === 0) this.port = await freePort();
    const args = ["--port", `${this.port}`, "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes"];
    this.#process = spawn("redis-server", [...args, "--dir", this.dir], { stdio: "ignore" });
    const probe = new Redis({ port: this.port, host: "127.0.0.1", lazyConnect: true, retryStrategy: () => null });
    probe.on("error", () => {});
    try {
      await until(
        () =>
          probe.connect().then(
            () => probe.ping(),
            () => false,
          ),
        () => `redis-server on port ${this.port} never answered`,
      );
    } finally {
      probe.disconnect();
    }
  }

  /** Stops Redis by its PID and waits until it is gone (SIGTERM: it writes its append-only file first). */
  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    const p = this.#process;
    this.#process = undefined;
    if (p === undefined || p.exitCode !== null) return;
    const gone = new Promise((resolve) => p.once("exit", resolve));
    p.kill(signal);
    await gone;
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async close(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  client(): Redis {
    const r = new Redis({ port: this.port, host: "127.0.0.1" });
    r.on("error", () => {});
    return r;
  }
}

/** A `strata worker` process: what it printed, and its end. */
export class TestWorker {
  readonly process: ChildProcess;
  stderr = "";
  readonly exited: Promise<number | null>;

  constructor(url: string, more: readonly string[] = []) {
    this.process = spawn(process.execPath, [CLI, "worker", "--queue", url, "--verbose", ...more], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    this.process.stderr?.on("data", (d: Buffer) => (this.stderr += d.toString()));
    this.exited = new Promise((resolve) => this.process.once("exit", (code) => resolve(code)));
  }

  /** Waits until it says it takes chunks. */
  async ready(): Promise<this> {
    await until(
      () => this.stderr.includes("taking chunks from"),
      () => `the worker never said it takes chunks: ${this.stderr}`,
    );
    return this;
  }

  /** The chunks it ran, by number. */
  ran(): number[] {
    return [...this.stderr.matchAll(/ran chunk (\d+) of/g)].map((m) => Number(m[1]));
  }

  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill(signal);
    return this.exited;
  }
}
