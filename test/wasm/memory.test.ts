// LinearMemory (src/wasm/memory.ts): the data plane's memory is shared (a SharedArrayBuffer, so a thread beside it
// can read it where it lies), with a maximum; an allocation that grows it leaves every view made before at its old
// length, and the accessors hand out fresh ones that cover the whole.

import { describe, expect, it } from "vitest";
import { type Build, DataPlane } from "../../src/wasm/module.js";

const BUILDS: readonly Build[] = ["release", "debug", "bound"];

describe("linear memory", () => {
  it.each(BUILDS)("%s: is shared, with a maximum", (build) => {
    const dp = DataPlane.load(build);
    expect(dp.exports.memory.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(dp.mem.u8.buffer).toBeInstanceOf(SharedArrayBuffer);
  });

  it("re-creates its views after memory grows", () => {
    const dp = DataPlane.load();
    const kept = dp.alloc(16);
    const before = dp.mem.u8;
    const size = before.byteLength;
    before[kept] = 7;
    const big = dp.alloc(size * 2); // more than the module has: memory.grow
    expect(before.byteLength).toBe(size); // the old view keeps its length (a shared buffer never detaches)
    expect(dp.mem.u8.byteLength).toBeGreaterThan(size * 2);
    expect(dp.mem.u32.length).toBe(dp.mem.u8.byteLength >>> 2);
    expect(dp.mem.u8[kept]).toBe(7); // the same memory: what was written before is there
    dp.mem.u8[big + size * 2 - 1] = 42;
    expect(dp.mem.u8[big + size * 2 - 1]).toBe(42);
  });
});
