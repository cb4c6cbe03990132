// Golden files: main.p4, p4info.txtpb and runtime_cli.txt of
// - the hub of examples/hub-and-spoke (a keyless acquire table, exact and optional forward rows,
//   replication through multicast groups), and
// - machine s of test/fixtures/specs/p4-designs.yaml (every header design's header, parser states,
//   key fill, push and hop-limit decrement: src/p4/designs/).
// UPDATE_GOLDENS=1 rewrites them.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { exportSpec, ROOT } from "./helpers/examples.js";

const CASES = [
  { spec: "examples/hub-and-spoke/network.yaml", machine: "hub", dir: "test/fixtures/golden/p4/hub-and-spoke/hub" },
  { spec: "test/fixtures/specs/p4-designs.yaml", machine: "s", dir: "test/fixtures/golden/p4/p4-designs/s" },
] as const;
const FILES = ["main.p4", "p4info.txtpb", "runtime_cli.txt"] as const;

describe.each(CASES)("strata export p4 $spec: machine $machine", ({ spec, machine, dir }) => {
  const ex = exportSpec(spec).find((x) => x.manifest.machine === machine);
  it.each(FILES)("%s is the golden file", (file) => {
    const text = ex?.files[file];
    expect(typeof text).toBe("string");
    if (process.env.UPDATE_GOLDENS === "1") {
      mkdirSync(join(ROOT, dir), { recursive: true });
      writeFileSync(join(ROOT, dir, file), text as string);
    }
    expect(text).toBe(readFileSync(join(ROOT, dir, file), "utf8"));
  });
});
