// The bench scripts' flags, read by node's parseArgs rather than commander (which reads them for `strata bench`):
// a flag a script does not know, or a number that is not one, is a one-line error and exit code 2, before anything
// runs — never a stack trace, never a run with NaN in it.

import { execFile } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { positive, readFlags } from "../../bench/args.js";
import { runBench } from "../../bench/main.js";
import { HANG_MS } from "../helpers/wait.js";

const ROOT = join(import.meta.dirname, "..", "..");

describe("readFlags and positive", () => {
  const options = { json: { type: "boolean" }, only: { type: "string" } } as const;
  const flags: { argv: string[]; gives: unknown }[] = [
    { argv: ["--json", "--only", "x"], gives: { json: true, only: "x" } },
    { argv: ["--help"], gives: "Unknown option '--help'" },
    { argv: ["--only"], gives: "Option '--only <value>' argument missing" },
    { argv: ["stray"], gives: "Unexpected argument 'stray'" },
  ];
  it.each(flags)("flags $argv", ({ argv, gives }) => {
    const read = readFlags({ args: argv, options });
    const found = typeof read === "string" ? read.split(".")[0] : read.values;
    expect(found).toEqual(typeof gives === "string" ? gives.split(".")[0] : gives);
  });

  const numbers: { given: string; whole: boolean; gives: number | string }[] = [
    { given: "2.5", whole: false, gives: 2.5 },
    { given: "16", whole: true, gives: 16 },
    { given: "1000", whole: true, gives: 1000 },
    { given: "2.5", whole: true, gives: "T 2.5 is not a whole number above 0" },
    { given: "0", whole: false, gives: "T 0 is not a number above 0" },
    { given: "-1", whole: true, gives: "T -1 is not a whole number above 0" },
    { given: "abc", whole: false, gives: "T abc is not a number above 0" },
    { given: "", whole: false, gives: "T  is not a number above 0" },
    { given: "Infinity", whole: false, gives: "T Infinity is not a number above 0" },
    // Past the top (issue 35: a stack trace or out of memory before).
    { given: "1001", whole: true, gives: "T 1001 is too large (at most 1,000)" },
    { given: "1000.5", whole: false, gives: "T 1000.5 is too large (at most 1,000)" },
    { given: "1e300", whole: true, gives: "T 1e300 is too large (at most 1,000)" },
  ];
  it.each(numbers)("positive($given, whole $whole), at most 1000", ({ given, whole, gives }) => {
    expect(positive("T", given, 1000, whole)).toEqual(gives);
  });
});

describe("npm run bench refuses bad flags", () => {
  const cases: { name: string; argv: string[]; says: string }[] = [
    { name: "an unknown flag", argv: ["--help"], says: "bench: Unknown option '--help'" },
    { name: "a flag without its value", argv: ["--only"], says: "bench: Option '--only <value>' argument missing" },
    { name: "a stray argument", argv: ["l2-exact"], says: "bench: Unexpected argument 'l2-exact'" },
    { name: "--max-time not a number", argv: ["--max-time", "abc"], says: "bench: --max-time abc is not a number" },
    { name: "--max-time zero", argv: ["--max-time", "0"], says: "bench: --max-time 0 is not a number" },
    {
      name: "--max-time past its top",
      argv: ["--list", "--max-time", "601"],
      says: "bench: --max-time 601 is too large (at most 600)\n",
    },
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

describe("the other bench scripts refuse bad flags", () => {
  const cases: { script: string; argv: string[]; says: string }[] = [
    { script: "bound", argv: ["--bogus"], says: "bench:bound: Unknown option '--bogus'" },
    { script: "place", argv: ["8", "abc"], says: "bench:place: T abc is not a whole number above 0" },
    { script: "place", argv: ["--bogus"], says: "bench:place: Unknown option '--bogus'" },
    { script: "place", argv: ["4", "1e9"], says: "bench:place: T 1e9 is too large (at most 1,000)\n" },
    { script: "view", argv: ["--packets", "0"], says: "bench:view: --packets 0 is not a whole number above 0" },
    { script: "view", argv: ["--bogus"], says: "bench:view: Unknown option '--bogus'" },
    { script: "view", argv: ["--hub", "1000,x"], says: "bench:view: --hub x is not a whole number above 0" },
    {
      script: "view",
      argv: ["--packets", "1000001"],
      says: "bench:view: --packets 1000001 is too large (at most 1,000,000)\n",
    },
  ];
  // Side by side: each case is a node start and the script's imports, and nothing else.
  it.concurrent.each(cases.map((c) => ({ ...c, name: `bench:${c.script} ${c.argv.join(" ")}` })))(
    "$name",
    async ({ script, argv, says }) => {
      const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = execFile(
          process.execPath,
          [join(ROOT, "dist", "bench", `${script}.js`), ...argv],
          { encoding: "utf8", timeout: HANG_MS },
          (_err, stdout, stderr) => resolve({ status: child.exitCode, stdout, stderr }),
        );
      });
      expect(r.status).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr.startsWith(says)).toBe(true);
      expect(r.stderr).toMatch(/^usage: npm run bench:/m);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    },
  );
});
