// The bench measures what it says: every data-plane scenario's packets meet
// the fate its description promises (leave the network, or are delivered),
// none dropped, so a broken table cannot make a scenario look fast.

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BUILDS, l2ExactSpec, replayCapture, runStaged } from "../../bench/dataplane.js";
import { replay } from "../../src/run/replay.js";
import { DROP_REASONS } from "../../src/wasm/abi.js";

const FATES: Record<keyof typeof BUILDS, "exit" | "deliver"> = {
  "l2-exact": "exit",
  "hub-and-spoke-8": "deliver",
  "router-layered": "exit",
  vxlan: "deliver",
  "l2-exact-64k": "exit",
  "fat-tree": "deliver",
};

/** Links every packet crosses, where the scenario promises a path length (fat-tree: ≥ 5 hops, issue 8). */
const HOPS: Partial<Record<keyof typeof BUILDS, number>> = {
  "l2-exact": 2,
  "l2-exact-64k": 2,
  "hub-and-spoke-8": 2,
  "fat-tree": 6,
};

describe.each(Object.keys(BUILDS) as (keyof typeof BUILDS)[])("bench scenario %s", (name) => {
  it(`every packet ${FATES[name] === "exit" ? "leaves the network" : "is delivered"}`, () => {
    const { loaded, batches } = BUILDS[name]();
    let injected = 0;
    for (const b of batches) {
      runStaged(loaded, loaded.runner.stage(b), injected);
      injected += b.count;
    }
    const x = loaded.dp.exports;
    const c = loaded.compiled;
    const drops = [-1, ...c.members.map((m) => m.index)].flatMap((m) => {
      const counts = new BigUint64Array(loaded.dp.mem.u8.buffer, x.memberDrops(m), DROP_REASONS.length);
      return [...counts].flatMap((n, k) =>
        n > 0n ? [`${c.members[m]?.qualified ?? "(outside)"}: ${DROP_REASONS[k]} ${n}`] : [],
      );
    });
    expect(drops).toEqual([]);
    const exited = c.links.filter((l) => l.receivers.length === 0).reduce((n, l) => n + x.linkPackets(l.index), 0);
    const delivered = c.members.reduce((n, m) => n + x.memberDelivered(m.index), 0);
    expect(FATES[name] === "exit" ? exited : delivered).toBe(injected);
    const hops = HOPS[name];
    if (name === "fat-tree") expect(c.members.length).toBeGreaterThanOrEqual(1000);
    if (hops !== undefined) expect(c.links.reduce((n, l) => n + x.linkPackets(l.index), 0)).toBe(hops * injected);
  });
});

// replay-file and replay-file-2w: the same switch from a capture file; on one thread or two,
// every frame leaves the network and the per-link files are the same.
describe("bench scenarios replay-file and replay-file-2w", () => {
  it("every packet leaves the network, on 1 worker and on 2, into the same files", () => {
    const dir = mkdtempSync(join(tmpdir(), "strata-bench-replay-"));
    try {
      const spec = join(dir, "l2.yaml");
      writeFileSync(spec, l2ExactSpec());
      const inputs = [{ endpoint: "lan:feed", file: replayCapture(20_000) }];
      const files = [1, 2].map((workers) => {
        const out = join(dir, `out-${workers}`);
        const { summary } = replay({ spec, inputs, out, workers });
        expect(summary.drops).toEqual({});
        expect(summary.packets.exited).toBe(20_000);
        return readdirSync(join(out, "links"))
          .sort()
          .map((f) => readFileSync(join(out, "links", f)));
      });
      expect(files[0]).toHaveLength(4);
      expect(files[1]?.every((f, k) => f.equals(files[0]?.[k] ?? Buffer.alloc(0)))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
