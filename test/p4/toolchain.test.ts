// The P4 reference toolchain the export tests run on (helpers/toolchain.ts): where CI requires it,
// it is there and runs; elsewhere its absence is said once, here, with what to do.

import { describe, expect, it } from "vitest";
import { findP4Tools, P4_REQUIRED } from "./helpers/toolchain.js";

const tools = findP4Tools();

describe("the P4 toolchain", () => {
  it.skipIf(!P4_REQUIRED && "missing" in tools)(
    `p4c and bmv2 run${"missing" in tools ? ` (skipped: ${tools.missing})` : ""}`,
    () => {
      expect("missing" in tools ? tools.missing : "").toBe("");
    },
  );
});
