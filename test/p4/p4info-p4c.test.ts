// The P4Info p4c writes for each exported program (p4c-bm2-ss --p4runtime-files p4info.txtpb)
// against strata's p4info.json, field by field: the same tables (ids, names, aliases, briefs,
// match fields with their ids, names, bit widths and match kinds, action references with their
// scopes, default actions, selectors, counters, sizes), the same actions and parameters, action
// profiles, direct counters and controller headers — so a controller can use either. The only
// parts allowed to differ are those docs/p4-export.md names: pkg_info (p4c writes the
// architecture alone) and p4c's empty type_info.

import textformat from "protobufjs/ext/textformat.js";
import protojson from "protobufjs/ext/protojson.js";
import { beforeAll, describe, expect, it } from "vitest";
import { ALL_MACHINES, exportFiles } from "./helpers/examples.js";
import { P4Info, strictJson } from "./helpers/official.js";
import { type Compiled, compileAll } from "../../bench/p4/p4c.js";
import { findP4Tools, P4_REQUIRED } from "./helpers/toolchain.js";

const tools = findP4Tools();
const skip = !P4_REQUIRED && "missing" in tools;
const why = "missing" in tools ? ` (skipped: ${tools.missing})` : "";

type Json = Record<string, unknown>;

/** A P4Info without the parts that may differ, and the rest by part. */
function parts(info: Json): { pkgArch: unknown; rest: Json } {
  const { pkgInfo, typeInfo: _typeInfo, ...rest } = info;
  return { pkgArch: (pkgInfo as Json | undefined)?.["arch"], rest };
}

/** Objects of one kind by name, for a diff that names the object that differs. */
function byName(list: unknown): Record<string, unknown> {
  return Object.fromEntries(
    ((list ?? []) as Json[]).map((o) => [String((o["preamble"] as Json | undefined)?.["name"]), o]),
  );
}

describe.skipIf(skip)(`p4c's P4Info is strata's${why}`, () => {
  let results: Compiled[] = [];
  beforeAll(async () => {
    if ("missing" in tools) throw new Error(tools.missing);
    // p4c-bm2-ss writes the P4Info: compile.test.ts compiles every program with it too, and the two files share one
    // compilation (p4test, which compile.test.ts runs on some, writes none).
    results = await compileAll(
      tools,
      ALL_MACHINES.map((m) => m.ex.files["main.p4"] as string),
      "bm2",
    );
  }, 600_000);

  it.each(ALL_MACHINES.map((m, i) => [`${m.spec} machine ${m.ex.manifest.machine}`, i] as const))("%s", (_, i) => {
    const text = results[i]?.p4info;
    expect(text, results[i]?.bm2.stderr).toBeDefined();
    const theirs = parts(protojson.toJson(P4Info, textformat.fromText(P4Info, text ?? "")) as Json);
    const ours = parts(strictJson(P4Info, exportFiles(ALL_MACHINES[i]?.ex ?? ({} as never)).p4info) as Json);
    expect(theirs.pkgArch).toBe(ours.pkgArch);
    for (const kind of ["tables", "actions", "actionProfiles", "directCounters", "controllerPacketMetadata"]) {
      expect(byName(theirs.rest[kind]), kind).toEqual(byName(ours.rest[kind]));
    }
    // Nothing else, in the same order.
    expect(theirs.rest).toEqual(ours.rest);
  });
});
