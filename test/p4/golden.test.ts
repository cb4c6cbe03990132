// Golden files: the hub of examples/hub-and-spoke (a keyless acquire table,
// exact and optional forward rows, replication through multicast groups) as
// main.p4, p4info.txtpb and runtime_cli.txt. UPDATE_GOLDENS=1 rewrites them.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { exportSpec, ROOT } from "./helpers/examples.js";

const dir = join(ROOT, "test/fixtures/golden/p4/hub-and-spoke/hub");
const hub = exportSpec("examples/hub-and-spoke/network.yaml").find((ex) => ex.manifest.machine === "hub");

describe("strata export p4 examples/hub-and-spoke: machine hub", () => {
  it.each(["main.p4", "p4info.txtpb", "runtime_cli.txt"] as const)("%s is the golden file", (file) => {
    const text = hub?.files[file];
    expect(typeof text).toBe("string");
    if (process.env.UPDATE_GOLDENS === "1") {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, file), text as string);
    }
    expect(text).toBe(readFileSync(join(dir, file), "utf8"));
  });
});
