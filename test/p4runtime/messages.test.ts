import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { generateMessageTypes } from "../../scripts/gen-p4runtime-types.js";

describe("src/p4runtime/messages.ts", () => {
  it("is what scripts/gen-p4runtime-types.ts writes from proto/p4runtime/ now (npm run build:ts writes it)", () => {
    expect(readFileSync(new URL("../../src/p4runtime/messages.ts", import.meta.url), "utf8")).toBe(generateMessageTypes());
  });
});
