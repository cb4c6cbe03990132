// `strata run --updates FILE --analyze` (src/run/analysis.ts): the analysis of
// the starting description, then after each update the relations brought up
// to date incrementally (LiveAnalysis.update), and summary.json and the report
// saying which properties each update changed. On examples with the updates
// files of test/fixtures/updates: the properties each update makes fail or
// hold again, recordings byte-identical with and without --analyze, and the
// incremental result equal, at every update, to an analysis of the tables
// (and links, members down) at that point computed afresh.

import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Analysis } from "../../src/analysis/analysis.js";
import { LiveAnalysis } from "../../src/analysis/live.js";
import { currentProperties, type Relations } from "../../src/analysis/properties.js";
import { ComponentRelation } from "../../src/analysis/relations.js";
import { trafficRelation } from "../../src/analysis/traffic.js";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { compile } from "../../src/control/compile.js";
import { loadSpec } from "../../src/description/load.js";
import type { Summary } from "../../src/engine/summary.js";
import { loadUpdates, prepareUpdates } from "../../src/run/updates.js";

const root = new URL("../..", import.meta.url).pathname;
const path = (p: string): string => join(root, p);

const ROUTER = {
  spec: "examples/ip-router/network.yaml",
  inputs: ["lanA:h1.1=pcaps/example-router-h1.pcap", "lanB:h2.1=pcaps/example-router-h2.pcap"],
};
const HUB = {
  spec: "examples/hub-and-spoke/network.yaml",
  inputs: ["lan:h1.1=pcaps/example-hub-h1.pcap", "lan:h3.1=pcaps/example-hub-h3.pcap"],
};
const SUB = {
  spec: "examples/subduction/network.yaml",
  inputs: ["tenant:t1.1=pcaps/example-sub-t1.pcap", "core:h2.1=pcaps/example-sub-h2.pcap"],
};

/** Per update applied: the properties it made fail and hold again (undefined: not applied, no packet came after it). */
type Change = { readonly nowFail: readonly string[]; readonly nowHold: readonly string[] } | undefined;

const CASES: readonly {
  name: string;
  spec: string;
  inputs: readonly string[];
  updates: string;
  startFails: readonly string[];
  changes: readonly Change[];
}[] = [
  {
    name: "a route withdrawn and put back",
    ...ROUTER,
    updates: "test/fixtures/updates/ip-router-route.yaml",
    startFails: [],
    changes: [
      { nowFail: ["Fully_reachable (ip)"], nowHold: [] },
      { nowFail: [], nowHold: ["Fully_reachable (ip)"] },
    ],
  },
  {
    name: "a link down and up: the LAN, its sessions and the IP link over it",
    ...ROUTER,
    updates: "test/fixtures/updates/ip-router-link.yaml",
    startFails: [],
    changes: [
      {
        nowFail: [
          "Fully_reachable (lanB)",
          "Network_satisfies_communication_demands (lanB)",
          "Underlay_satisfies_layering_demands",
        ],
        nowHold: [],
      },
      {
        nowFail: [],
        nowHold: [
          "Fully_reachable (lanB)",
          "Network_satisfies_communication_demands (lanB)",
          "Underlay_satisfies_layering_demands",
        ],
      },
    ],
  },
  {
    name: "a machine down and up (its members in three networks), and an update after the last packet",
    ...ROUTER,
    updates: "test/fixtures/updates/ip-router-machine.yaml",
    startFails: [],
    changes: [
      {
        nowFail: [
          "Fully_reachable (lanA)",
          "Network_satisfies_communication_demands (lanA)",
          "Fully_reachable (lanB)",
          "Network_satisfies_communication_demands (lanB)",
          "Fully_reachable (ip)",
          "Underlay_satisfies_layering_demands",
        ],
        nowHold: [],
      },
      {
        nowFail: [],
        nowHold: [
          "Fully_reachable (lanA)",
          "Network_satisfies_communication_demands (lanA)",
          "Fully_reachable (lanB)",
          "Network_satisfies_communication_demands (lanB)",
          "Fully_reachable (ip)",
          "Underlay_satisfies_layering_demands",
        ],
      },
      undefined,
    ],
  },
  {
    name: "a spoke's link down and up: what fails already fails",
    ...HUB,
    updates: "test/fixtures/updates/hub-link.yaml",
    startFails: ["Fully_reachable (lan)", "Only_unicast_forwarding (lan)"],
    changes: [
      { nowFail: [], nowHold: [] },
      { nowFail: [], nowHold: [] },
    ],
  },
  {
    name: "a shared member's partner down and up (subduction)",
    ...SUB,
    updates: "test/fixtures/updates/subduction-member.yaml",
    startFails: [],
    changes: [
      { nowFail: ["Fully_reachable (core)", "Fully_reachable (tenant+core)"], nowHold: [] },
      { nowFail: [], nowHold: ["Fully_reachable (core)", "Fully_reachable (tenant+core)"] },
    ],
  },
];

