// The queue tests' own Redis and workers: a redis-server on a free loopback port, its files in a temporary directory,
// stopped by its PID (bench/redis-server.ts, which the queue's bench starts too); `strata worker` processes (the built
// CLI, dist/: npm test builds first), stopped by theirs.
// Without redis-server the tests skip, saying why, unless CI or STRATA_REQUIRE_REDIS=1 asks for them.

import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { freePort, hasRedisServer, OwnRedis } from "../../bench/redis-server.js";
import { until } from "../helpers/wait.js";

const ROOT = new URL("../..", import.meta.url).pathname;
const CLI = join(ROOT, "dist/src/cli/main.js");

/** Why the queue tests cannot run here, or undefined when they can (and must, in CI). */
export function redisMissing(): string | undefined {
  if (hasRedisServer()) return undefined;
  const why = "redis-server is not installed (Debian: apt-get install redis-server)";
  if (process.env.CI !== undefined || process.env.STRATA_REQUIRE_REDIS === "1")
    throw new Error(`${why}, and CI or STRATA_REQUIRE_REDIS=1 requires the queue tests`);
  return why;
}

export { freePort, OwnRedis as TestRedis };

/** A `strata worker` process: what it printed, and its end. */
export class TestWorker {
  readonly process: ChildProcess;
  stderr = "";
  readonly exited: Promise<number | null>;

  constructor(url: string, more: readonly string[] = [], env: Record<string, string> = {}) {
    this.process = spawn(process.execPath, [CLI, "worker", "--queue", url, "--verbose", ...more], {
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, ...env },
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
