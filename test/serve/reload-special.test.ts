// A reload reads the description file without waiting on it: when the file
// becomes a named pipe, a device or a directory, each way a reload starts
// (--watch, SIGHUP, the reload command) refuses it in one line, and packets,
// commands and signals go on under the description the emulation had. An open()
// of a named pipe waits for a writer: before, serve stopped there until SIGKILL.

import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../pcap/real-files.js";
import { killSpawned, spawnServe } from "./spawned.js";

const ROUTER = join(REPO_ROOT, "examples/live-router/network.yaml");

const fifo = (file: string): void => {
  rmSync(file);
  execFileSync("mkfifo", [file]);
};

const dirs: string[] = [];
afterEach(() => {
  killSpawned();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe("strata serve: a description that is no longer a regular file is not reloaded", () => {
  const cases: {
    name: string;
    how: "reload" | "SIGHUP" | "watch";
    make: (file: string) => void;
    kind: string;
  }[] = [
    { name: "the reload command, a named pipe", how: "reload", make: fifo, kind: "a named pipe" },
    { name: "SIGHUP, a named pipe", how: "SIGHUP", make: fifo, kind: "a named pipe" },
    { name: "--watch, a named pipe", how: "watch", make: fifo, kind: "a named pipe" },
    {
      name: "the reload command, a link to /dev/zero (a file without end)",
      how: "reload",
      make: (file) => {
        rmSync(file);
        symlinkSync("/dev/zero", file);
      },
      kind: "a character device",
    },
    {
      name: "--watch, a directory",
      how: "watch",
      make: (file) => {
        rmSync(file);
        mkdirSync(file);
      },
      kind: "a directory",
    },
  ];

  it.each(cases)("$name: one line, and the emulation goes on", async ({ how, make, kind }) => {
    const dir = mkdtempSync(join(tmpdir(), "strata-reload-special-"));
    dirs.push(dir);
    const file = join(dir, "network.yaml");
    copyFileSync(ROUTER, file);
    const serve = spawnServe([file, "--commands", ...(how === "watch" ? ["--watch"] : [])]);
    await serve.said(/Ctrl-C stops\n/);
    make(file);
    if (how === "reload") serve.command("reload");
    if (how === "SIGHUP") serve.child.kill("SIGHUP");
    const refusal =
      `strata: ${escape(file)}: cannot reload: it is ${kind}, not a regular file ` +
      String.raw`\(make it a file again; the emulation goes on with the description it had\)\n`;
    await serve.said(new RegExp(refusal));
    // The tables are the description's still, and commands are answered.
    serve.command("delete ip:r forward 1");
    await serve.said(/\ndeleted ip\.r forward row 1 /);
    serve.command("stop");
    expect(await serve.exited).toBe(0);
    expect(serve.stdout()).toMatch(/^served 0 packets through /);
    expect(serve.stderr().match(new RegExp(refusal, "g"))).toHaveLength(1);
  });
});
