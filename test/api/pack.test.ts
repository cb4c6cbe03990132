// What users get is what is tested: the package packed (`npm pack`, from the build already made: no scripts run),
// unpacked into a temporary project's node_modules/strata with its dependencies linked from this repository's (no
// network), and imported there by name, from JavaScript and from TypeScript (its declarations checked by tsc).

import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { DOC_SNIPPETS } from "./snippets.js";

const ROOT = resolve(".");
const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { dependencies: Record<string, string> };
let dir = "";
let project = "";
/** The packed files' paths, from the package's root. */
let packedFiles: string[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "strata-api-pack-"));
  const packed = JSON.parse(
    execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], { encoding: "utf8" }),
  ) as { filename: string; files: { path: string }[] }[];
  packedFiles = (packed[0]?.files ?? []).map((f) => f.path);
  project = join(dir, "project");
  const strata = join(project, "node_modules", "strata");
  mkdirSync(strata, { recursive: true });
  execFileSync("tar", ["-xzf", join(dir, packed[0]?.filename ?? ""), "-C", strata, "--strip-components=1"]);
  // A TypeScript project using a Node library has Node's types.
  for (const dep of [...Object.keys(pkg.dependencies), "@types/node"]) {
    const to = join(project, "node_modules", dep);
    mkdirSync(dirname(to), { recursive: true });
    symlinkSync(join(ROOT, "node_modules", dep), to);
  }
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "user", type: "module", private: true }));
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `code` as an ES module of the temporary project; its stdout. */
function run(file: string, code: string): string {
  writeFileSync(join(project, file), code);
  return execFileSync(process.execPath, [file], { cwd: project, encoding: "utf8" });
}

const ex = (path: string): string => JSON.stringify(join(ROOT, path));

describe("the packed package, imported by name", () => {
  test("loads an example, replays it as strata run, reads a table", () => {
    const out = run(
      "main.mjs",
      `import { Emulation, replay } from "strata";
const r = replay(${ex("examples/ip-router/network.yaml")}, {
  inputs: { "lanA:h1.1": ${ex("pcaps/example-router-h1.pcap")}, "lanB:h2.1": ${ex("pcaps/example-router-h2.pcap")} },
  out: "out",
});
const em = Emulation.load(${ex("examples/ip-router/network.yaml")});
const rows = await em.read("ip:r", "forward");
await em.close();
console.log(JSON.stringify({ packets: r.summary.packets, rows: rows.map((x) => x.text) }));
`,
    );
    expect(JSON.parse(out)).toEqual({
      packets: { injected: 2, copies: 0, delivered: 2, dropped: 0, exited: 0 },
      rows: ["dst 10.0.1.0/24 → out 1", "dst 10.0.2.0/24 → out 2"],
    });
    for (const f of ["ip.h1.pcap", "ip.h2.pcap"])
      expect(readFileSync(join(project, "out", "delivered", f))).toEqual(
        readFileSync(join(ROOT, "examples", "ip-router", "expected", "delivered", f)),
      );
  });

  test("exports only its API: the rest of src/ is not reachable by name", () => {
    const out = run(
      "deep.mjs",
      `try { await import("strata/dist/src/engine/engine.js"); console.log("reached"); }
catch (e) { console.log(e.code); }`,
    );
    expect(out.trim()).toBe("ERR_PACKAGE_PATH_NOT_EXPORTED");
  });

  test("its type declarations check a TypeScript program that uses it, and every snippet of the docs", () => {
    const docs = DOC_SNIPPETS.map((snippet, i) => {
      writeFileSync(join(project, `snippet-${i}.ts`), snippet.code);
      return `snippet-${i}.ts`;
    });
    writeFileSync(
      join(project, "use.ts"),
      `import { type Description, Emulation, type RowWrite, TableWriteError, toYaml } from "strata";
const d: Description = { networks: { ring: { header: "cna", members: { a: { name: 1 } } } } };
const w: RowWrite = { op: "insert", member: "ring:a", table: "forward", row: { out: 1 } };
export async function use(): Promise<string> {
  const em = Emulation.load(d);
  em.on("drop", (drop) => drop.reason satisfies string);
  try { await em.write([w]); } catch (e) { if (e instanceof TableWriteError) return e.code; }
  return toYaml(d);
}
`,
    );
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          module: "nodenext",
          target: "es2022",
          strict: true,
          noEmit: true,
          types: ["node"],
          skipLibCheck: true,
        },
        files: ["use.ts", ...docs],
      }),
    );
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const checked = spawnSync(process.execPath, [tsc, "-p", project], { cwd: project, encoding: "utf8" });
    expect(checked.stdout + checked.stderr).toBe("");
    expect(checked.status).toBe(0);
  });

  // What strata runs on is packed (the data plane, the validators, the live ports' helper where it was built, the
  // P4Runtime protos, the schemas, the targets, and `strata bench` with the bound build and the Python that loads
  // bmv2's entries); what only the repository's build and tests use is not (the debug build and build/debug.wat's
  // 1.9 MB, the build scripts, the build caches).
  test.each([
    { path: "build/release.wasm", packed: true },
    { path: "build/schema/strata.schema.cjs", packed: true },
    { path: "dist/bin/strata.js", packed: true },
    { path: "dist/src/index.js", packed: true },
    { path: "dist/src/index.d.ts", packed: true },
    { path: "proto/p4runtime/p4/v1/p4runtime.proto", packed: true },
    { path: "schema/strata.schema.json", packed: true },
    { path: "build/debug.wasm", packed: false },
    { path: "build/debug.wat", packed: false },
    { path: "build/bound.wasm", packed: true },
    { path: "dist/bench/main.js", packed: true },
    { path: "bench/p4/cli-many.py", packed: true },
    { path: "build/debug.wasm.map", packed: false },
    { path: "dist/scripts/format.js", packed: false },
    { path: "dist/.format-cache", packed: false },
  ])("packs $path: $packed", ({ path, packed }) => {
    expect(packedFiles.includes(path)).toBe(packed);
  });

  test("keeps its bin", () => {
    const bin = join(project, "node_modules", "strata", "dist", "bin", "strata.js");
    const out = execFileSync(process.execPath, [bin, "check", join(ROOT, "examples/one-way-ring/network.yaml")], {
      encoding: "utf8",
    });
    expect(out).toMatch(/valid, 1 network/);
  });
});
