// Fleet files: targets with profiles (bundled or relative to the fleet file) and
// labels; machines' policies with the defaults filled in key by key; every
// error of a bad fleet at its line, column and path, and a bad profile's
// errors in the profile's own file.

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { loadFleet } from "../../src/p4/fleet.js";
import { SpecError } from "../../src/description/problems.js";

const dir = mkdtempSync(join(tmpdir(), "strata-fleet-"));
writeFileSync(join(dir, "lab.yaml"), "architecture: v1model\nmatchKinds: [exact]\ntables: 3\n");
writeFileSync(join(dir, "broken.yaml"), "architecture: v1model\nmatchKinds: [exact]\nstages: 3\n");
writeFileSync(join(dir, "lab.json"), '{"architecture": "v1model", "matchKinds": ["exact"], "tables": 3}\n');
// Files a profile path may lead to that are no profile: their errors would quote them.
writeFileSync(join(dir, "shadow"), "root:$6$salt$hash:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n");
writeFileSync(join(dir, "env"), "\nKEY=secret\nOTHER: secret\n");
writeFileSync(
  join(dir, "image.bin"),
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x73, 0x65, 0x63, 0x72, 0x65, 0x74]),
);

function write(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

function errors(file: string): string[] {
  try {
    loadFleet(file);
  } catch (err) {
    if (err instanceof SpecError) return err.lines().map((l) => l.replaceAll(dir, "DIR"));
    throw err;
  }
  return [];
}

describe("loadFleet", () => {
  test("targets, labels as text, profiles bundled and relative to the fleet, defaults filled in", () => {
    const file = write(
      "good.yaml",
      `targets:
  - { name: tor1, profile: asic-example, labels: { rack: 1, hw: true }, maxMachines: 2 }
  - { name: lab, profile: ./lab.yaml }
defaults:
  priority: 3
  prefers: [ { weight: 10, labels: { hw: true } } ]
machines:
  r:  { priority: 100, requires: { rack: "1" }, placedOn: tor1 }
  h1: { requires: { hw: true } }
`,
    );
    const f = loadFleet(file);
    expect(
      f.targets.map((t) => ({
        name: t.name,
        profile: t.profile.name,
        labels: t.labels,
        maxMachines: t.maxMachines,
        tables: t.profile.tables,
      })),
    ).toEqual([
      { name: "tor1", profile: "asic-example", labels: { rack: "1", hw: "true" }, maxMachines: 2, tables: 48 },
      { name: "lab", profile: "lab", labels: {}, maxMachines: Number.POSITIVE_INFINITY, tables: 3 },
    ]);
    expect(f.defaults).toEqual({ priority: 3, requires: {}, prefers: [{ weight: 10, labels: { hw: "true" } }] });
    expect(f.machines.get("r")).toMatchObject({
      priority: 100,
      requires: { rack: "1" },
      prefers: [{ weight: 10, labels: { hw: "true" } }],
      placedOn: "tor1",
      at: { line: 8, column: 3, path: "machines.r" },
    });
    expect(f.machines.get("h1")).toMatchObject({ priority: 3, requires: { hw: "true" } });
  });

  test.each([
    {
      name: "missing file",
      text: undefined,
      want: ["DIR/missing.yaml: cannot read fleet: no such file (give the path of a fleet file (docs/targets.md))"],
    },
    {
      name: "empty",
      text: "",
      want: ["DIR/empty.yaml: the fleet is empty; it needs a list of targets (see docs/targets.md for the format)"],
    },
    {
      name: "no targets",
      text: "targets: []\n",
      want: ["DIR/no targets.yaml: 1:10 targets: must not be empty (expected a list of targets (switches))"],
    },
    {
      name: "schema and rules together",
      text: `targets:
  - { name: a, profile: bmv3 }
  - { name: a, profile: ./lab.yaml, labels: { "bad label": 1 } }
  - { name: c, profile: bmv2, maxMachines: 0, lables: {} }
machines:
  x: { priority: high, placedOn: z }
  y: { prefers: [ { weight: 500, labels: {} } ], placedOn: cc }
`,
      want: [
        "DIR/schema and rules together.yaml: 2:25 targets[0].profile: no " +
          "bundled target profile 'bmv3' (did you mean 'bmv2'? bundled: " +
          "asic-example, bmv2; a profile file's path has a / or an extension, " +
          "like ./bmv3.yaml)",
        "DIR/schema and rules together.yaml: 3:13 targets[1].name: target 'a' " +
          "is already targets[0] (give each target its own name)",
        `DIR/schema and rules together.yaml: 3:47 targets[1].labels["bad ` +
          `label"]: 'bad label' is not allowed as a key here (a key must be a ` +
          `label: a letter, then letters, digits, '_', '-', '.' or '/')`,
        "DIR/schema and rules together.yaml: 4:44 targets[2].maxMachines: must " +
          "be the most machines the target hosts (a whole number ≥ 1), got 0 (it " +
          "must be at least 1)",
        "DIR/schema and rules together.yaml: 4:47 targets[2].lables: unknown key 'lables' (did you mean 'labels'?)",
        "DIR/schema and rules together.yaml: 6:18 machines.x.priority: must be " +
          "an integer (higher is placed first and may displace lower), got 'high'",
        "DIR/schema and rules together.yaml: 6:34 machines.x.placedOn: no " +
          "target 'z' in the fleet (did you mean 'a'? targets: a, c)",
        "DIR/schema and rules together.yaml: 7:29 machines.y.prefers[0].weight: " +
          "must be a weight in 1..100, got 500 (it must be at most 100)",
        "DIR/schema and rules together.yaml: 7:60 machines.y.placedOn: no " +
          "target 'cc' in the fleet (did you mean 'c'? targets: a, c)",
      ],
    },
    {
      name: "a bad profile: its errors in its own file, once however many targets use it",
      text: "targets:\n  - { name: a, profile: broken.yaml }\n  - { name: b, profile: broken.yaml }\n",
      want: [
        "DIR/broken.yaml: 3:9 stages: stages without tablesPerStage (the number " +
          "of tables is stages × tablesPerStage: add tablesPerStage)",
      ],
    },
    {
      name: "priorities beyond 2^53 are refused, not rounded",
      text: `targets:
  - { name: a, profile: bmv2 }
defaults: { priority: 9007199254740993 }
machines:
  x: { priority: -9007199254740992 }
  y: { priority: 9007199254740991 }
  z: { priority: 0x20000000000001 }
`,
      want: [
        "DIR/priorities beyond 2^53 are refused, not rounded.yaml: 3:23 " +
          "defaults.priority: priority 9007199254740993 is outside ±(2^53 − 1) " +
          "and would be read rounded (a priority is a whole number from " +
          "-9007199254740991 to 9007199254740991)",
        "DIR/priorities beyond 2^53 are refused, not rounded.yaml: 5:18 " +
          "machines.x.priority: priority -9007199254740992 is outside ±(2^53 − 1) " +
          "and would be read rounded (a priority is a whole number from " +
          "-9007199254740991 to 9007199254740991)",
        "DIR/priorities beyond 2^53 are refused, not rounded.yaml: 7:18 " +
          "machines.z.priority: priority 0x20000000000001 is outside ±(2^53 − 1) " +
          "and would be read rounded (a priority is a whole number from " +
          "-9007199254740991 to 9007199254740991)",
      ],
    },
    {
      name: "a JSON profile, keys quoted, is a profile",
      text: "targets:\n  - { name: a, profile: lab.json }\n",
      want: [],
    },
    {
      name: "a profile path to a text file that is no profile: one line, quoting none of it",
      text: "targets:\n  - { name: a, profile: ./shadow }\n",
      want: [
        "DIR/shadow: this is not a target profile: it has no key architecture " +
          "or matchKinds (give a bundled profile's name or the path of a profile file)",
      ],
    },
    {
      name: "a first line that is blank is not quoted, nor the lines after it",
      text: "targets:\n  - { name: a, profile: ./env }\n",
      want: [
        "DIR/env: this is not a target profile: it has no key architecture or " +
          "matchKinds (give a bundled profile's name or the path of a profile " +
          "file)",
      ],
    },
    {
      name: "a binary profile file: said so, nothing quoted",
      text: "targets:\n  - { name: a, profile: ./image.bin }\n",
      want: [
        "DIR/image.bin: this is not a text file: it looks like a PNG image " +
          "(give a bundled profile's name or the path of a profile file)",
      ],
    },
    {
      name: "a missing profile file",
      text: "targets:\n  - { name: a, profile: ./nope.yaml }\n",
      want: [
        "DIR/nope.yaml: cannot read target profile: no such file (give a " +
          "bundled profile's name or the path of a profile file)",
      ],
    },
  ])("$name", ({ name, text, want }) => {
    const file = text === undefined ? join(dir, "missing.yaml") : write(`${name}.yaml`, text);
    expect(errors(file)).toEqual(want);
  });
});
