// Every file strata reads has a limit of its kind, and past it one `strata:` line and exit
// code 2 (issue 35): a description, a target profile, a fleet, an updates file and a
// description it names, the TLS files, a run's summary.json and trace.jsonl for `strata view`
// and `strata trace`, and a description reloaded by `strata serve`. Each is fed a file far
// over its limit that costs no disk — a sparse file of 3 GiB, or /dev/zero, endless and with
// no newline — and what strata reads of it is bounded by the limit, not the file.

import {
  closeSync,
  copyFileSync,
  existsSync,
  ftruncateSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { DescriptionReloader } from "../../src/serve/watch.js";
import { openServed } from "../engine/served.js";

const root = new URL("../..", import.meta.url).pathname;
const SPEC = join(root, "examples/ip-router/network.yaml");
const IN = [
  "--in",
  `lanA:h1.1=${join(root, "pcaps/example-router-h1.pcap")}`,
  "--in",
  `lanB:h2.1=${join(root, "pcaps/example-router-h2.pcap")}`,
];
const GIB = 1024 * 1024 * 1024;

let tmp = "";
/** 3 GiB that take no disk: a line of text (so it reads as text until the limit), then a hole. */
let huge = "";
/** A run of SPEC, traced. */
let run = "";
const at = (name: string): string => join(tmp, name);

/**
 * A copy of the run with `file` (summary.json, trace.jsonl) a symbolic link to `target`. Its
 * summary records no CRC-32s unless `checked` (as an older strata's): what is tested is the
 * reader's own bound, not the check of the file against the summary, which comes first.
 */
function runWith(name: string, file: string, target: string, checked = false): string {
  const dir = at(name);
  mkdirSync(dir);
  for (const f of ["summary.json", "trace.jsonl"])
    if (f === file) symlinkSync(target, join(dir, f));
    else if (f === "summary.json" && !checked) {
      const summary = JSON.parse(readFileSync(join(run, f), "utf8")) as Record<string, unknown>;
      delete summary["crc32"];
      writeFileSync(join(dir, f), JSON.stringify(summary));
    } else copyFileSync(join(run, f), join(dir, f));
  return dir;
}

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), "strata-limits-"));
  huge = at("huge");
  writeFileSync(huge, `# ${"x".repeat(100)}\n`);
  const fd = openSync(huge, "r+");
  try {
    // A hole: ftruncate writes nothing.
    ftruncateSync(fd, 3 * GIB);
  } finally {
    closeSync(fd);
  }
  run = at("run");
  const io = memoryIo();
  expect(await main(["run", SPEC, ...IN, "--out", run, "--trace"], io)).toBe(0);
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const DESCRIPTION_FIX = "give the path of a .yaml or .json network description; see docs/spec.md";
const tooLarge = (file: () => string, limit: string, noun: string, fix: string) => (): string =>
  `strata: ${file()}: the file is larger than ${limit}, the most a ${noun} may be (${fix})`;
const tlsTooLarge = (flag: string, file: () => string): (() => string) =>
  tooLarge(file, "1 MiB", `${flag} file`, `${flag} takes PEM text: a certificate or a key is a few KiB`);
const traceLine = (dir: () => string) => (): string =>
  `strata: ${join(dir(), "trace.jsonl")}: line 1: longer than 64 MiB, the most a trace line holds (the file ` +
  `was cut or edited; replay again)`;
const notTheRuns = (dir: () => string) => (): string =>
  `strata: ${join(dir(), "trace.jsonl")}: not the file the run wrote: it is not a regular file, or it grew as it ` +
  "was read (the file was cut, edited or replaced after the run; replay again)";
const RUN_FIX = "give the output directory of `strata run` (--out DIR)";
const summaryTooLarge = (run: string): (() => string) =>
  tooLarge(() => join(at(run), "summary.json"), "256 MiB", "run's summary", RUN_FIX);
const p4runtime = (...tls: string[]): string[] => ["p4runtime", SPEC, "--listen", "127.0.0.1:0", ...tls];

