// LinearMemory (src/wasm/memory.ts): an allocation that grows wasm memory
// detaches every view on the old buffer; the accessors hand out fresh ones.

import { describe, expect, it } from "vitest";
import { DataPlane } from "../../src/wasm/module.js";

describe("linear memory", () => {
  it("re-creates its views after memory grows", () => {
    const dp = DataPlane.load();
    const before = dp.mem.u8;
    const size = before.byteLength;
    const big = dp.alloc(size * 2); // more than the module has: memory.grow
    expect(before.byteLength).toBe(0); // the old view is detached
    expect(dp.mem.u8.byteLength).toBeGreaterThan(size * 2);
    dp.mem.u8[big + size * 2 - 1] = 42;
    expect(dp.mem.u8[big + size * 2 - 1]).toBe(42);
  });
});
