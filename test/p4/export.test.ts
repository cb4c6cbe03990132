// Every example's export, machine by machine, against the official P4Runtime
// definitions (test/fixtures/p4runtime): p4info.json and entries.json parse
// with the protobuf JSON mapping (unknown fields rejected) and are already in
// its canonical form, entries.bin decodes to the same WriteRequest,
// p4info.txtpb to the same P4Info, and checkExport finds nothing P4Runtime
// would refuse (bytestrings, ids, priorities, "don't care" fields, references).

import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compile } from "../../src/control/compile.js";
import { loadSpec } from "../../src/description/load.js";
import { EXAMPLE_SPECS, exportFiles, exportSpec, ROOT } from "./helpers/examples.js";
import { checkExport } from "./helpers/official.js";

const SPECS = [...EXAMPLE_SPECS, "test/fixtures/specs/hub.yaml", "test/fixtures/specs/p4-features.yaml"];

describe.each(SPECS)("strata export p4 %s", (spec) => {
  const exports = exportSpec(spec);

  it.each(exports.map((ex) => [ex.manifest.machine, ex] as const))(
    "machine %s: P4Info and WriteRequest pass the official definitions",
    (_, ex) => {
      expect(checkExport(exportFiles(ex))).toEqual([]);
    },
  );

  it.each(exports.map((ex) => [ex.manifest.machine, ex] as const))(
    "machine %s: runtime_cli.txt is commands alone, one a line " +
      "(simple_switch_CLI repeats a command on an empty line and has no " +
      "comments)",
    (_, ex) => {
      const text = ex.files["runtime_cli.txt"] as string;
      for (const line of text.split("\n").slice(0, -1))
        expect(line).toMatch(
          new RegExp(
            [
              String.raw`^(table_add|table_set_default|table_indirect_add|table_indirect_add_wi`,
              String.raw`th_group|mc_mgrp_create|mc_node_create|mc_node_associate|mirroring_ad`,
              String.raw`d|act_prof_create_member|act_prof_create_group|act_prof_add_member_t`,
              String.raw`o_group) \S`,
            ].join(""),
          ),
        );
      expect(text === "" || text.endsWith("\n")).toBe(true);
    },
  );

  it("writes the same files on every run (ids derive from names)", () => {
    const again = exportSpec(spec);
    expect(again.map((ex) => ex.files)).toEqual(exports.map((ex) => ex.files));
  });

  it("puts every table of every member on its machine, with one entry per row (keyless: the first row)", () => {
    const compiled = compile(loadSpec(join(ROOT, spec)));
    for (const ex of exports) {
      const members = compiled.members.filter((m) => compiled.machines[m.machine] === ex.manifest.machine);
      expect(ex.manifest.members.map((m) => m.member)).toEqual(members.map((m) => m.qualified));
      for (const [k, m] of members.entries()) {
        const tables = Object.values(m.tables);
        expect(ex.manifest.members[k]?.tables.length).toBe(tables.length);
      }
    }
  });
});
