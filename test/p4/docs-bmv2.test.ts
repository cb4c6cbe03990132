// docs/p4-export.md stays true about bmv2: the shell block it marks as checked (taking the IP
// router's export to simple_switch) runs as written, with p4c and bmv2, and the packets it leaves
// in the switches' _out.pcap files are strata run's, byte for byte; its Target limits are the
// ones the bmv2 tests allow (helpers/on-bmv2.ts TARGET_LIMITS), each named by one of them.
//
// The block runs in a directory of its own holding the repository's examples/ and pcaps/, with
// `strata` (dist/src/cli/main.js) and the toolchain on PATH and two changes, so that it can run
// beside other switches on the machine: its Thrift port is a free one, and each simple_switch
// gets a notifications socket in that directory (the default is one per device id, machine-wide). Its p4c-bm2-ss
// answers from the tests' p4c cache (helpers/cached-p4c.ts) for the programs compiled there, as the other P4 tests do.

import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { MachineManifest } from "../../src/p4/export.js";
import { freePort } from "../../bench/free-port.js";
import { cachedToolchain } from "./helpers/cached-p4c.js";
import { exportSpec, ROOT } from "./helpers/examples.js";
import { TARGET_LIMITS } from "./helpers/on-bmv2.js";
import { packetsOf } from "./helpers/strata-side.js";
import { findP4Tools, P4_REQUIRED } from "./helpers/toolchain.js";
import { HANG_MS, TEST_MS } from "../helpers/wait.js";

const DOC = readFileSync(join(ROOT, "docs/p4-export.md"), "utf8");
const MARK = "<!-- checked: test/p4/docs-bmv2.test.ts";

/** The shell blocks right after the mark. */
function checkedBlocks(): string[] {
  return [...DOC.matchAll(/<!-- checked: test\/p4\/docs-bmv2\.test\.ts[^\n]*-->\n```sh\n([\s\S]*?)```/g)].map(
    (m) => m[1] ?? "",
  );
}

/** The bold names of the bullets of a section, up to the next heading. */
function bulletNames(heading: string): string[] {
  const at = DOC.indexOf(`\n${heading}\n`);
  if (at < 0) return [];
  const rest = DOC.slice(at + heading.length + 2);
  const section = rest.slice(0, rest.search(/\n#/) < 0 ? undefined : rest.search(/\n#/));
  return [...section.matchAll(/^- \*\*([^*]+)\*\*:/gm)].map((m) => m[1] ?? "");
}

describe("docs/p4-export.md, Target limits", () => {
  it("lists every difference the bmv2 tests allow, and no other", () => {
    expect(bulletNames("### Target limits").sort()).toEqual(Object.values(TARGET_LIMITS).sort());
  });

  it.each(Object.keys(TARGET_LIMITS))("%s is named by a bmv2 test that allows it", (key) => {
    const tests = ["test/p4/bmv2.test.ts", "test/p4/bmv2-random.test.ts"]
      .map((f) => readFileSync(join(ROOT, f), "utf8"))
      .join("\n");
    expect(tests).toMatch(new RegExp(`allowing\\([^)]*"${key}"`));
  });
});

const tools = findP4Tools();
const skip = !P4_REQUIRED && "missing" in tools;
const why = "missing" in tools ? ` (skipped: ${tools.missing})` : "";

/** Runs `script` with bash in `cwd`; its stdout and stderr, and its exit code. Its process group is killed when it is
 * done, or at `timeoutMs`. */
function bash(
  script: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn("bash", ["-c", script], { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => (out += s));
    child.stderr.setEncoding("utf8").on("data", (s: string) => (out += s));
    const killGroup = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // the group is gone
      }
    };
    const timer = setTimeout(killGroup, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      killGroup();
      resolve({ code, out });
    });
  });
}

/** The packets a switch wrote to a port's _out.pcap: none in a file it never wrote to (bmv2 writes the file header with
 * the first packet). */
