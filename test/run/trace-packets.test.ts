// --trace-packets: its syntax (a usage error for anything else), and a replay
// whose trace holds exactly the packets named, each line as a full trace has
// it, with its index — on one thread and on workers.

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UsageError } from "../../src/errors.js";
import { replay, type ReplayOptions } from "../../src/run/replay.js";
import { readIndexed } from "../../src/engine/trace-file.js";
import { inRanges, PACKET_NUMBER_MAX, parsePacketRanges } from "../../src/run/trace-packets.js";
import { TRACE_LINE_MAX } from "../../src/engine/trace.js";

const root = new URL("../..", import.meta.url).pathname;

describe("parsePacketRanges", () => {
  it.each([
    { text: "7", ranges: [[7, 7]] },
    { text: "0-999", ranges: [[0, 999]] },
    {
      text: "5,17,100-200",
      ranges: [
        [5, 5],
        [17, 17],
        [100, 200],
      ],
    },
    { text: "1000000-", ranges: [[1000000, PACKET_NUMBER_MAX]] },
    {
      text: " 3 - 4 , 9 ",
      ranges: [
        [3, 4],
        [9, 9],
      ],
    },
    {
      text: "100-200,5,150-300",
      ranges: [
        [5, 5],
        [100, 300],
      ],
    }, // in any order, overlaps merged
    {
      text: "1,2,3,5",
      ranges: [
        [1, 3],
        [5, 5],
      ],
    }, // neighbours merged
    { text: "4-4", ranges: [[4, 4]] },
    { text: `${PACKET_NUMBER_MAX}`, ranges: [[PACKET_NUMBER_MAX, PACKET_NUMBER_MAX]] },
  ])("$text", ({ text, ranges }) => {
    expect(parsePacketRanges(text)).toEqual(ranges);
  });

  const syntax = "(write packet numbers as N, N-M or N-, joined by commas, e.g. 0-999,5000,10000-)";
  it.each([
    { text: "", message: `--trace-packets : an empty item ${syntax}` },
    { text: "1,,2", message: `--trace-packets 1,,2: an empty item ${syntax}` },
    { text: "1,", message: `--trace-packets 1,: an empty item ${syntax}` },
    { text: "5-3", message: "--trace-packets 5-3: 5-3 ends before it starts (write 3-5)" },
    { text: "a", message: `--trace-packets a: 'a' is not a packet number or range ${syntax}` },
    { text: "-5", message: `--trace-packets -5: '-5' is not a packet number or range ${syntax}` },
    { text: "1.5", message: `--trace-packets 1.5: '1.5' is not a packet number or range ${syntax}` },
    { text: "0x10", message: `--trace-packets 0x10: '0x10' is not a packet number or range ${syntax}` },
    { text: "1-2-3", message: `--trace-packets 1-2-3: '1-2-3' is not a packet number or range ${syntax}` },
    {
      text: "4294967296",
      message:
        "--trace-packets 4294967296: 4294967296 is past the last packet number, " +
        "4294967295 (packets are numbered in 32 bits)",
    },
    {
      text: "0-99999999999999999999",
      message:
        "--trace-packets 0-99999999999999999999: 99999999999999999999 is past " +
        "the last packet number, 4294967295 (packets are numbered in 32 bits)",
    },
  ])("'$text' is a usage error", ({ text, message }) => {
    expect(() => parsePacketRanges(text)).toThrow(new UsageError(message));
  });
});

describe("a replay with --trace-packets", () => {
  let scratch = "";
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), "strata-trace-packets-"));
  });
  afterAll(() => {
    rmSync(scratch, { recursive: true, force: true });
  });

  // gre: 100 packets in two captures; some packets are replicated, some dropped.
  const example = JSON.parse(readFileSync(join(root, "examples/gre/example.json"), "utf8")) as { inputs: string[] };
  const options: Omit<ReplayOptions, "out"> = {
    spec: join(root, "examples/gre/network.yaml"),
    inputs: example.inputs.map((i) => ({
      endpoint: i.slice(0, i.indexOf("=")),
      file: join(root, i.slice(i.indexOf("=") + 1)),
    })),
  };
  let runs = 0;
  const run = (more: Partial<ReplayOptions>): string => {
    const out = join(scratch, `run-${runs++}`);
    replay({ ...options, out, ...more });
    return out;
  };
  const lines = (out: string): string[] =>
    readFileSync(join(out, "trace.jsonl"), "utf8")
      .split("\n")
      .filter((l) => l !== "");
  const packetOf = (line: string): number => (JSON.parse(line) as { packet: number }).packet;

  it.each([
    { ranges: "0", workers: 1 },
    { ranges: "0-9,50,97-", workers: 1 },
    { ranges: "3,40-60,99", workers: 2 },
    { ranges: "1000-", workers: 1 }, // past the last packet: an empty trace
  ])(
    "$ranges on $workers data planes: exactly those packets, each line as a full trace has it",
    ({ ranges, workers }) => {
      const full = lines(run({ trace: true, workers: 1 }));
      expect(full).toHaveLength(100);
      const picked = parsePacketRanges(ranges);
      const out = run({ tracePackets: picked, workers, chunkPackets: 7 });
      const want = full.filter((l) => inRanges(picked, packetOf(l)));
      expect(lines(out)).toEqual(want);
      // The index holds them, and no other.
      for (let p = 0; p < 100; p++) {
        const got = readIndexed(out, p, TRACE_LINE_MAX);
        if (inRanges(picked, p)) expect(got).toMatchObject({ found: true, text: want.find((l) => packetOf(l) === p) });
        else expect(got).toMatchObject({ found: false, lines: want.length });
      }
    },
  );
});
