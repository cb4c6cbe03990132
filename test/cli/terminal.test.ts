// What strata prints is shown on the terminal, never obeyed (issue 35): a file name with ESC
// (which starts a terminal's escape sequences) or U+202E (which shows what follows backwards)
// is printed escaped, in an error line (formatInputError, in-process too) and in a report
// (the stdout and stderr sinks of the command line, run as a process here), while strata's own
// newlines and tabs stay; in JSON output the escapes are JSON's own, so the value is the same.

import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { memoryIo, StreamSink } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { InputError, printable } from "../../src/errors.js";
import { HANG_MS } from "../helpers/wait.js";

const root = new URL("../..", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "strata-terminal-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A name that, printed raw, turns the terminal red and reads as "…xyaml.html" (U+202E reverses "lmth.yaml"). */
const NAME = "\u001b[31mred\u202elmth.yaml";
const SHOWN = "\\u001b[31mred\\u202elmth.yaml";
/** What must never reach the terminal from a name. */
const RAW = /[\u001b\u202e]/;

describe("printable", () => {
  it.each([
    { text: "plain.yaml", shown: "plain.yaml" },
    { text: NAME, shown: SHOWN },
    { text: "a\nb\tc\rd\u0000", shown: "a\\nb\\tc\\rd\\u0000" },
    { text: "\u007f\u009b[2J", shown: "\\u007f\\u009b[2J" },
    { text: "\u2066x\u2069 \u202dy\u202c \u200fz \u061c", shown: "\\u2066x\\u2069 \\u202dy\\u202c \\u200fz \\u061c" },
    { text: "caf\u00e9 \u05e9\u05dc\u05d5\u05dd", shown: "caf\u00e9 \u05e9\u05dc\u05d5\u05dd" },
  ])("$shown", ({ text, shown }) => {
    expect(printable(text)).toBe(shown);
  });
});

describe("a file name in an error line", () => {
  it("InputError shows it escaped", () => {
    const e = new InputError(`/tmp/${NAME}`, "3:1", "bad", "fix it");
    expect(e.message).toBe(`/tmp/${SHOWN}: 3:1: bad (fix it)`);
  });

  it("strata check of a file not there, in-process", async () => {
    const io = memoryIo();
    expect(await main(["check", join(dir, `missing${NAME}`)], io)).toBe(2);
    expect(io.stderr.text).toBe(
      `strata: ${join(dir, `missing${SHOWN}`)}: cannot read file: no such file (give the path of a .yaml or .json ` +
        `network description)\n`,
    );
  });
});

describe("the command line's output", () => {
  const file = join(dir, NAME);
  copyFileSync(join(root, "examples/ip-router/network.yaml"), file);
  const strata = (...argv: string[]): { status: number | null; stdout: string; stderr: string } =>
    spawnSync(process.execPath, [join(root, "dist/src/cli/main.js"), ...argv], { encoding: "utf8", timeout: HANG_MS });

  it.each([
    { name: "a report naming the file", argv: [file], stream: "stdout" as const, shows: `${SHOWN}: valid, 3 networks` },
    {
      name: "an error naming it",
      argv: [`${file}.missing`],
      stream: "stderr" as const,
      shows: `${SHOWN}.missing: cannot read file`,
    },
  ])("strata check: $name, escaped", ({ argv, stream, shows }) => {
    const r = strata("check", ...argv);
    expect(r[stream]).toContain(shows);
    expect(r.stdout + r.stderr).not.toMatch(RAW);
  });

  it("strata check --json: the name escaped as JSON escapes it, the same value", () => {
    const r = strata("check", "--json", file);
    expect(r.status).toBe(0);
    expect(r.stdout).not.toMatch(RAW);
    expect((JSON.parse(r.stdout) as { file: string }).file).toBe(file);
  });
});

describe("StreamSink", () => {
  it("escapes what would act on the terminal, and keeps the newlines and tabs", async () => {
    const stream = new PassThrough();
    let got = "";
    stream.on("data", (b: Buffer) => (got += b.toString()));
    const sink = new StreamSink(stream);
    sink.write(`a\tb\n${NAME}\r\u0007\n`);
    await sink.flush();
    expect(got).toBe(`a\tb\n${SHOWN}\\r\\u0007\n`);
  });
});
