// assembly/abi.ts is generated from src/wasm/abi.ts, src/wire/designs.ts and the
// pcap layout; the committed file must be what the generator writes today.

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { generateAbi } from "../../scripts/gen-abi.js";

describe("the wasm ABI", () => {
  it("assembly/abi.ts is up to date with its sources", () => {
    const committed = readFileSync(new URL("../../assembly/abi.ts", import.meta.url), "utf8");
    expect(committed).toBe(generateAbi());
  });

});
