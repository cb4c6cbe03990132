// The command line's own contract: a flag mistake is one `strata: …` line and exit 2,
// whatever commander found wrong; help and version are not mistakes.

import { describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../..//src/cli/main.js";

async function strata(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo();
  const code = await main(argv, io);
  return { code, stdout: io.stdout.text, stderr: io.stderr.text };
}

describe("a flag mistake is one line and exit 2", () => {
  it.each([
    {
      name: "an unknown option",
      argv: ["--bogus"],
      line: "strata: unknown option '--bogus' (run 'strata --help' for usage)",
    },
    {
      name: "an unknown option of a command",
      argv: ["check", "x.yaml", "--jsn"],
      line: "strata: unknown option '--jsn' (did you mean --json? run 'strata check --help' for usage)",
    },
    {
      name: "an unknown command",
      argv: ["chek", "x.yaml"],
      line: "strata: unknown command 'chek' (did you mean check? run 'strata --help' for usage)",
    },
    {
      name: "an unknown subcommand",
      argv: ["pcap", "list"],
      line: "strata: unknown command 'list' (run 'strata pcap --help' for usage)",
    },
    {
      name: "a missing argument",
      argv: ["trace"],
      line: "strata: missing required argument 'dir' (run 'strata trace --help' for usage)",
    },
    {
      name: "a missing argument of a subcommand",
      argv: ["pcap", "inspect"],
      line: "strata: missing required argument 'file' (run 'strata pcap inspect --help' for usage)",
    },
    {
      name: "a missing required option",
      argv: ["run", "x.yaml", "--in", "a=b"],
      line: "strata: required option '--out <dir>' not specified (run 'strata run --help' for usage)",
    },
    {
      name: "an option without its value",
      argv: ["run", "x.yaml", "--out", "d", "--in"],
      line: "strata: option '--in <endpoint=file>' argument missing (run 'strata run --help' for usage)",
    },
    {
      name: "an invalid option value",
      argv: ["trace", "d", "--packet", "-1"],
      line:
        "strata: option '--packet <n>' argument '-1' is invalid: it must be a " +
        "packet number, 0 or more (run 'strata trace --help' for usage)",
    },
    {
      name: "too many arguments",
      argv: ["check", "a.yaml", "b.yaml"],
      line:
        "strata: too many arguments for 'check': expected 1 argument but got 2 " +
        "(run 'strata check --help' for usage)",
    },
    {
      name: "a long value with a newline",
      argv: ["trace", "d", "--packet", `x\n${"9".repeat(10_000)}`],
      line:
        `strata: option '--packet <n>' argument 'x\\n${"9".repeat(57)}…' is invalid: it must be a packet ` +
        `number, 0 or more (run 'strata trace --help' for usage)`,
    },
  ])("$name", async ({ argv, line }) => {
    const r = await strata(...argv);
    expect(r).toEqual({ code: 2, stdout: "", stderr: `${line}\n` });
  });
});

describe("help and version", () => {
  it.each([
    { name: "--help", argv: ["--help"], out: /^Usage: strata \[options\] \[command\]/ },
    { name: "help run", argv: ["help", "run"], out: /^Usage: strata run \[options\] <spec>/ },
    { name: "run --help", argv: ["run", "--help"], out: /^Usage: strata run \[options\] <spec>/ },
    { name: "--version", argv: ["--version"], out: /^\d+\.\d+\.\d+\n$/ },
  ])("$name: stdout, exit 0", async ({ argv, out }) => {
    const r = await strata(...argv);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(out);
    expect(r.stderr).toBe("");
  });

  it.each([
    { name: "no command", argv: [], usage: "Usage: strata [options] [command]" },
    { name: "pcap without its command", argv: ["pcap"], usage: "Usage: strata pcap [options] [command]" },
  ])("$name: the usage on stderr, exit 2", async ({ argv, usage }) => {
    const r = await strata(...argv);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(usage);
  });

  it.each([["run"], ["check"], ["trace"], ["pcap", "inspect"]])(
    "%s --help names its exit codes and points to the rest",
    async (...cmd) => {
      const r = await strata(...cmd, "--help");
      expect(r.stdout).toMatch(/[Ee]xit code/);
      expect(r.stdout).toContain("All exit codes: strata --help.");
    },
  );

  it("--help lists every exit code", async () => {
    const r = await strata("--help");
    for (const code of ["0", "1", "2", "3", "70", "130"]) expect(r.stdout).toMatch(new RegExp(`^  ${code} +\\S`, "m"));
  });
});
