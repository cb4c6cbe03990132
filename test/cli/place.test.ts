// strata fit and strata place from the command line: every example against the
// bundled profiles, the golden outputs of the router example, exit codes
// (0 fits / all placed, 1 some unplaceable, 2 bad input or does not fit).

import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import type { FitReport } from "../../src/cli/fit.js";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../..//src/cli/main.js";
import { EXIT_BAD_INPUT, EXIT_OK, EXIT_PROBLEM } from "../..//src/cli/exit-codes.js";
import type { PlaceReport } from "../../src/cli/place.js";
import { bundledProfiles } from "../../src/p4/targets.js";
import { REPLAY_EXAMPLES } from "../helpers/examples.js";

async function run(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo();
  const code = await main(argv, io);
  return { code, stdout: io.stdout.text, stderr: io.stderr.text };
}

const EXAMPLES = REPLAY_EXAMPLES;
const ROUTER = "examples/ip-router/network.yaml";
const ROUTER_FLEET = "examples/ip-router/fleet.yaml";
const GOLDEN = "test/fixtures/golden";

const dir = mkdtempSync(join(tmpdir(), "strata-place-"));
/** Two hardware-like switches and a software one; machines prefer hardware. */
const MIXED = join(dir, "mixed.yaml");
writeFileSync(
  MIXED,
  `targets:
  - { name: tor1, profile: asic-example, labels: { kind: hardware } }
  - { name: tor2, profile: asic-example, labels: { kind: hardware } }
  - { name: soft, profile: bmv2, labels: { kind: software } }
defaults:
  prefers: [ { weight: 50, labels: { kind: hardware } } ]
`,
);
const HARDWARE_ONLY = join(dir, "hardware.yaml");
writeFileSync(HARDWARE_ONLY, "targets:\n  - { name: tor1, profile: asic-example }\n");

/** Examples whose machines do not all fit a bundled profile, and the violations (the rest fit). */
const MISFITS: Record<string, Record<string, string[]>> = {
  "asic-example": {
    "filter-chain": [
      "machine m3 does not fit asic-example: table chain_m3_receive: match " +
        "kind range, the target has exact, lpm, ternary, optional",
    ],
  },
};

/**
 * Machines that fit a hardware switch but find none with room left on MIXED: routed-fat-tree's 7 routers each have an
 * acquire table of optional entries (1,024), and each hardware switch holds 2,048 of them (two routers).
 */
const FULL: Record<string, string[]> = {
  "routed-fat-tree": ["e2", "e3", "e4"],
  // overlay-mesh: a fabric router and one host's machine fill each hardware switch's 2,048 optional entries.
  "overlay-mesh": ["s1", "s2", "s3", "s4", "vm3", "vm4"],
};

function golden(name: string, text: string): string {
  const file = join(GOLDEN, name);
  if (process.env.UPDATE_GOLDEN === "1") writeFileSync(file, text);
  return readFileSync(file, "utf8");
}

describe("strata fit: every example on every bundled profile", () => {
  const cases = EXAMPLES.flatMap((example) =>
    bundledProfiles().map((target) => ({ example, target, misfit: MISFITS[target]?.[example] })),
  );
  test.each(cases)("$example on $target", async ({ example, target, misfit }) => {
    const spec = `examples/${example}/network.yaml`;
    const { code, stdout, stderr } = await run("fit", spec, "--target", target);
    if (misfit === undefined) {
      expect({ code, stderr }).toEqual({ code: EXIT_OK, stderr: "" });
      expect(stdout).toMatch(new RegExp(`^${spec}: \\d+ machines? fit ${target} \\(targets/${target}\\.yaml\\)\\n`));
    } else {
      expect({ code, stdout }).toEqual({ code: EXIT_BAD_INPUT, stdout: "" });
      expect(stderr).toBe(misfit.map((v) => `strata: ${spec}: ${v}\n`).join(""));
    }
    const json = JSON.parse((await run("fit", spec, "--target", target, "--json")).stdout) as FitReport;
    expect(json.fits).toBe(misfit === undefined);
  });

  test("the router on asic-example: the golden report", async () => {
    const { code, stdout } = await run("fit", ROUTER, "--target", "asic-example");
    expect(code).toBe(EXIT_OK);
    expect(stdout).toBe(golden("fit-ip-router-asic.txt", stdout));
  });
});

