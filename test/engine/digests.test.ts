// summary.json's `crc32`: the CRC-32 of every recording and of trace.jsonl, computed as strata
// writes them (one thread, worker threads, strata serve), and checked by the commands that read
// a run (strata trace, strata view --run): a trace edited or a capture swapped is one line and
// exit 2, never shown as the run's.

import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import type { Summary } from "../../src/engine/summary.js";
import { openCapture } from "../../src/pcap/index.js";
import { crc32Reference } from "./crc32-reference.js";
import { openServed } from "./served.js";

const root = new URL("../..", import.meta.url).pathname;
const HUB = join(root, "examples/hub-and-spoke/network.yaml");
const H1 = join(root, "pcaps/example-hub-h1.pcap");
const H3 = join(root, "pcaps/example-hub-h3.pcap");

let dir = "";
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "strata-digests-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function strata(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo();
  const code = await main(argv, io);
  return { code, stdout: io.stdout.text, stderr: io.stderr.text };
}

const crc32 = (file: string): string => crc32Reference(readFileSync(file));

/** Every file a run wrote but the summary and the marker, relative to `out`. */
const written = (out: string): string[] =>
  readdirSync(out, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".pcap") || f === "trace.jsonl")
    .sort();

const summaryOf = (out: string): Summary => JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as Summary;

const RUN = ["run", HUB, "--in", `lan:h1.1=${H1}`, "--in", `lan:h3.1=${H3}`, "--trace"];

describe("summary.json holds the CRC-32 of every recording and of the trace, as written", () => {
  it.each([
    { name: "strata run, one thread", write: (out: string) => strata(...RUN, "--out", out, "--workers", "1") },
    { name: "strata run --workers 2", write: (out: string) => strata(...RUN, "--out", out, "--workers", "2") },
    {
      name: "strata serve --out (the engine as serve runs it)",
      write: async (out: string) => {
        const { em, stop } = openServed({ spec: HUB, endpoints: ["lan:h1.1"], out, trace: true, flushMs: 0 });
        const r = openCapture(H1);
        for (const b of r.batches())
          for (let i = 0; i < b.count; i++) {
            const at = b.offset[i] ?? 0;
            em.submit(0, b.data.slice(at, at + (b.capLen[i] ?? 0)));
            em.flush();
          }
        r.close();
        stop();
        return { code: 0, stdout: "", stderr: "" };
      },
    },
  ])("$name", async ({ write }) => {
    const out = join(dir, "out");
    expect((await write(out)).code).toBe(0);
    const digests = summaryOf(out).crc32 ?? {};
    expect(Object.keys(digests).sort()).toEqual(written(out));
    expect(written(out)).toContain("trace.jsonl");
    for (const f of written(out)) expect(digests[f], f).toBe(crc32(join(out, f)));
  });

  it("worker threads record the digests one thread does (the files are the same, byte for byte)", async () => {
    const one = join(dir, "one");
    const two = join(dir, "two");
    expect((await strata(...RUN, "--out", one, "--workers", "1")).code).toBe(0);
    expect((await strata(...RUN, "--out", two, "--workers", "2")).code).toBe(0);
    expect(summaryOf(two).crc32).toEqual(summaryOf(one).crc32);
  });
});

describe("strata trace and strata view --run refuse a file that is not the one the run wrote", () => {
  const LINK = "links/lan.h1.1-hub.1.pcap";
  /** Changes one byte in the middle of `file`, its length kept. */
  const flipByte = (file: string): void => {
    const b = readFileSync(file);
    const at = Math.floor(b.length / 2);
    b[at] = (b[at] ?? 0) ^ 0x20;
    writeFileSync(file, b);
  };
  const readers = [
    { name: "strata trace", argv: (out: string) => ["trace", out] },
    { name: "strata trace --packet 1", argv: (out: string) => ["trace", out, "--packet", "1"] },
    { name: "strata view --run", argv: (out: string) => ["view", HUB, "--run", out, "--out", join(dir, "page.html")] },
  ];
  const spoils = [
    { name: "nothing changed", spoil: () => undefined, file: undefined },
    {
      name: "a byte of the trace changed",
      spoil: (out: string) => flipByte(join(out, "trace.jsonl")),
      file: "trace.jsonl",
    },
    {
      name: "the trace swapped for another run's",
      spoil: (out: string, other: string) => {
        copyFileSync(join(other, "trace.jsonl"), join(out, "trace.jsonl"));
        copyFileSync(join(other, "trace.idx"), join(out, "trace.idx"));
      },
      file: "trace.jsonl",
    },
    {
      name: "a capture swapped for another run's of the same link",
      spoil: (out: string, other: string) => copyFileSync(join(other, LINK), join(out, LINK)),
      file: LINK,
      only: "strata view --run",
    },
  ];
  const table = spoils.flatMap((s) =>
    readers
      .filter((r) => s.only === undefined || s.only === r.name)
      .map((r) => ({ ...s, reader: r, label: `${r.name}: ${s.name}` })),
  );
  it.each(table)("$label", async ({ spoil, file, reader }) => {
    const out = join(dir, "out");
    const other = join(dir, "other");
    expect((await strata(...RUN, "--out", out)).code).toBe(0);
    // Another run of the same description: the same files, other packets.
    expect((await strata("run", HUB, "--in", `lan:h1.1=${H3}`, "--out", other, "--trace")).code).toBe(0);
    spoil(out, other);
    const r = await strata(...reader.argv(out));
    if (file === undefined) {
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      return;
    }
    expect(r.stderr).toBe(
      `strata: ${join(out, file)}: not the file the run wrote: its CRC-32 is not the one summary.json records ` +
        "(the file was cut, edited or replaced after the run; replay again)\n",
    );
    expect(r.stdout).toBe("");
    expect(r.code).toBe(2);
  });
});
