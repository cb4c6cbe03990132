// Target profiles: the bundled ones load with the numbers their comments cite;
// a profile's limits read as written (unlimited = Infinity, stages × tables per
// stage); a bad profile gets every error with its line, column and path.

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { bundledProfiles, isProfilePath, loadProfile, parseProfile } from "../../src/p4/targets.js";
import { SpecError } from "../../src/description/problems.js";
import { loadSchema } from "../../src/description/schema.js";
import { MATCH_KINDS } from "../../src/wasm/abi.js";

const INF = Number.POSITIVE_INFINITY;

/** The error lines a bad profile gets (what the CLI prints after "strata: "). */
function errors(text: string): string[] {
  try {
    parseProfile(text, "p.yaml");
  } catch (err) {
    if (err instanceof SpecError) return err.lines();
    throw err;
  }
  return [];
}

describe("schema/target.schema.json restates the ABI's match kinds", () => {
  const schema = loadSchema("schema/target.schema.json") as {
    $defs: { matchKind: { enum: string[] } };
    properties: { capacity: { properties: Record<string, unknown> } };
  };
  test.each([
    ["matchKind", schema.$defs.matchKind.enum],
    ["capacity", Object.keys(schema.properties.capacity.properties)],
  ])("%s", (_name, kinds) => {
    expect(kinds).toEqual([...MATCH_KINDS]);
  });
});

describe("bundled profiles", () => {
  test("are bmv2 and asic-example", () => {
    expect(bundledProfiles()).toEqual(["asic-example", "bmv2"]);
  });

  test.each([
    {
      name: "bmv2",
      want: {
        architecture: "v1model",
        matchKinds: ["exact", "lpm", "ternary", "range", "optional"],
        maxKeyBits: INF,
        tables: INF,
        capacity: { exact: INF, lpm: INF, ternary: INF, range: INF, optional: INF },
        multicastGroups: 4096,
        selectorGroups: INF,
        selectorGroupSize: INF,
      },
    },
    {
      name: "asic-example",
      want: {
        architecture: "v1model",
        matchKinds: ["exact", "lpm", "ternary", "optional"],
        maxKeyBits: 256,
        tables: 48,
        stages: { count: 12, tablesPerStage: 4 },
        capacity: { exact: 32768, lpm: 8192, ternary: 2048, range: 0, optional: 2048 },
        multicastGroups: 256,
        selectorGroups: 64,
        selectorGroupSize: 16,
      },
    },
  ])("$name loads by name", ({ name, want }) => {
    const p = loadProfile(name);
    expect(p).toMatchObject({ name, file: `targets/${name}.yaml`, ...want });
    expect(p.summary).not.toBe("");
  });
});

describe("reading a profile", () => {
  test.each([
    {
      name: "left-out limits are unlimited; the name defaults to the file's",
      text: "architecture: v1model\nmatchKinds: [exact]\n",
      want: {
        name: "p",
        maxKeyBits: INF,
        tables: INF,
        capacity: { exact: INF, lpm: 0, ternary: 0, range: 0, optional: 0 },
        multicastGroups: INF,
      },
    },
    {
      name: "stages × tablesPerStage is the table count",
      text:
        "name: t\narchitecture: v1model\nmatchKinds: [exact, lpm]\nstages: " +
        "3\ntablesPerStage: 5\ncapacity: { lpm: 10 }\n",
      want: {
        name: "t",
        tables: 15,
        stages: { count: 3, tablesPerStage: 5 },
        capacity: { exact: INF, lpm: 10, ternary: 0, range: 0, optional: 0 },
      },
    },
    {
      name: "match kinds come back in the registry's order; another architecture is kept (fit reports it)",
      text: "architecture: tna\nmatchKinds: [ternary, exact]\ntables: 0\nmulticast: { groups: unlimited }\n",
      want: { architecture: "tna", matchKinds: ["exact", "ternary"], tables: 0, multicastGroups: INF },
    },
  ])("$name", ({ text, want }) => {
    expect(parseProfile(text, "dir/p.yaml")).toMatchObject(want);
  });

  test.each([
    { ref: "bmv2", path: false },
    { ref: "./bmv2", path: true },
    { ref: "my.yaml", path: true },
    { ref: "/etc/t", path: true },
  ])("$ref is a path: $path", ({ ref, path }) => {
    expect(isProfilePath(ref)).toBe(path);
  });
});

