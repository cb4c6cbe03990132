// Identifiers a description leaves out stay as installed when it changes (issue 9, part 4 with
// part 3): an update or a reload allocates with what is installed as the previous allocation.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compile } from "../../src/control/compile.js";
import { recoverAllocation } from "../../src/control/allocation.js";
import { loadSpec } from "../../src/description/load.js";
import { prepareUpdates, parseUpdates } from "../../src/run/updates.js";
import { openServed } from "../engine/served.js";
import { DescriptionReloader } from "../../src/serve/watch.js";

const root = new URL("../..", import.meta.url).pathname;
const AUTO = readFileSync(join(root, "examples/ip-router-auto/network.yaml"), "utf8");
const TO_H2 = `        send:     [ { name: to-h2, header: { dst: "02:00:00:00:0b:02", type: 0x0800 } } ]`;
/** r's lanB member gets a send row written before to-h2: a fresh allocation would give it to-h2's session. */
const SPARE_FIRST = AUTO.replace(
  TO_H2,
  `        send:
          - { name: spare, header: { dst: "02:00:00:00:0b:09", type: 0x0800 } }
          - { name: to-h2, header: { dst: "02:00:00:00:0b:02", type: 0x0800 } }`,
);

const dir = mkdtempSync(join(tmpdir(), "strata-alloc-updates-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const write = (name: string, text: string): string => {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
};
const sessionOf = (
  alloc: ReturnType<typeof recoverAllocation>,
  network: string,
  member: string,
  name: string,
): number | undefined =>
  alloc.sessions.find((s) => s.network === network && s.member === member && s.name === name)?.session;

describe("allocation across changes of a description", () => {
  it("the changed description alone would move to-h2 (the case is not vacuous)", () => {
    expect(SPARE_FIRST).not.toBe(AUTO);
    const before = recoverAllocation(compile(loadSpec(write("a.yaml", AUTO))));
    const fresh = recoverAllocation(compile(loadSpec(write("b.yaml", SPARE_FIRST))));
    expect(sessionOf(before, "lanB", "r", "to-h2")).toBe(1);
    expect(sessionOf(fresh, "lanB", "r", "to-h2")).toBe(2);
  });

  it.each([
    {
      via: "--updates",
      run: (): ReturnType<typeof recoverAllocation> => {
        const first = compile(loadSpec(write("a.yaml", AUTO)));
        const b = write("b.yaml", SPARE_FIRST);
        const updates = write("u.yaml", `- { at: 1700000000, description: ${b} }\n`);
        const prepared = prepareUpdates(parseUpdates(readFileSync(updates, "utf8"), updates), first, []);
        const p = prepared.list[0];
        if (p?.update.kind !== "description") throw new Error("no description update");
        return recoverAllocation(prepared.compile({ ...p, update: p.update }, first));
      },
    },
  ])("$via keeps to-h2's session and gives the new row a free one", ({ run }) => {
    const alloc = run();
    expect(sessionOf(alloc, "lanB", "r", "to-h2")).toBe(1);
    expect(sessionOf(alloc, "lanB", "r", "spare")).toBe(2);
  });

  it("a reload (--watch, SIGHUP, reload) keeps to-h2's session and gives the new row a free one", async () => {
    const file = write("serve.yaml", AUTO);
    const { em } = openServed({ spec: file, endpoints: [], flushMs: 0 });
    try {
      const reloader = new DescriptionReloader(em, file);
      writeFileSync(file, SPARE_FIRST);
      const r = await reloader.reload();
      expect(r.ok, r.lines.join("\n")).toBe(true);
      const alloc = recoverAllocation(em.installed.compiled);
      expect(sessionOf(alloc, "lanB", "r", "to-h2")).toBe(1);
      expect(sessionOf(alloc, "lanB", "r", "spare")).toBe(2);
    } finally {
      em.stop();
    }
  });
});
