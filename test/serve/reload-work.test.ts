// strata serve's reload at the cost of what an edit touched: a row changed in place is read and compiled alone
// (src/control/reload.ts) and only the tables whose rows changed, or that another writer wrote since, are compared with
// what they hold (src/control/reconcile.ts). Budgeted by work (whole loads, members compiled, tables compared), and
// what is installed after each reload is held to a fresh install of the same text.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fatTreeSpec } from "../../bench/descriptions.js";
import { compile } from "../../src/control/compile.js";
import { Reloader } from "../../src/control/reload.js";
import { loadSpec } from "../../src/description/load.js";
import { Engine } from "../../src/engine/engine.js";
import { DescriptionReloader } from "../../src/serve/watch.js";

const { yaml: TREE } = fatTreeSpec(2, 2, 2);
/** e1's first forward row (the first row of all for that destination), sent out of its port 2 instead of 1. */
const MOVED = TREE.replace(`{ dst: "02:00:00:00:00:01" }, out: 1 }`, `{ dst: "02:00:00:00:00:01" }, out: 2 }`);
/** The same, with a row added after e1's second (a line more: the description is loaded whole). */
const E1_SECOND = `- { match: { dst: "02:00:00:00:00:02" }, out: 2 }`;
const ADDED = MOVED.replace(E1_SECOND, `${E1_SECOND}\n          - { match: { dst: "02:00:00:00:00:09" }, out: 2 }`);

/** Every table's entries, as a fresh install of `text` would hold them: match and action by table key. */
function held(em: Engine): string[] {
  const c = em.installed.compiled;
  return c.tables.flatMap((t) => {
    const where = `${c.members[t.member]?.qualified}/${t.role}`;
    return [...em.ledger.entries(t.id).values()].map((e) => `${where} ${JSON.stringify([e.match, e.action])}`).sort();
  });
}

/** Takes a2's first forward row out, as a controller may. */
function takeOut(em: Engine): void {
  const c = em.installed.compiled;
  const a2 = c.members.find((m) => m.qualified === "lan.a2");
  const table = a2?.tables.forward;
  const row = table?.rows[0];
  if (table === undefined || row === undefined) throw new Error("lan.a2 has no forward row");
  expect(em.write([{ op: "delete", table, match: row.match }], "api").ok).toBe(true);
}

let dir: string | undefined;
afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("strata serve's reload: the work follows the edit", () => {
  it.each([
    {
      name: "a row changed in place",
      text: MOVED,
      before: undefined,
      loads: 0,
      compared: 1,
      line: "0 rows inserted, 1 modified, 0 deleted",
    },
    {
      name: "a row changed, after another writer took a row of another member out",
      text: MOVED,
      before: takeOut,
      loads: 0,
      compared: 2,
      line: "1 rows inserted, 1 modified, 0 deleted",
    },
    {
      name: "nothing changed, after another writer took a row out",
      text: TREE,
      before: takeOut,
      loads: 0,
      compared: 1,
      line: "1 rows inserted, 0 modified, 0 deleted",
    },
    {
      name: "a row added (a line more)",
      text: ADDED,
      before: undefined,
      loads: 1,
      compared: "every table",
      // Rows after the new one move down: taken out and put in again at their new places.
      line: "3 rows inserted, 0 modified, 2 deleted",
    },
  ] as const)("$name: $compared compared", async ({ text, before, loads, compared, line }) => {
    dir = mkdtempSync(join(tmpdir(), "strata-reload-work-"));
    const file = join(dir, "network.yaml");
    writeFileSync(file, TREE);
    // As strata serve starts: what loaded the description reloads it.
    const loader = new Reloader(file);
    const em = Engine.open({ compiled: loader.loadWhole().compiled });
    const reloader = new DescriptionReloader(em, file, () => {}, loader);
    before?.(em);
    writeFileSync(file, text);
    const was = { ...reloader.work, compared: em.reconcileWork.compared };
    const r = await reloader.reload();
    expect(r.lines).toEqual([`reloaded ${file}: ${line}`]);
    const tables = em.installed.compiled.tables.length;
    expect({
      loads: reloader.work.loads - was.loads,
      compared: em.reconcileWork.compared - was.compared,
    }).toEqual({ loads, compared: compared === "every table" ? tables : compared });
    const fresh = Engine.open({ compiled: compile(loadSpec(file)) });
    expect(held(em)).toEqual(held(fresh));
    expect(readFileSync(file, "utf8")).toBe(text);
    em.stop();
    fresh.stop();
  });
});
