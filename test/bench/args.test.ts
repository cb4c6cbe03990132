// `npm run bench`'s flags, read by node's parseArgs rather than commander (which reads them for `strata bench`):
// a flag it does not know, or a time that is not one, is a one-line error and exit code 2, before anything runs.

import { describe, expect, it } from "vitest";
import { runBench } from "../../bench/main.js";

describe("npm run bench refuses bad flags", () => {
  const cases: { name: string; argv: string[]; says: string }[] = [
    { name: "an unknown flag", argv: ["--help"], says: "bench: Unknown option '--help'" },
    { name: "a flag without its value", argv: ["--only"], says: "bench: Option '--only <value>' argument missing" },
    { name: "a stray argument", argv: ["l2-exact"], says: "bench: Unexpected argument 'l2-exact'" },
    { name: "--max-time not a number", argv: ["--max-time", "abc"], says: "bench: --max-time abc is not a number" },
    { name: "--max-time zero", argv: ["--max-time", "0"], says: "bench: --max-time 0 is not a number" },
    { name: "a scenario there is not", argv: ["--only", "nope"], says: "bench: no scenario nope (have: pcap-read," },
  ];
  it.each(cases)("$name", async ({ argv, says }) => {
    let stdout = "";
    let stderr = "";
    const code = await runBench(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr.startsWith(says)).toBe(true);
    expect(stderr).not.toMatch(/\n\s+at /); // no stack
  });

  it("lists the scenarios with good flags", async () => {
    let stdout = "";
    const code = await runBench(["--list", "--max-time", "0.5"], { stdout: (t) => (stdout += t), stderr: () => {} });
    expect(code).toBe(0);
    expect(stdout).toMatch(/^l2-exact {2}/m);
  });
});
