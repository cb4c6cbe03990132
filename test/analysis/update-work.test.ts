// The update paths hand the analysis what changed, not every row to compare
// (issue 30): `serve --analyze` sends its thread the rows the ledger's journal
// says the writes since its last message reached (src/serve/analysis-
// changes.ts), and `run --updates --analyze` the new description and the links
// and members down (LiveAnalysis.change). Work counted, not time: the rows sent
// to the thread per write, and the whole-table comparisons
// (Analysis.changesFrom) an update makes; and the result is the one a
// comparison of every row gives.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { Analysis } from "../../src/analysis/analysis.js";
import { otherEntries } from "../../src/analysis/entry-rows.js";
import { LiveAnalysis } from "../../src/analysis/live.js";
import { compile } from "../../src/control/compile.js";
import type { Engine } from "../../src/engine/engine.js";
import { loadSpec } from "../../src/description/load.js";
import { analyseReplay } from "../../src/run/analysis.js";
import { ServeAnalysis, type ToAnalysis } from "../../src/serve/analysis.js";
import { runCommand } from "../../src/serve/control.js";
import { openServed } from "../engine/served.js";
import { fibRouter } from "./helpers/generate.js";

const dir = mkdtempSync(join(tmpdir(), "strata-update-work-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

/** Prefixes of the served FIB: a message of every row would carry them all. */
const PREFIXES = 2000;

/** Rows a message asks the thread to compare or apply. */
const rowsIn = (m: ToAnalysis): number =>
  [...(m.entries?.values() ?? [])].reduce((n, list) => n + list.length, 0) + (m.changes?.length ?? 0);

/** A write that gives forward row `row` of ip.r the action of row `like` (its next hop). */
function retell(em: Engine, row: number, like: number): void {
  const t = em.installed.compiled.tables.find(
    (x) => x.role === "forward" && em.installed.compiled.members[x.member]?.qualified === "ip.r",
  );
  const r = t?.rows.find((x) => x.row === row);
  const action = t?.rows.find((x) => x.row === like)?.action;
  if (t === undefined || r === undefined || action === undefined) throw new Error("no such forward rows");
  expect(em.write([{ op: "modify", table: t, match: r.match, action }], "api").ok).toBe(true);
}

const serveCases: { name: string; write: (em: Engine) => Promise<void> | void; rows: number }[] = [
  {
    name: "a prefix withdrawn (a control command)",
    write: async (em) => expect((await runCommand(em, "delete ip:r forward 5")).ok).toBe(true),
    rows: 1,
  },
  {
    name: "a prefix's next hop changed (a controller's modify: the row out, an entry beyond the rows in)",
    write: (em) => retell(em, 7, 8),
    rows: 1,
  },
];

describe("serve --analyze: a write sends the thread the rows it reached", () => {
  it.each(serveCases)("$name", async ({ write, rows }) => {
    const file = join(dir, "fib.yaml");
    writeFileSync(file, fibRouter(PREFIXES, 0, 3, 14));
    const em = openServed({ spec: file, endpoints: ["ip:h1"], flushMs: 0 }).em;
    const sent: ToAnalysis[] = [];
    const post = Worker.prototype.postMessage;
    vi.spyOn(Worker.prototype, "postMessage").mockImplementation(function (this: Worker, m: unknown) {
      sent.push(m as ToAnalysis);
      post.call(this, m);
    });
    const served = new ServeAnalysis(em, () => {}, 64);
    await served.settled();
    expect(sent.length).toBe(1);
    await write(em);
    await served.settled();
    expect(sent.length).toBe(2);
    const last = sent[1];
    if (last === undefined) throw new Error("no second message");
    expect(last.entries).toBeUndefined();
    expect(rowsIn(last)).toBe(rows);
    // What comparing every row finds.
    const live = new LiveAnalysis(em.installed.compiled);
    live.update(em.installed, undefined, otherEntries(em.installed, em.ledger));
    const verdict = (line: string | undefined): string => (line ?? "").replace(/; last update.*$/, "");
    expect(verdict(served.result().line)).toBe(verdict(live.line()));
    expect(served.result().line).toMatch(/last update: [12] rows?/);
    await served.close();
    em.stop();
  });
});

const ROUTER = "examples/ip-router/network.yaml";
const runCases: { name: string; updates: string }[] = [
  { name: "a route withdrawn and put back (new descriptions)", updates: "ip-router-route.yaml" },
  { name: "a link down and up", updates: "ip-router-link.yaml" },
  { name: "a machine down and up", updates: "ip-router-machine.yaml" },
];

describe("run --updates --analyze: an update compares no rows", () => {
  it.each(runCases)("$name", ({ updates }) => {
    const compiled = compile(loadSpec(ROUTER));
    const job = {
      compiled,
      updates: join("test/fixtures/updates", updates),
      endpoints: ["lanA:h1", "lanB:h2"],
      hopLimit: 64,
      maxClasses: 0,
      timeLimit: 0,
    };
    const compared = vi.spyOn(Analysis.prototype, "changesFrom");
    const result = analyseReplay(job);
    expect(compared).not.toHaveBeenCalled();
    expect(result.updates.length).toBeGreaterThan(0);
    // Each update walked classes again: it was analysed, from what it changed.
    expect(result.updates.every((u) => u.classes > 0)).toBe(true);
  });
});
