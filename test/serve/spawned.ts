// strata serve as a process of its own (the built bin), for what a test cannot
// watch in-process: a serve that would block its event loop, signals. Each
// wait is for what the process says, never for time.

import { type ChildProcess, spawn } from "node:child_process";
import { REPO_ROOT } from "../pcap/real-files.js";

const BIN = `${REPO_ROOT}dist/src/cli/main.js`;

export interface Spawned {
  readonly child: ChildProcess;
  /** Resolves once stderr so far matches `pattern`. */
  said(pattern: RegExp): Promise<void>;
  stderr(): string;
  stdout(): string;
  /** Writes one command line to its stdin. */
  command(line: string): void;
  /** The exit code, or the signal that ended it. */
  readonly exited: Promise<number | NodeJS.Signals>;
}

const running = new Set<ChildProcess>();

/** Kills (SIGKILL) every serve spawned that is still running: for afterEach, which runs even after a test timed out. */
export function killSpawned(): void {
  for (const child of running) child.kill("SIGKILL");
  running.clear();
}

/** `strata serve ARGS…`; killSpawned() ends it if it never ends. */
export function spawnServe(args: readonly string[]): Spawned {
  const child = spawn(process.execPath, [BIN, "serve", ...args], { stdio: ["pipe", "pipe", "pipe"] });
  running.add(child);
  child.on("close", () => running.delete(child));
  let err = "";
  let out = "";
  const waiting = new Set<() => void>();
  child.stderr?.setEncoding("utf8").on("data", (t: string) => {
    err += t;
    for (const w of [...waiting]) w();
  });
  child.stdout?.setEncoding("utf8").on("data", (t: string) => (out += t));
  const exited = new Promise<number | NodeJS.Signals>((resolve) =>
    child.on("close", (code, signal) => resolve(code ?? signal ?? "SIGKILL")),
  );
  const said = (pattern: RegExp): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        if (!pattern.test(err)) return;
        waiting.delete(check);
        resolve();
      };
      waiting.add(check);
      check();
      void exited.then(() => {
        if (!waiting.has(check)) return;
        waiting.delete(check);
        reject(new Error(`serve ended before saying ${String(pattern)}; it said:\n${err}`));
      });
    });
  return {
    child,
    said,
    stderr: () => err,
    stdout: () => out,
    command: (line) => void child.stdin?.write(`${line}\n`),
    exited,
  };
}
