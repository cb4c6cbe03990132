// The hop and copy limits from a program, not the command line: the runner and
// a replay refuse what the data plane cannot hold, before doing anything.

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { replay } from "../../src/run/replay.js";
import { DataPlane } from "../../src/wasm/module.js";
import { COPY_LIMIT_MAX, HOP_LIMIT_MAX, Runner } from "../../src/wasm/runner.js";

const root = new URL("../..", import.meta.url).pathname;
const HUB = join(root, "examples/hub-and-spoke/network.yaml");
const H1 = join(root, "pcaps/example-hub-h1.pcap");

let dir = "";
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "strata-limits-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("hopLimit and copyLimit options", () => {
  it.each([
    { option: "hopLimit", value: 0, ok: true },
    { option: "hopLimit", value: HOP_LIMIT_MAX, ok: true },
    { option: "hopLimit", value: HOP_LIMIT_MAX + 1, ok: false },
    { option: "hopLimit", value: 2 ** 31, ok: false },
    { option: "hopLimit", value: 2 ** 32 + 1, ok: false },
    { option: "hopLimit", value: -1, ok: false },
    { option: "hopLimit", value: 1.5, ok: false },
    { option: "hopLimit", value: Number.NaN, ok: false },
    { option: "copyLimit", value: 0, ok: true },
    { option: "copyLimit", value: COPY_LIMIT_MAX, ok: true },
    { option: "copyLimit", value: COPY_LIMIT_MAX + 1, ok: false },
    { option: "copyLimit", value: 2 ** 31, ok: false },
    { option: "copyLimit", value: 2 ** 32 + 1, ok: false },
    { option: "copyLimit", value: Number.POSITIVE_INFINITY, ok: false },
  ])("$option $value: accepted $ok", ({ option, value, ok }) => {
    const max = option === "hopLimit" ? HOP_LIMIT_MAX : COPY_LIMIT_MAX;
    const refused = new RegExp(`^${option} ${value} is not a whole number from 0 to ${max}$`);
    const runner = (): unknown => new Runner(DataPlane.load(), { [option]: value });
    const out = join(dir, "out");
    const replayed = (): unknown =>
      replay({ spec: HUB, inputs: [{ endpoint: "lan:h1.1", file: H1 }], out, [option]: value });
    if (ok) {
      expect(runner).not.toThrow();
      expect(replayed).not.toThrow();
    } else {
      expect(runner).toThrow(RangeError);
      expect(runner).toThrow(refused);
      expect(replayed).toThrow(refused);
      expect(existsSync(out)).toBe(false); // refused before anything was written
    }
  });
});