describe("a file over its limit: one line, exit 2", () => {
  const cases: { kind: string; argv: () => string[]; line: () => string }[] = [
    {
      kind: "a description, 3 GiB",
      argv: () => ["check", huge],
      line: tooLarge(() => huge, "16 MiB", "description", DESCRIPTION_FIX),
    },
    {
      kind: "a target profile, 3 GiB",
      argv: () => ["fit", SPEC, "--target", huge],
      line: tooLarge(
        () => huge,
        "16 MiB",
        "target profile",
        "give a bundled profile's name or the path of a profile file; see docs/spec.md",
      ),
    },
    {
      kind: "a fleet, 3 GiB",
      argv: () => ["place", SPEC, "--targets", huge],
      line: tooLarge(
        () => huge,
        "16 MiB",
        "fleet",
        "give the path of a fleet file (docs/targets.md); see docs/spec.md",
      ),
    },
    {
      kind: "an updates file, 3 GiB",
      argv: () => ["run", SPEC, ...IN, "--out", at("out-updates"), "--updates", huge],
      line: tooLarge(
        () => huge,
        "16 MiB",
        "updates file",
        "give the path of a YAML or JSON list of updates (docs/updates.md); see docs/spec.md",
      ),
    },
    {
      kind: "--tls-cert, 3 GiB",
      argv: () => p4runtime("--tls-cert", huge, "--tls-key", SPEC),
      line: tlsTooLarge("--tls-cert", () => huge),
    },
    {
      kind: "--tls-cert, /dev/zero",
      argv: () => p4runtime("--tls-cert", "/dev/zero", "--tls-key", SPEC),
      line: tlsTooLarge("--tls-cert", () => "/dev/zero"),
    },
    {
      kind: "--tls-key, 3 GiB",
      argv: () => p4runtime("--tls-cert", SPEC, "--tls-key", huge),
      line: tlsTooLarge("--tls-key", () => huge),
    },
    {
      kind: "--tls-ca, /dev/zero",
      argv: () => p4runtime("--tls-cert", SPEC, "--tls-key", SPEC, "--tls-ca", "/dev/zero"),
      line: tlsTooLarge("--tls-ca", () => "/dev/zero"),
    },
    {
      kind: "view --run's summary.json, 3 GiB",
      argv: () => ["view", SPEC, "--run", runWith("summary-huge", "summary.json", huge), "--out", at("a.html")],
      line: summaryTooLarge("summary-huge"),
    },
    {
      kind: "view --run's summary.json, /dev/zero",
      argv: () => ["view", SPEC, "--run", runWith("summary-zero", "summary.json", "/dev/zero"), "--out", at("b.html")],
      line: summaryTooLarge("summary-zero"),
    },
    {
      kind: "view --run's trace.jsonl, /dev/zero: no newline",
      argv: () => ["view", SPEC, "--run", runWith("trace-zero", "trace.jsonl", "/dev/zero"), "--out", at("c.html")],
      line: traceLine(() => at("trace-zero")),
    },
    {
      kind: "view --run's trace.jsonl, /dev/zero, checked against the summary: not the run's",
      argv: () => [
        "view",
        SPEC,
        "--run",
        runWith("trace-zero-checked", "trace.jsonl", "/dev/zero", true),
        "--out",
        at("c.html"),
      ],
      line: notTheRuns(() => at("trace-zero-checked")),
    },
    {
      kind: "strata trace, /dev/zero, checked against the summary: not the run's",
      argv: () => ["trace", runWith("trace-only-zero-checked", "trace.jsonl", "/dev/zero", true)],
      line: notTheRuns(() => at("trace-only-zero-checked")),
    },
    {
      kind: "strata trace, /dev/zero: no newline",
      argv: () => ["trace", runWith("trace-only-zero", "trace.jsonl", "/dev/zero")],
      line: traceLine(() => at("trace-only-zero")),
    },
  ];

  it.each(cases)("$kind", async ({ argv, line }) => {
    const io = memoryIo();
    expect(await main(argv(), io)).toBe(2);
    expect(io.stderr.text).toBe(`${line()}\n`);
    expect(io.stdout.text).toBe("");
    for (const written of ["out-updates", "a.html", "b.html", "c.html"]) expect(existsSync(at(written))).toBe(false);
  });

  it("an update's description, 3 GiB: the line names the update", async () => {
    const updates = at("updates.yaml");
    writeFileSync(updates, `- { at: 0, description: ${huge} }\n`);
    const io = memoryIo();
    expect(await main(["run", SPEC, ...IN, "--out", at("out-update"), "--updates", updates], io)).toBe(2);
    expect(io.stderr.text).toMatch(/^strata: .*: the file is larger than 16 MiB, the most a description may be/);
    expect(io.stderr.text.split("\n")).toHaveLength(2);
  });

  it("strata serve's reload of a description that became /dev/zero: refused, the emulation goes on", async () => {
    const file = at("served.yaml");
    copyFileSync(SPEC, file);
    const { em } = openServed({ spec: file, endpoints: ["lanA:h1"], flushMs: 0 });
    try {
      const reloader = new DescriptionReloader(em, file);
      rmSync(file);
      symlinkSync("/dev/zero", file);
      const r = await reloader.reload();
      expect(r.ok).toBe(false);
      expect(r.lines).toEqual([
        `${file}: cannot reload: it is a character device, not a regular file (make it a file again; the emulation ` +
          "goes on with the description it had)",
      ]);
    } finally {
      em.stop();
    }
  });
});
