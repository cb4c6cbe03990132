// The examples' exports, for the P4 tests.

import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { compile } from "../../../src/control/compile.js";
import { exportP4, type MachineExport } from "../../../src/p4/export.js";
import type { DeviceExport } from "../../../src/p4/import.js";
import { P4Info, strictJson, WriteRequest } from "./official.js";
import { loadSpec } from "../../../src/description/load.js";
import { InputError } from "../../../src/errors.js";
import { REPLAY_EXAMPLES } from "../../helpers/examples.js";

export const ROOT = new URL("../../..", import.meta.url).pathname;

/** examples/<name>/network.yaml for every replay example (test/helpers/examples.ts). */
export const EXAMPLE_SPECS = REPLAY_EXAMPLES.map((d) => `examples/${d}/network.yaml`);

/** The fixtures' exports, made once here for the two lists below (a fixture refused by the exporter: none). */
const FIXTURE_EXPORTS: ReadonlyMap<string, MachineExport[]> = new Map(
  readdirSync(join(ROOT, "test/fixtures/specs")).map((f): [string, MachineExport[]] => {
    const spec = `test/fixtures/specs/${f}`;
    try {
      return [spec, exportSpec(spec)];
    } catch (err) {
      if (err instanceof InputError) return [spec, []];
      throw err;
    }
  }),
);

/** Fixture descriptions that export (the others are there to be refused). */
export const EXPORTING_FIXTURES = [...FIXTURE_EXPORTS]
  .filter(([, exports]) => exports.length > 0)
  .map(([spec]) => spec);

/** Every machine of every example and of every fixture that exports. */
export const ALL_MACHINES: readonly { readonly spec: string; readonly ex: MachineExport }[] = [
  ...EXAMPLE_SPECS.map((spec) => [spec, exportSpec(spec)] as const),
  ...EXPORTING_FIXTURES.map((spec) => [spec, FIXTURE_EXPORTS.get(spec) ?? []] as const),
].flatMap(([spec, exports]) => exports.map((ex) => ({ spec, ex })));

/** A description's export, in memory; `spec` relative to the repository. */
export function exportSpec(spec: string): MachineExport[] {
  return exportP4(compile(loadSpec(join(ROOT, spec))), spec);
}

const text = (x: string | Uint8Array): string => (typeof x === "string" ? x : Buffer.from(x).toString("utf8"));

/** The files checkExport reads, parsed. */
export function exportFiles(ex: MachineExport): {
  p4info: unknown;
  entries: unknown;
  entriesBin: Uint8Array;
  p4infoText: string;
} {
  return {
    p4info: JSON.parse(text(ex.files["p4info.json"])) as unknown,
    entries: JSON.parse(text(ex.files["entries.json"])) as unknown,
    entriesBin: ex.files["entries.bin"] as Uint8Array,
    p4infoText: text(ex.files["p4info.txtpb"]),
  };
}

/** A description's export read back as a P4Runtime client would: every file through the official definitions. */
export function readBack(spec: string): DeviceExport[] {
  return exportSpec(spec).map((ex) => {
    const f = exportFiles(ex);
    return {
      machine: ex.manifest.machine,
      p4info: strictJson(P4Info, f.p4info) as DeviceExport["p4info"],
      entries: strictJson(WriteRequest, f.entries) as DeviceExport["entries"],
    };
  });
}

/** An example's --in arguments, with paths from the repository. */
export function exampleInputs(spec: string): { endpoint: string; file: string }[] {
  const example = JSON.parse(readFileSync(join(ROOT, dirname(spec), "example.json"), "utf8")) as { inputs: string[] };
  return example.inputs.map((i) => ({
    endpoint: i.slice(0, i.indexOf("=")),
    file: join(ROOT, i.slice(i.indexOf("=") + 1)),
  }));
}
