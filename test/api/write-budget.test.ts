// A batch of writes costs what it touches: on the bench's 1,169-member fat-tree, one-row batches read the description's
// members once (what the quick check keeps of one load), not once a batch (8fac5bc loaded it all again for each).
// Work is counted, not time: the members src/description/topology.ts reads, through a wrapper of readTopology.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test, vi } from "vitest";
import { fatTreeSpec, mac } from "../../bench/descriptions.js";
import { Emulation } from "../../src/index.js";

const read = vi.hoisted(() => ({ members: 0 }));
vi.mock("../../src/description/topology.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/description/topology.js")>();
  return {
    ...real,
    readTopology: (...args: Parameters<typeof real.readTopology>) => {
      const draft = real.readTopology(...args);
      read.members += draft.members.length;
      return draft;
    },
  };
});

const dir = mkdtempSync(join(tmpdir(), "strata-write-budget-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("20 one-row batches on the 1,169-member fat-tree read its members at most once", async () => {
  const file = join(dir, "fat-tree.yaml");
  writeFileSync(file, fatTreeSpec().yaml);
  const em = Emulation.load(file);
  try {
    const members = em.members.length;
    expect(members).toBe(1169);
    read.members = 0;
    for (let i = 0; i < 20; i++)
      await em.write([
        { op: "insert", member: "e1", table: "forward", row: { match: { dst: mac(0x7000 + i) }, out: 1 } },
      ]);
    const rows = await em.read("lan:e1", "forward");
    expect(rows.filter((r) => r.by === "api")).toHaveLength(20);
    // 8fac5bc: 20 × 1,169 = 23,380 members read.
    expect(read.members).toBeLessThanOrEqual(members);
  } finally {
    await em.close();
  }
});
