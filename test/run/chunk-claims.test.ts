// ChunkClaims (src/run/chunk-runner.ts): chunks of a replay across threads claimed on demand. Each case is the order
// in which data planes reach chunks (every data plane reaches every chunk, in order) and who runs each.

import { describe, expect, it } from "vitest";
import { ChunkClaims } from "../../src/run/chunk-runner.js";

describe("ChunkClaims", () => {
  it.each([
    {
      name: "2 planes in step: chunk 0 to the worker thread, 1 to the main thread's, then whoever comes first",
      planes: 2,
      reach: [
        [0, 0],
        [1, 0],
        [0, 1],
        [1, 1],
        [0, 2],
        [1, 2],
        [1, 3],
        [0, 3],
      ],
      owners: [1, 0, 0, 1],
    },
    {
      name: "2 planes, the main thread's slow: the worker thread takes every chunk it reaches first",
      planes: 2,
      reach: [
        [1, 0],
        [1, 1],
        [1, 2],
        [1, 3],
        [1, 4],
        [0, 0],
        [0, 1],
        [0, 2],
        [0, 3],
        [0, 4],
        [0, 5],
        [1, 5],
      ],
      owners: [1, 0, 1, 1, 1, 0],
    },
    {
      name: "3 planes: the first 3 chunks one each (workers 1, 2, then the main thread's), then on demand",
      planes: 3,
      reach: [
        [2, 0],
        [2, 1],
        [2, 2],
        [2, 3],
        [0, 0],
        [0, 1],
        [0, 2],
        [0, 3],
        [0, 4],
        [1, 0],
        [1, 1],
        [1, 2],
        [1, 3],
        [1, 4],
        [1, 5],
        [2, 4],
        [2, 5],
      ],
      owners: [1, 2, 0, 2, 0, 1],
    },
  ])("$name", ({ planes, reach, owners }) => {
    const claims = new ChunkClaims(new SharedArrayBuffer(ChunkClaims.BYTES), planes);
    claims.reset();
    const ran = new Map<number, number[]>();
    for (const [plane, id] of reach as [number, number][]) {
      // Not claimed before it is reached past the first `planes`.
      if (!ran.has(id) && id >= planes) expect(claims.owner(id)).toBe(-1);
      if (claims.claim(id, plane)) ran.set(id, [...(ran.get(id) ?? []), plane]);
    }
    // Each chunk run once, by the plane the claims name.
    expect(owners.map((_, id) => ran.get(id))).toEqual(owners.map((p) => [p]));
    expect(owners.map((_, id) => claims.owner(id))).toEqual(owners);
    // Reset: nothing past the first chunks claimed.
    claims.reset();
    expect(claims.owner(planes)).toBe(-1);
  });
});