let dir = "";
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "strata-run-analyze-"));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
  summary: Summary | undefined;
  /** Every recording, by path under --out. */
  files: Map<string, Buffer>;
}

async function run(spec: string, inputs: readonly string[], more: readonly string[]): Promise<Ran> {
  const out = mkdtempSync(join(dir, "out-"));
  rmSync(out, { recursive: true });
  const io = memoryIo();
  const args = ["run", path(spec), ...inputs.flatMap((i) => ["--in", i.replace("=", `=${root}`)]), "--out", out];
  const code = await main([...args, ...more], io);
  const files = new Map<string, Buffer>();
  let summary: Summary | undefined;
  try {
    summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as Summary;
    for (const sub of ["links", "delivered"])
      for (const f of readdirSync(join(out, sub))) files.set(`${sub}/${f}`, readFileSync(join(out, sub, f)));
  } catch {
    summary = undefined;
  }
  return { code, stdout: io.stdout.text, stderr: io.stderr.text, summary, files };
}

describe("strata run --updates --analyze: the properties after each update", () => {
  it.each(CASES)("$name", async ({ spec, inputs, updates, startFails, changes }) => {
    const analysed = await run(spec, inputs, ["--updates", path(updates), "--analyze"]);
    expect(analysed.stderr).toBe("");
    expect(analysed.code).toBe(0);
    const s = analysed.summary;
    expect(s?.analysis?.fails).toEqual(startFails);
    expect(s?.analysis?.unknown).toEqual([]);
    const got = (s?.updates ?? []).map((u) =>
      u.analysis === undefined ? undefined : { nowFail: u.analysis.nowFail, nowHold: u.analysis.nowHold },
    );
    expect(got).toEqual(changes);
    // Each update's properties follow from the one before: what it changed, and nothing else.
    let fails = new Set(startFails);
    for (const u of s?.updates ?? []) {
      const a = u.analysis;
      if (a === undefined) continue;
      for (const p of a.nowFail) fails.add(p);
      for (const p of a.nowHold) fails.delete(p);
      expect(new Set(a.fails)).toEqual(fails);
      fails = new Set(a.fails);
      for (const p of a.nowFail) expect(a.counterexamples[p]).not.toBe("");
    }
    // The report names each change at its update.
    const lines = analysed.stdout.split("\n");
    for (const [i, c] of changes.entries()) {
      const line = lines.find((l) => l.startsWith(`  update ${i} at `)) ?? "";
      if (c === undefined) expect(line).toContain("not applied");
      for (const p of c?.nowFail ?? []) expect(line).toContain(`${p} now fails`);
      for (const p of c?.nowHold ?? []) expect(line).toContain(`${p} now holds`);
    }

    // The packets do not see the analysis: the same recordings, byte for byte, and the same summary but for it.
    const plain = await run(spec, inputs, ["--updates", path(updates)]);
    expect(plain.code).toBe(0);
    expect([...analysed.files.keys()].sort()).toEqual([...plain.files.keys()].sort());
    for (const [f, bytes] of plain.files) expect(analysed.files.get(f)?.equals(bytes), f).toBe(true);
    const timeless = (x: Summary | undefined): object => {
      const { elapsedSeconds: _e, packetsPerSecond: _p, analysis: _a, updates, crc32, ...rest } = x ?? ({} as Summary);
      return { ...rest, crc32, updates: updates?.map(({ analysis: _u, ...u }) => u) };
    };
    expect(timeless(analysed.summary)).toEqual(timeless(plain.summary));
    expect(plain.summary?.analysis).toBeUndefined();
    expect(plain.stdout).not.toContain("analysis");
  });

  it("--analyze without --updates: one analysis of the description", async () => {
    const r = await run(ROUTER.spec, ROUTER.inputs, ["--analyze"]);
    expect(r.code).toBe(0);
    expect(r.summary?.analysis?.fails).toEqual([]);
    expect(r.summary?.analysis?.holds.length).toBe(19);
    expect(r.stdout).toContain("analysis at the start: every property holds (19)");
  });

  it("a budget that cuts the analysis short says so, and the replay is done", async () => {
    const r = await run(ROUTER.spec, ROUTER.inputs, [
      "--updates",
      path("test/fixtures/updates/ip-router-link.yaml"),
      "--analyze",
      "--max-classes",
      "2",
    ]);
    expect(r.code).toBe(0);
    expect(r.summary?.analysis?.cut).toContain("--max-classes 2");
    expect(r.summary?.analysis?.unknown.length).toBeGreaterThan(0);
    expect(r.stdout).toContain("cut short:");
  });

  it.each([
    { flags: ["--max-classes", "10"], line: "strata: --max-classes bounds the analysis: give --analyze too" },
    { flags: ["--time-limit", "5"], line: "strata: --time-limit bounds the analysis: give --analyze too" },
    { flags: ["--analyze", "--max-classes", "x"], line: "strata: --max-classes x is not a whole number" },
    { flags: ["--analyze", "--time-limit", "-1"], line: "strata: --time-limit -1 is not a number of seconds" },
  ])("refused in one line: $flags", async ({ flags, line }) => {
    const r = await run(ROUTER.spec, ROUTER.inputs, flags);
    expect(r.code).toBe(2);
    expect(r.stderr.split("\n").filter((l) => l !== "")).toHaveLength(1);
    expect(r.stderr).toContain(line);
    expect(r.summary).toBeUndefined();
  });
});

