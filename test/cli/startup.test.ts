// What the built bin loads before a command runs: every command's definition, and only the
// implementation of the command that runs (src/cli/commands/). A module loader hook lists each
// module the process loads; `strata --help` must not wait for gRPC, the engine or the drawing,
// `strata export p4` needs no gRPC, and the P4Runtime server no JSON mapping (it takes the
// export's messages as they are built, not entries.json's text).

import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../pcap/real-files.js";

const BIN = `${REPO_ROOT}dist/bin/strata.js`;
const MARK = "strata-test-loaded ";
/** The modules of src/cli/ that implement a command (the heavy part the definitions leave out). */
const IMPLEMENTATIONS = [
  "analyze",
  "check",
  "export",
  "fit",
  "p4runtime",
  "pcap",
  "place",
  "run",
  "serve",
  "trace",
  "view",
];

const hooks = mkdtempSync(join(tmpdir(), "strata-startup-"));
writeFileSync(
  join(hooks, "hooks.mjs"),
  `import { writeSync } from "node:fs";
export async function load(url, context, next) {
  writeSync(2, ${JSON.stringify(MARK)} + url + "\\n");
  return next(url, context);
}
`,
);
writeFileSync(
  join(hooks, "register.mjs"),
  `import { register } from "node:module";\nregister("./hooks.mjs", import.meta.url);\n`,
);
afterAll(() => rmSync(hooks, { recursive: true, force: true }));

/** protobufjs's protobuf JSON mapping. */
const JSON_MAPPING = "/node_modules/protobufjs/ext/protojson.js";

/**
 * The command implementations, the packages (node_modules/NAME) and whether protobufjs's JSON
 * mapping a run of the bin with `argv` loaded.
 */
function loaded(argv: readonly string[]): {
  status: number | null;
  implementations: string[];
  packages: string[];
  jsonMapping: boolean;
} {
  const r = spawnSync(process.execPath, ["--import", pathToFileURL(join(hooks, "register.mjs")).href, BIN, ...argv], {
    cwd: REPO_ROOT,
    encoding: "utf8",
  });
  const urls = r.stderr
    .split("\n")
    .filter((l) => l.startsWith(MARK))
    .map((l) => l.slice(MARK.length));
  const implementations = IMPLEMENTATIONS.filter((name) => urls.some((u) => u.endsWith(`/dist/src/cli/${name}.js`)));
  const packages = [
    ...new Set(urls.flatMap((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1] ?? [])),
  ].sort();
  return { status: r.status, implementations, packages, jsonMapping: urls.some((u) => u.endsWith(JSON_MAPPING)) };
}

describe.runIf(existsSync(BIN))("what a command loads", () => {
  const out = mkdtempSync(join(tmpdir(), "strata-startup-out-"));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it.each([
    { name: "--help", argv: ["--help"], implementations: [], grpc: false },
    { name: "serve --help", argv: ["serve", "--help"], implementations: [], grpc: false },
    { name: "check SPEC", argv: ["check", "examples/vxlan/network.yaml"], implementations: ["check"], grpc: false },
    // The export encodes with protobufjs and the official definitions, without gRPC.
    {
      name: "export p4",
      argv: ["export", "p4", "examples/vxlan/network.yaml", "--out", join(out, "vxlan")],
      implementations: ["export"],
      grpc: false,
      jsonMapping: true,
    },
    // A bad address is refused as the flag is read, before the server's code (gRPC) loads.
    {
      name: "p4runtime --listen bad",
      argv: ["p4runtime", "x.yaml", "--listen", "bad"],
      implementations: [],
      grpc: false,
    },
    {
      name: "serve --p4runtime bad",
      argv: ["serve", "x.yaml", "--p4runtime", "bad"],
      implementations: [],
      grpc: false,
    },
    // The one that needs gRPC loads it (and shows that the hook sees what a command loads); its devices start with the
    // export's messages, never with their JSON.
    {
      name: "p4runtime",
      argv: ["p4runtime", "x.yaml", "--listen", "127.0.0.1:0"],
      implementations: ["p4runtime"],
      grpc: true,
    },
  ])("strata $name: its own implementation only", ({ argv, implementations, grpc, jsonMapping = false }) => {
    const r = loaded(argv);
    expect(r.implementations).toEqual(implementations);
    expect(r.packages.includes("@grpc/grpc-js")).toBe(grpc);
    expect(r.jsonMapping).toBe(jsonMapping);
  });

  it("strata --help loads no package but commander", () => {
    expect(loaded(["--help"])).toEqual({ status: 0, implementations: [], packages: ["commander"], jsonMapping: false });
  });
});
