// p4c for a target that needs a device config with its pipeline (bmv2: p4c-bm2-ss's JSON), found
// where the P4 tests and the bench find it (bench/p4/toolchain.ts uses these places and this
// environment): $STRATA_P4TOOLS, /opt/strata-p4/p4, /opt/p4/p4. Each program is compiled once per
// process, in a directory of its own that is removed after.

import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Where the P4 toolchain (an unpacked p4/ folder: bin/, lib/, share/p4c) is looked for, in order. */
export function p4ToolPlaces(): string[] {
  return [process.env["STRATA_P4TOOLS"], "/opt/strata-p4/p4", "/opt/p4/p4"].filter(
    (p): p is string => p !== undefined && p !== "",
  );
}

/** The first place that holds p4c-bm2-ss, or undefined. */
export function p4ToolRoot(): string | undefined {
  return p4ToolPlaces().find((p) => existsSync(join(p, "bin", "p4c-bm2-ss")));
}

/** The environment the toolchain's programs run with (PATH, LD_LIBRARY_PATH, include paths, PYTHONPATH). */
export function p4ToolEnv(root: string): NodeJS.ProcessEnv {
  const lib = join(root, "lib");
  const python = existsSync(lib)
    ? readdirSync(lib)
        .filter((d) => d.startsWith("python3"))
        .flatMap((d) => ["site-packages", "dist-packages"].map((s) => join(lib, d, s)).filter((p) => existsSync(p)))
    : [];
  const joined = (...parts: (string | undefined)[]): string =>
    parts.filter((p) => p !== undefined && p !== "").join(":");
  return {
    ...process.env,
    PATH: joined(join(root, "bin"), process.env["PATH"]),
    LD_LIBRARY_PATH: joined(lib, process.env["LD_LIBRARY_PATH"]),
    P4C_16_INCLUDE_PATH: join(root, "share", "p4c", "p4include"),
    P4C_14_INCLUDE_PATH: join(root, "share", "p4c", "p4_14include"),
    PYTHONPATH: joined(...python, process.env["PYTHONPATH"]),
  };
}

const compiled = new Map<string, Promise<Uint8Array>>();

/**
 * bmv2's device config for a program: `p4c-bm2-ss --arch v1model`'s JSON. Rejects with one line
 * when there is no compiler or it refuses the program.
 */
export function bmv2Config(program: string): Promise<Uint8Array> {
  const hash = createHash("sha256").update(program).digest("hex");
  let p = compiled.get(hash);
  if (p === undefined) {
    p = compile(program);
    compiled.set(hash, p);
    p.catch(() => compiled.delete(hash));
  }
  return p;
}

async function compile(program: string): Promise<Uint8Array> {
  const root = p4ToolRoot();
  if (root === undefined)
    throw new Error(
      `the device needs a compiled program and there is no p4c-bm2-ss in ${p4ToolPlaces().join(" or ")} ` +
        `(set STRATA_P4TOOLS to the P4 toolchain's p4/ folder)`,
    );
  const dir = mkdtempSync(join(tmpdir(), "strata-deploy-p4c-"));
  try {
    writeFileSync(join(dir, "main.p4"), program);
    const { status, stderr } = await run(
      join(root, "bin", "p4c-bm2-ss"),
      ["--arch", "v1model", "-o", "main.json", "main.p4"],
      dir,
      p4ToolEnv(root),
    );
    if (status !== 0) {
      const line = stderr.split("\n").find((l) => l.trim() !== "") ?? `exit ${status}`;
      throw new Error(`p4c-bm2-ss refused the program: ${line}`);
    }
    return readFileSync(join(dir, "main.json"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ status: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status: status ?? -1, stderr }));
  });
}