/** What an analysis says, in a form two analyses with their own classes can be compared by. */
function verdicts(a: Analysis, r: Relations): object {
  const properties = currentProperties(a, r).map((p) => `${p.name}: ${p.holds}`);
  const reach = a.components.map((c) => {
    const rel = r.relation.get(c);
    const ms = c.members;
    return {
      component: c.name,
      pairs: rel?.pairs,
      reaches: ms.flatMap((m0) => ms.filter((m1) => rel?.reaches(m0, m1) === true).map((m1) => `${m0}>${m1}`)),
      unreachable: rel?.unreachable(),
      holes: [...new Set(rel?.holes().map((h) => `${h.hole.member}/${h.hole.table}/${String(h.hole.link)}`))].sort(),
      loops: (rel?.loops().length ?? 0) > 0,
      sessions: r.traffic.get(c)?.sessions.length,
      deliveries: [
        ...new Set(r.traffic.get(c)?.deliveries.map((d) => `${d.session.member}@${d.session.session}>${d.member}`)),
      ].sort(),
    };
  });
  return { properties, reach };
}

/** The relations of an analysis computed afresh. */
function afresh(a: Analysis): Relations {
  return {
    relation: new Map(a.components.map((c) => [c, new ComponentRelation(a, c)])),
    traffic: new Map(a.components.map((c) => [c, trafficRelation(a, c)])),
  };
}

describe("strata run --analyze: the incremental analysis = one computed afresh at each update", () => {
  it.each(CASES)("$name", ({ spec, inputs, updates }) => {
    const compiled = compile(loadSpec(path(spec)));
    const endpoints = inputs.map((i) => i.slice(0, i.indexOf("=")));
    const live = new LiveAnalysis(compiled);
    let checked = 0;
    prepareUpdates(loadUpdates(path(updates)), compiled, endpoints, (scratch) => {
      const u = live.update(scratch.installed, scratch.down);
      expect(u.classes).toBeGreaterThan(0);
      const fresh = new Analysis(scratch.installed.compiled, { down: scratch.down });
      expect(fresh.changesFrom(scratch.installed)).toEqual([]);
      expect(verdicts(live.analysis, live.relations)).toEqual(verdicts(fresh, afresh(fresh)));
      checked++;
    });
    expect(checked).toBe(loadUpdates(path(updates)).length);
  });
});
