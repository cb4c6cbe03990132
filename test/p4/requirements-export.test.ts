// The fit check (src/p4/requirements.ts) and the export (src/p4/device.ts) read
// a machine separately: on every example they must agree on what a switch is
// asked for — the tables, their sizes, and the multicast groups installed —
// so that `--target` checks the program that is actually written.

import { describe, expect, it } from "vitest";
import { compile } from "../../src/control/compile.js";
import { loadSpec } from "../../src/description/load.js";
import { machineRequirements } from "../../src/p4/requirements.js";
import { EXAMPLE_SPECS, exportFiles, exportSpec, ROOT } from "./helpers/examples.js";

interface P4InfoTables {
  tables?: { preamble: { name: string }; size?: string }[];
}
interface Updates {
  updates?: { entity?: { packetReplicationEngineEntry?: { multicastGroupEntry?: unknown } } }[];
}

describe.each(EXAMPLE_SPECS)("%s: requirements and export agree", (spec) => {
  it("on tables, sizes and multicast groups per machine", () => {
    const reqs = machineRequirements(compile(loadSpec(`${ROOT}/${spec}`)));
    for (const ex of exportSpec(spec)) {
      const req = reqs.find((r) => r.machine === ex.manifest.machine);
      expect(req, ex.manifest.machine).toBeDefined();
      const { p4info, entries } = exportFiles(ex);
      const tables = ((p4info as P4InfoTables).tables ?? []).map((t) => [
        t.preamble.name.replace(/^StrataIngress\./, ""),
        Number(t.size ?? 0),
      ]);
      expect(tables.sort(), ex.manifest.machine).toEqual((req?.tables ?? []).map((t) => [t.name, t.size]).sort());
      const groups = ((entries as Updates).updates ?? []).filter(
        (u) => u.entity?.packetReplicationEngineEntry?.multicastGroupEntry !== undefined,
      ).length;
      expect(groups, ex.manifest.machine).toBe(req?.multicastGroups.length);
    }
  });
});