const sent = (file: string): Uint8Array[] => (statSync(file).size === 0 ? [] : packetsOf(file));
const hex = (packets: readonly Uint8Array[]): string[] => packets.map((b) => Buffer.from(b).toString("hex"));
const errorLines = (log: string): string[] => log.split("\n").filter((l) => /error|invalid|unknown syntax/i.test(l));

describe.skipIf(skip)(`docs/p4-export.md's bmv2 commands${why}`, () => {
  const dir = mkdtempSync(join(tmpdir(), "strata-docs-bmv2-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("there is one checked block, and it runs the export on simple_switch", () => {
    expect(checkedBlocks()).toHaveLength(1);
    expect(checkedBlocks()[0]).toMatch(/simple_switch .*--use-files/);
  });

  it("runs as written, and what leaves the switches is what strata run writes, byte for byte", async () => {
    if ("missing" in tools) throw new Error(tools.missing);
    const [block] = checkedBlocks();
    if (block === undefined) throw new Error(`no shell block after "${MARK}" in docs/p4-export.md`);
    for (const d of ["examples", "pcaps"]) symlinkSync(join(ROOT, d), join(dir, d));
    const bin = join(dir, "bin");
    mkdirSync(bin);
    const tool = (name: string, body: string): void => {
      writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
      chmodSync(join(bin, name), 0o755);
    };
    tool("strata", `exec "${process.execPath}" "${join(ROOT, "dist/src/cli/main.js")}" "$@"`);
    // Under Debian's python3, which has python3-thrift (../shared/p4-toolchain/README.md).
    tool("simple_switch_CLI", `exec /usr/bin/python3 "${tools.simpleSwitchCli}" "$@"`);
    const thrift = await freePort();
    const script = block
      .replaceAll("--thrift-port 9090", `--thrift-port ${thrift}`)
      .replaceAll(
        "simple_switch --device-id",
        `simple_switch --notifications-addr ipc://${dir}/notifications.ipc --device-id`,
      );
    expect(script).not.toContain("9090");
    const p4c = cachedToolchain(tools);
    await p4c.add(
      exportSpec("examples/ip-router/network.yaml").map((ex) => Buffer.from(ex.files["main.p4"]).toString()),
    );
    const env = { ...tools.env, PATH: `${bin}:${join(p4c.root, "bin")}:${tools.env["PATH"] ?? ""}` };
    const { code, out } = await bash(`set -e\n${script}`, dir, env, TEST_MS - HANG_MS).finally(() => p4c.close());
    expect(code, out).toBe(0);

    const r = join(dir, "out/p4/r");
    const h2 = join(dir, "out/p4/h2");
    expect(errorLines(readFileSync(join(r, "cli.log"), "utf8"))).toEqual([]);
    expect(errorLines(readFileSync(join(h2, "cli.log"), "utf8"))).toEqual([]);
    // r's frame to h2 on lanB: the packet strata run writes on that link.
    const onLanB = packetsOf(join(dir, "out/run/links/lanB.r.1-h2.1.pcap"));
    expect(onLanB).toHaveLength(1);
    expect(hex(sent(join(r, "lanB_out.pcap")))).toEqual(hex(onLanB));
    expect(out).toContain("lanB_out.pcap: pcap");
    // h2's delivery to ip.h2 on the CPU port: strata's delivered packet behind packet_in (member ip.h2, in-link 1, as
    // the doc says).
    const manifest = JSON.parse(readFileSync(join(h2, "manifest.json"), "utf8")) as MachineManifest;
    const member = manifest.members.find((m) => m.member === "ip.h2")?.number;
    expect(member).toBe(2);
    const delivered = packetsOf(join(dir, "out/run/delivered/ip.h2.pcap"));
    expect(delivered).toHaveLength(1);
    expect(hex(sent(join(h2, "cpu_out.pcap")))).toEqual(
      hex(delivered.map((p) => Uint8Array.from([member ?? 0, 0, 1, ...p]))),
    );
    // Nothing else left the switches.
    expect(sent(join(r, "lanA_out.pcap"))).toEqual([]);
    expect(sent(join(r, "cpu_out.pcap"))).toEqual([]);
    expect(sent(join(h2, "lanB_out.pcap"))).toEqual([]);
  });
});
