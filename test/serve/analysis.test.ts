// strata serve --analyze: the analysis follows the emulation's table writes
// (control commands, reloads) from the rows that changed, in a thread of its
// own, and `counts` shows which properties fail now. An analysis that takes long
// holds neither commands nor signals: a stop ends serve while it runs, and the
// report says it was unfinished.

import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Analysis } from "../../src/analysis/analysis.js";
import { LiveAnalysis } from "../../src/analysis/live.js";
import { computeRelations } from "../../src/analysis/properties.js";
import { memoryIo } from "../../src/cli/io.js";
import { serve } from "../../src/cli/serve.js";
import { analysisOf, ServeAnalysis } from "../../src/serve/analysis.js";
import { runCommand } from "../../src/serve/control.js";
import { openServed } from "../engine/served.js";
import { DescriptionReloader } from "../../src/serve/watch.js";
import { killSpawned, spawnServe } from "./spawned.js";
import { aclSpec } from "../../bench/serve-reload.js";

const dir = mkdtempSync(join(tmpdir(), "strata-serve-analyze-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(killSpawned);

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

/** Destinations of the ACL (bench/serve-reload.ts): a reload adding two cutting rows walks 3,003 classes again. */
const ACL_ROWS = 1000;
/** What the analysis says of aclSpec(ACL_ROWS, 0): a holds nobody's traffic (r only forwards toward b). */
const ACL_RESULT = /^analysis: 1 of 7 properties fail: Fully_reachable \(acl\)$/m;

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
      const served = new ServeAnalysis(em, () => {}, 64);
      // The thread's analysis, here where its relations can be read.
      const live = new LiveAnalysis(em.installed.compiled);
      for (const { command, counts } of steps) {
        if (command !== "") expect((await runCommand(em, command)).ok).toBe(true);
        await served.settled();
        expect(lastLine((await runCommand(em, "counts")).line)).toMatch(counts);
        live.update(em.installed);
        const fresh = new Analysis(em.installed.compiled);
        fresh.apply(fresh.changesFrom(em.installed));
        expect(pairs(live.analysis, live.relations.relation)).toEqual(pairs(fresh, computeRelations(fresh).relation));
      }
      await served.close();
      em.stop();
    },
  );

  it("a reload: the new tables analysed", async () => {
    const file = join(dir, "router.yaml");
    copyFileSync("examples/ip-router/network.yaml", file);
    const em = openServed({ spec: file, endpoints: ["lanA:h1"], flushMs: 0 }).em;
    const served = new ServeAnalysis(em, () => {}, 64);
    const reloader = new DescriptionReloader(em, file);
    writeFileSync(
      file,
      readFileSync(file, "utf8").replace(
        "- { match: { dst: 10.0.2.0/24 }, out: 2 }",
        "- { match: { dst: 10.0.3.0/24 }, out: 2 }",
      ),
    );
    expect((await reloader.reload()).ok).toBe(true);
    await served.settled();
    expect(lastLine((await runCommand(em, "counts")).line)).toMatch(
      /^analysis: 1 of 19 properties fail: Fully_reachable \(ip\); last update/,
    );
    expect(served.result().finished).toBe(true);
    reloader.close();
    await served.close();
    em.stop();
  });

  it("without --analyze, counts says nothing of it", async () => {
    const em = openServed({ spec: "examples/ip-router/network.yaml", endpoints: ["lanA:h1"], flushMs: 0 }).em;
    expect(analysisOf(em)).toBeUndefined();
    expect((await runCommand(em, "counts")).line).not.toMatch(/analysis/);
    em.stop();
  });
});

describe("strata serve --analyze: a long analysis holds neither commands nor signals", () => {
  it("a reload that cuts thousands of classes: counts and stop are answered while it runs", async () => {
    const file = join(dir, "acl-commands.yaml");
    writeFileSync(file, aclSpec(ACL_ROWS, 0));
    const out = join(dir, "out-commands");
    const commands = new PassThrough();
    const io = memoryIo();
    const done = serve(
      file,
      { port: [], out, commands: true, analyze: true, json: true, hopLimit: 64, copyLimit: 4096 },
      io,
      { commands },
    );
    const said = async (pattern: RegExp): Promise<void> => {
      for (let i = 0; i < 3000 && !pattern.test(io.stderr.text); i++) await new Promise((r) => setTimeout(r, 10));
      expect(io.stderr.text).toMatch(pattern);
    };
    await said(ACL_RESULT);
    writeFileSync(file, aclSpec(ACL_ROWS, 2));
    // One chunk: each command runs once the one before is answered, the reload's analysis still going.
    commands.write("reload\ncounts\nstop\n");
    expect(await done).toBe(0);
    expect(io.stderr.text).toMatch(/^reloaded .*acl-commands\.yaml: \d+ rows inserted/m);
    expect(io.stderr.text).toMatch(
      new RegExp(
        String.raw`^analysis: 1 of 7 properties fail: Fully_reachable \(acl\); ` +
          String.raw`analysing… \(the tables changed since that result\)$`,
        "m",
      ),
    );
    const report = JSON.parse(io.stdout.text) as { analysis: { finished: boolean; line: string } };
    expect(report.analysis.finished).toBe(false);
    expect(report.analysis.line).toMatch(ACL_RESULT);
    expect(existsSync(join(out, "summary.json"))).toBe(true);
  });

  it("SIGTERM to a serve whose reload is being analysed: it stops at once, --out written", async () => {
    const file = join(dir, "acl-signal.yaml");
    writeFileSync(file, aclSpec(ACL_ROWS, 0));
    const out = join(dir, "out-signal");
    const served = spawnServe([file, "--analyze", "--commands", "--out", out]);
    await served.said(ACL_RESULT);
    writeFileSync(file, aclSpec(ACL_ROWS, 2));
    served.command("reload");
    await served.said(/\nreloaded .*acl-signal\.yaml: \d+ rows inserted/);
    served.child.kill("SIGTERM");
    expect(await served.exited).toBe(0);
    expect(served.stdout()).toMatch(
      new RegExp(
        String.raw`\n  analysis: unfinished: serve stopped while the last table write was analysed; ` +
          String.raw`the result before it: 1 of 7 properties fail: Fully_reachable \(acl\)\n`,
      ),
    );
    expect(existsSync(join(out, "summary.json"))).toBe(true);
  });
});