describe("strata place: every example on a mixed fleet", () => {
  test.each(EXAMPLES)("%s: every machine placed, on hardware unless it cannot be", async (example) => {
    const spec = `examples/${example}/network.yaml`;
    const { code, stdout, stderr } = await run("place", spec, "--targets", MIXED, "--json");
    expect({ code, stderr }).toEqual({ code: EXIT_OK, stderr: "" });
    const report = JSON.parse(stdout) as PlaceReport;
    expect(report.ok).toBe(true);
    expect(report.unplaceable).toEqual([]);
    const soft = report.placed.filter((p) => p.target === "soft").map((p) => p.machine);
    expect(soft).toEqual(
      FULL[example] ?? Object.keys(MISFITS["asic-example"]?.[example] === undefined ? {} : { m3: 1 }),
    );
    const text = await run("place", spec, "--targets", MIXED);
    expect(text.stdout.split("\n")[0]).toBe(
      `${spec} on ${MIXED}: ${report.placed.length} of ${report.placed.length} machine` +
        `${report.placed.length === 1 ? "" : "s"} placed`,
    );
  });

  test("the router's own fleet: r displaces h1 (golden text and JSON)", async () => {
    const text = await run("place", ROUTER, "--targets", ROUTER_FLEET);
    expect({ code: text.code, stderr: text.stderr }).toEqual({ code: EXIT_OK, stderr: "" });
    expect(text.stdout).toBe(golden("place-ip-router.txt", text.stdout));
    const json = await run("place", ROUTER, "--targets", ROUTER_FLEET, "--json");
    const pretty = `${JSON.stringify(JSON.parse(json.stdout), null, 2)}\n`;
    expect(pretty).toBe(golden("place-ip-router.json", pretty));
  });

  test("some machine unplaceable: exit 1, with the reason per target", async () => {
    const spec = "examples/filter-chain/network.yaml";
    const { code, stdout, stderr } = await run("place", spec, "--targets", HARDWARE_ONLY);
    expect({ code, stderr }).toEqual({ code: EXIT_PROBLEM, stderr: "" });
    expect(stdout).toContain(
      "unplaceable:\n  m3 (priority 0):\n    tor1: does not fit asic-example: " +
        "table chain_m3_receive: match kind range, the target has exact, lpm, " +
        "ternary, optional\n",
    );
    const json = JSON.parse((await run("place", spec, "--targets", HARDWARE_ONLY, "--json")).stdout) as PlaceReport;
    expect(json.ok).toBe(false);
    expect(json.targets[0]?.offered.entries.range).toBe(0);
  });
});

describe("bad input: one strata: line each, exit 2", () => {
  const fleet = (name: string, text: string): string => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };
  test.each([
    {
      name: "place without --targets",
      argv: ["place", ROUTER],
      want: /^strata: required option '--targets <fleet>' not specified \(run 'strata place --help' for usage\)\n$/,
    },
    {
      name: "fit without --target",
      argv: ["fit", ROUTER],
      want: /^strata: required option '--target <profile>' not specified \(run 'strata fit --help' for usage\)\n$/,
    },
    {
      name: "fit: no such profile",
      argv: ["fit", ROUTER, "--target", "tofino"],
      want: /^strata: tofino: no bundled target profile 'tofino' \(bundled: asic-example, bmv2; .*\)\n$/,
    },
    {
      name: "place: no such fleet",
      argv: ["place", ROUTER, "--targets", join(dir, "none.yaml")],
      want: /^strata: .*none\.yaml: cannot read fleet: no such file .*\n$/,
    },
    {
      name: "place: the fleet names a machine the description lacks",
      argv: [
        "place",
        ROUTER,
        "--targets",
        fleet("unknown.yaml", "targets:\n  - { name: t, profile: bmv2 }\nmachines:\n  h3: { priority: 1 }\n"),
      ],
      want: new RegExp(
        [
          String.raw`^strata: .*unknown\.yaml: 4:3 machines\.h3: no machine 'h3' in the`,
          String.raw` description \(did you mean 'h1'\? machines: h1, r, h2\)\n$`,
        ].join(""),
      ),
    },
    {
      name: "place: a bad description",
      argv: ["place", "README.md", "--targets", ROUTER_FLEET],
      want: /^strata: README\.md: /,
    },
    {
      name: "fit: a profile path to a file that is no profile: one line, quoting none of it",
      argv: ["fit", ROUTER, "--target", fleet("notes.txt", "user: alice\ntoken: s3cret\n")],
      want: new RegExp(
        [
          String.raw`^strata: .*notes\.txt: this is not a target profile: it has no key`,
          String.raw` architecture or matchKinds \(give a`,
          String.raw` bundled profile's name or the path of a profile file\)\n$`,
        ].join(""),
      ),
    },
  ])("$name", async ({ argv, want }) => {
    const { code, stdout, stderr } = await run(...argv);
    expect(code).toBe(EXIT_BAD_INPUT);
    expect(stdout).toBe("");
    expect(stderr).toMatch(want);
  });
});
