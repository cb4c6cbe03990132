// The round trip: every example replayed as described, and again with its
// tables read back from the P4 export — each machine's entries.json and
// p4info.json parsed with the official P4Runtime definitions, turned into
// strata rows by src/p4/import.ts and installed — gives byte-identical
// captures on every link and at every member.

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compile } from "../../src/control/compile.js";
import { importEntries } from "../../src/p4/import.js";
import { Replay } from "../../src/run/replay.js";
import { loadSpec } from "../../src/description/load.js";
import { EXAMPLE_SPECS, exampleInputs, readBack, ROOT } from "./helpers/examples.js";

const scratch = mkdtempSync(join(tmpdir(), "strata-p4-round-trip-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function captures(dir: string): string[] {
  return ["links", "delivered"]
    .flatMap((sub) => (existsSync(join(dir, sub)) ? readdirSync(join(dir, sub)).map((f) => `${sub}/${f}`) : []))
    .sort();
}

describe.each(EXAMPLE_SPECS)("round trip through P4Runtime entries: %s", (spec) => {
  it("replays to byte-identical captures", () => {
    const inputs = exampleInputs(spec);
    const file = join(ROOT, spec);
    const name = spec.split("/")[1] ?? spec;

    const described = Replay.prepare({ spec: file, inputs, out: join(scratch, name, "described") }).run();

    const imported = importEntries(compile(loadSpec(file)), readBack(spec));
    const reinstalled = Replay.prepare({ spec: file, inputs, out: join(scratch, name, "reinstalled") }, imported).run();

    expect(reinstalled.summary.packets).toEqual(described.summary.packets);
    const a = join(scratch, name, "described");
    const b = join(scratch, name, "reinstalled");
    expect(captures(b)).toEqual(captures(a));
    expect(captures(a).length).toBeGreaterThan(0);
    for (const f of captures(a)) expect(readFileSync(join(b, f)), f).toEqual(readFileSync(join(a, f)));
  });
});

describe("the importer", () => {
  const load = (spec: string) => {
    const compiled = compile(loadSpec(join(ROOT, spec)));
    const exports = readBack(spec);
    return { compiled, exports, imported: importEntries(compiled, exports) };
  };
  const plain = (r: { match: object; action: object }) =>
    JSON.parse(
      JSON.stringify({ match: r.match, action: r.action }, (_, v: unknown) =>
        v instanceof Uint8Array ? Buffer.from(v).toString("hex") : v,
      ),
    ) as unknown;

  it.each([...EXAMPLE_SPECS, "test/fixtures/specs/p4-features.yaml"])(
    "gives back every row of %s as compiled (a keyless table: its first row)",
    (spec) => {
      const { compiled, imported } = load(spec);
      for (const t of compiled.tables) {
        const back = imported.tables.find((x) => x.id === t.id);
        const keyless = t.fields.length === 0;
        const rows = keyless ? t.rows.slice(0, 1) : t.rows;
        expect(
          back?.rows.map(plain),
          `table ${t.id} (${t.role} of ${compiled.members[t.member]?.qualified ?? "?"})`,
        ).toEqual(rows.map(plain));
      }
    },
  );

  it("is what the replay runs: an entry taken out of entries.json changes the captures", () => {
    const spec = "examples/hub-and-spoke/network.yaml";
    const { compiled, exports } = load(spec);
    const hub = exports.find((e) => e.machine === "hub");
    const updates = [...(hub?.entries.updates ?? [])];
    // The hub's first forward entry (unicast to h1): without it, frames for h1 are dropped at the hub.
    const forward = (hub?.p4info.tables ?? []).find((t) => t.preamble?.alias === "lan_hub_forward")?.preamble?.id;
    updates.splice(
      updates.findIndex((u) => u.entity?.tableEntry?.tableId === forward),
      1,
    );
    const broken = importEntries(
      compiled,
      exports.map((e) => (e === hub ? { ...e, entries: { ...e.entries, updates } } : e)),
    );
    const inputs = exampleInputs(spec);
    const out = join(scratch, "broken");
    const run = Replay.prepare({ spec: join(ROOT, spec), inputs, out }, broken).run();
    expect(run.summary.packets.delivered).toBeLessThan(7);
  });
});
