// A redis-server of one's own, for the queue's bench (./queue.ts) and tests (test/queue/): on a free loopback port,
// its files (the append-only file) in a temporary directory, stopped by its PID.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort } from "./free-port.js";

export { freePort };

/** Whether Debian's redis-server (or any on PATH) is there. */
export function hasRedisServer(): boolean {
  return spawnSync("redis-server", ["--version"], { encoding: "utf8" }).status === 0;
}

/** How a test's Redis is set up beyond the plain one: ACL users (their rules as `--user` takes them), and TLS. */
export interface OwnRedisOptions {
  /** ACL users: the default user is then off, and the probe and client() log in as the first. */
  readonly users?: readonly { readonly name: string; readonly password: string; readonly rules: string }[];
  /** TLS on a port of its own (tlsPort), with this certificate and key (PEM files); its plain port stays. */
  readonly tls?: { readonly cert: string; readonly key: string };
}

/** A redis-server with its append-only file: start(), restart() (same port, same files), stop(), close(). */
export class OwnRedis {
  readonly dir = mkdtempSync(join(tmpdir(), "strata-redis-"));
  port = 0;
  tlsPort = 0;
  #process: ChildProcess | undefined;
  readonly #options: OwnRedisOptions;

  constructor(options: OwnRedisOptions = {}) {
    this.#options = options;
  }

  /** The login of the first ACL user, for the probe and client(). */
  get #login(): { username?: string; password?: string } {
    const u = this.#options.users?.[0];
    return u === undefined ? {} : { username: u.name, password: u.password };
  }

  /** redis-server's arguments beyond its port and files: the users, TLS. */
  #more(): string[] {
    const o = this.#options;
    // A --user's words are arguments of their own: one argument is one word (a name with spaces, else).
    const users = (o.users ?? []).flatMap((u) => ["--user", u.name, "on", `>${u.password}`, ...u.rules.split(" ")]);
    const tls =
      o.tls === undefined
        ? []
        : ["--tls-port", `${this.tlsPort}`, "--tls-cert-file", o.tls.cert, "--tls-key-file", o.tls.key].concat([
            "--tls-auth-clients",
            "no",
          ]);
    return [...(users.length > 0 ? ["--user", "default", "off", ...users] : []), ...tls];
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.#process?.pid;
  }

  /** Starts it and waits until it answers (polling, as long as it takes: the caller bounds the wait). */
  async start(): Promise<void> {
    if (this.port === 0) this.port = await freePort();
    if (this.#options.tls !== undefined && this.tlsPort === 0) this.tlsPort = await freePort();
    const args = ["--port", `${this.port}`, "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes"];
    this.#process = spawn("redis-server", [...args, "--dir", this.dir, ...this.#more()], { stdio: "ignore" });
    const exited = new Promise<never>((_, reject) =>
      this.#process?.once("exit", (code) => reject(new Error(`redis-server exited (${code})`))),
    );
    exited.catch(() => {});
    for (;;) {
      const probe = new Redis({
        port: this.port,
        host: "127.0.0.1",
        ...this.#login,
        lazyConnect: true,
        retryStrategy: () => null,
      });
      probe.on("error", () => {});
      const up = await Promise.race([
        probe.connect().then(
          () => probe.ping().then(() => true),
          () => false,
        ),
        exited,
      ]);
      probe.disconnect();
      if (up) return;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Stops it by its PID and waits until it is gone (SIGTERM: it writes its append-only file first). */
  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    const p = this.#process;
    this.#process = undefined;
    if (p === undefined || p.exitCode !== null || p.signalCode !== null) return;
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
    const r = new Redis({ port: this.port, host: "127.0.0.1", ...this.#login });
    r.on("error", () => {});
    return r;
  }
}
