// The P4 reference toolchain, for the tests that hold an export to it and the bench that times
// it: p4c (p4c-bm2-ss, p4test) and bmv2 (simple_switch, simple_switch_CLI), as
// ../shared/p4-toolchain packs them and .ci/run unpacks them (STRATA_P4TOOLS=<dir>/p4). Where
// they are missing (a bare clone), findP4Tools says why (test/p4/helpers/toolchain.ts: the
// tests skip, or fail where CI requires the tools; the bench leaves its bmv2 scenarios out).

import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { join } from "node:path";
import { p4ToolEnv, p4ToolPlaces, p4ToolRoot } from "../../src/deploy/p4c.js";

export interface P4Tools {
  /** The unpacked p4/ folder: bin/, lib/, share/p4c/p4include. */
  readonly root: string;
  /** The environment every tool runs with (PATH, LD_LIBRARY_PATH, include paths, PYTHONPATH). */
  readonly env: NodeJS.ProcessEnv;
  readonly p4cBm2Ss: string;
  readonly p4test: string;
  readonly simpleSwitch: string;
  readonly simpleSwitchCli: string;
  /** bmv2 with a P4Runtime server (PI), for strata deploy. */
  readonly simpleSwitchGrpc: string;
}

/** The toolchain, or why it is not here: looked for where strata deploy looks for p4c (src/deploy/p4c.ts). */
export function findP4Tools(): P4Tools | { readonly missing: string } {
  const root = p4ToolRoot();
  if (root === undefined) {
    return {
      missing:
        `no P4 toolchain (p4c-bm2-ss) ` +
        `in ${p4ToolPlaces().join(" or ")}: unpack ` +
        `../shared/p4-toolchain/p4-toolchain.tar.xz there and set STRATA_P4TOOLS (.ci/run does)`,
    };
  }
  const env = p4ToolEnv(root);
  const tools = {
    root,
    env,
    p4cBm2Ss: join(root, "bin", "p4c-bm2-ss"),
    p4test: join(root, "bin", "p4test"),
    simpleSwitch: join(root, "bin", "simple_switch"),
    simpleSwitchCli: join(root, "bin", "simple_switch_CLI"),
    simpleSwitchGrpc: join(root, "bin", "simple_switch_grpc"),
  };
  // Present is not enough: the run-time libraries must load (.ci/run installs them from Debian).
  const probe = spawnSync(tools.p4cBm2Ss, ["--version"], { env, encoding: "utf8" });
  if (probe.status !== 0)
    return {
      missing:
        `${tools.p4cBm2Ss} does not run (${firstLine(probe)}): install the run-time packages ` +
        `../shared/p4-toolchain/README.md lists`,
    };
  const sw = spawnSync(tools.simpleSwitch, ["--version"], { env, encoding: "utf8" });
  if (sw.status !== 0)
    return {
      missing:
        `${tools.simpleSwitch} does not run (${firstLine(sw)}): install the run-time packages ` +
        `../shared/p4-toolchain/README.md lists`,
    };
  return tools;
}

function firstLine(r: SpawnSyncReturns<string>): string {
  return (
    (r.error?.message ?? `${r.stderr}${r.stdout}`).split("\n").find((l) => l.trim() !== "") ??
    `exit ${String(r.status)}`
  );
}
