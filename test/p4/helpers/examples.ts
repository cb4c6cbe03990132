// The examples' exports, for the P4 tests.

import { readdirSync } from "node:fs";
import { join } from "node:path";
import { compile } from "../../../src/control/compile.js";
import { exportP4, type MachineExport } from "../../../src/p4/export.js";
import { loadSpec } from "../../../src/spec/load.js";

export const ROOT = new URL("../../..", import.meta.url).pathname;

/** examples/<name>/network.yaml for every example. */
export const EXAMPLE_SPECS = readdirSync(join(ROOT, "examples"), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => `examples/${d.name}/network.yaml`);

/** A description's export, in memory; `spec` relative to the repository. */
export function exportSpec(spec: string): MachineExport[] {
  return exportP4(compile(loadSpec(join(ROOT, spec))), spec);
}

const text = (x: string | Uint8Array): string => (typeof x === "string" ? x : Buffer.from(x).toString("utf8"));

/** The files checkExport reads, parsed. */
export function exportFiles(ex: MachineExport): { p4info: unknown; entries: unknown; entriesBin: Uint8Array; p4infoText: string } {
  return {
    p4info: JSON.parse(text(ex.files["p4info.json"])) as unknown,
    entries: JSON.parse(text(ex.files["entries.json"])) as unknown,
    entriesBin: ex.files["entries.bin"] as Uint8Array,
    p4infoText: text(ex.files["p4info.txtpb"]),
  };
}
