// strata serve --analyze: the analysis follows the emulation's table writes
// (control commands, reloads) from the rows that changed, and `counts` shows
// which properties fail now.

import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Analysis } from "../../src/analysis/analysis.js";
import { computeRelations } from "../../src/analysis/properties.js";
import { analysisOf, attachAnalysis } from "../../src/serve/analysis.js";
import { runCommand } from "../../src/serve/control.js";
import { openServed } from "../engine/served.js";
import { DescriptionReloader } from "../../src/serve/watch.js";

const dir = mkdtempSync(join(tmpdir(), "strata-serve-analyze-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const lastLine = (text: string): string => text.split("\n").at(-1) ?? "";

/** The pairs each component's relation reaches, to hold the live one to one computed afresh. */
function pairs(a: Analysis, relation: ReturnType<typeof computeRelations>["relation"]): string[] {
  return [...relation].flatMap(([c, rel]) =>
    c.members.flatMap((m0) =>
      c.members
        .filter((m1) => m1 !== m0 && rel.reaches(m0, m1))
        .map((m1) => `${c.name} ${a.member(m0).member.qualified}>${a.member(m1).member.qualified}`),
    ),
  );
}

describe("strata serve --analyze", () => {
  const steps: readonly { command: string; counts: RegExp }[] = [
    { command: "", counts: /^analysis: every property holds \(19\)$/ },
    {
      command: "delete ip:r forward 1",
      counts: new RegExp(
        [
          String.raw`^analysis: 1 of 19 properties fail: Fully_reachable \(ip\); last`,
          String.raw` update: 1 row, \d+ header class(es)? walked again in [\d.]+ ms$`,
        ].join(""),
      ),
    },
    {
      command: "delete lanB:r send 0",
      counts: new RegExp(
        [
          String.raw`^analysis: 3 of 19 properties fail:`,
          String.raw` Effective_reachability_is_symmetric \(lanB\), Fully_reachable \(ip\),`,
          String.raw` Underlay_satisfies_layering_demands; last update: 1 row, \d+ header`,
          String.raw` classes? walked again in [\d.]+ ms$`,
        ].join(""),
      ),
    },
    { command: "insert lanB:r send 0", counts: /^analysis: 1 of 19 properties fail: Fully_reachable \(ip\);/ },
    { command: "insert ip:r forward 1", counts: /^analysis: every property holds \(19\); last update: 1 row/ },
  ];

  it(
    "control commands: counts shows the properties as the tables are, the " + "relations equal those computed afresh",
    async () => {
      const em = openServed({ spec: "examples/ip-router/network.yaml", endpoints: ["lanA:h1"], flushMs: 0 }).em;
      attachAnalysis(em);
      for (const { command, counts } of steps) {
        if (command !== "") expect((await runCommand(em, command)).ok).toBe(true);
        const r = await runCommand(em, "counts");
        expect(lastLine(r.line)).toMatch(counts);
        const live = analysisOf(em);
        if (live === undefined) throw new Error("no analysis");
        const fresh = new Analysis(em.installed.compiled);
        fresh.apply(fresh.changesFrom(em.installed));
        expect(pairs(live.analysis, live.relations.relation)).toEqual(pairs(fresh, computeRelations(fresh).relation));
      }
      em.stop();
    },
  );

  it("a reload: the new tables analysed", async () => {
    const file = join(dir, "router.yaml");
    copyFileSync("examples/ip-router/network.yaml", file);
    const em = openServed({ spec: file, endpoints: ["lanA:h1"], flushMs: 0 }).em;
    attachAnalysis(em);
    const reloader = new DescriptionReloader(em, file);
    writeFileSync(
      file,
      readFileSync(file, "utf8").replace(
        "- { match: { dst: 10.0.2.0/24 }, out: 2 }",
        "- { match: { dst: 10.0.3.0/24 }, out: 2 }",
      ),
    );
    expect((await reloader.reload()).ok).toBe(true);
    expect(lastLine((await runCommand(em, "counts")).line)).toMatch(
      /^analysis: 1 of 19 properties fail: Fully_reachable \(ip\); last update/,
    );
    reloader.close();
    em.stop();
  });

  it("without --analyze, counts says nothing of it", async () => {
    const em = openServed({ spec: "examples/ip-router/network.yaml", endpoints: ["lanA:h1"], flushMs: 0 }).em;
    expect((await runCommand(em, "counts")).line).not.toMatch(/analysis/);
    em.stop();
  });
});