describe("bad profiles: every error, with its position", () => {
  test.each([
    {
      name: "empty",
      text: "",
      want: [
        "p.yaml: the target profile is empty; it needs architecture and " +
          "matchKinds (see docs/targets.md for the format)",
      ],
    },
    {
      name: "syntax",
      text: "architecture: v1model\nmatchKinds: [exact\n",
      want: [expect.stringMatching(/^p\.yaml: 3:1: syntax error: /)],
    },
    {
      name: "schema: misspelt kind and key, negative and wordy limits, missing key",
      text: "matchKinds: [exact, ternery]\nmaxKeyBits: -3\ncapacity: { exact: lots }\nmulticast: { group: 3 }\n",
      want: [
        "p.yaml: 1:1: missing key 'architecture' (expected a map with " +
          "architecture, matchKinds and optionally name, summary, maxKeyBits, " +
          "tables (or stages and tablesPerStage), capacity, multicast, " +
          "actionSelectors)",
        "p.yaml: 1:21 matchKinds[1]: must be exact, lpm, ternary, range or " +
          "optional, got 'ternery' (did you mean 'ternary'?)",
        "p.yaml: 2:13 maxKeyBits: must be a whole number ≥ 0, or unlimited, got -3 (it must be at least 0)",
        "p.yaml: 3:20 capacity.exact: must be a whole number ≥ 0, or unlimited, got 'lots'",
        "p.yaml: 4:14 multicast.group: unknown key 'group' (did you mean 'groups'?)",
      ],
    },
    {
      name: "rules: tables twice, a stage count alone, capacity for a kind not supported",
      text: "architecture: v1model\nmatchKinds: [exact]\ntables: 4\nstages: 2\ncapacity: { lpm: 5 }\n",
      want: [
        "p.yaml: 4:9 stages: tables and stages × tablesPerStage both give the " +
          "number of tables (write tables, or stages and tablesPerStage)",
        "p.yaml: 4:9 stages: stages without tablesPerStage (the number of " +
          "tables is stages × tablesPerStage: add tablesPerStage)",
        "p.yaml: 5:13 capacity.lpm: capacity for lpm, which matchKinds does not " +
          "list (add lpm to matchKinds, or remove this line)",
      ],
    },
  ])("$name", ({ text, want }) => {
    expect(errors(text)).toEqual(want);
  });

  const dir = mkdtempSync(join(tmpdir(), "strata-targets-"));
  writeFileSync(join(dir, "bad.yaml"), "architecture: 7\nmatchKinds: []\n");
  test.each([
    {
      ref: "bmv3",
      want: [
        "bmv3: no bundled target profile 'bmv3' (did you mean 'bmv2'? bundled: " +
          "asic-example, bmv2; a profile file's path has a / or an extension, " +
          "like ./bmv3.yaml)",
      ],
    },
    {
      ref: join(dir, "none.yaml"),
      want: [
        `${join(dir, "none.yaml")}: cannot read target profile: no such file (give a bundled profile's name or ` +
          `the path of a profile file)`,
      ],
    },
    {
      ref: join(dir, "bad.yaml"),
      want: [
        `${join(dir, "bad.yaml")}: 1:15 architecture: must be a name: a letter, then letters, digits, ` +
          `'_' or '-', got 7`,
        `${join(dir, "bad.yaml")}: 2:13 matchKinds: must not be empty (expected a list of the match kinds the ` +
          `target's tables support: exact, lpm, ternary, range, optional)`,
      ],
    },
  ])("loadProfile($ref)", ({ ref, want }) => {
    expect(() => loadProfile(ref)).toThrow(SpecError);
    try {
      loadProfile(ref);
    } catch (err) {
      expect((err as SpecError).lines()).toEqual(want);
    }
  });
});
