// `npm run bench:bound` compares the data plane with kernels that take each
// scenario's one path through the same step functions, each told its case
// (assembly/bound/kernels.ts). The comparison means something only if a
// kernel does the same work: here each kernel runs a scenario's batches on one
// data plane, the data plane on another, and every counter — injected,
// per-link packets and bytes, deliveries, drops, every table row's hits — must
// be the same.

import { describe, expect, it } from "vitest";
import { boundBuilt, KERNELS, runKernel } from "../../bench/bound.js";
import { runStaged } from "../../bench/dataplane.js";
import { readCounters } from "../../src/engine/summary.js";

describe.each(KERNELS)("bound kernel for $scenario", (k) => {
  it("does what the data plane does: the same counters, hits and bytes", () => {
    const lane = boundBuilt(k);
    const bound = boundBuilt(k);
    let first = 0;
    for (const [i, b] of lane.batches.entries()) {
      runStaged(lane.loaded, lane.loaded.runner.stage(b), first);
      const other = bound.batches[i];
      if (other === undefined) throw new Error("the builds differ");
      runKernel(bound.loaded.dp, k, bound.loaded.runner.stage(other), first);
      first += b.count;
    }
    const want = readCounters(lane.loaded.dp, lane.loaded.installed);
    expect(want.injected).toBe(first);
    expect(readCounters(bound.loaded.dp, bound.loaded.installed)).toEqual(want);
  });
});
