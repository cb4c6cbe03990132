// A one-input replay of a regular classic pcap file reads it in blocks straight
// into the data plane's input area and parses the records in wasm
// (src/run/blocks.ts): no batch staged, one run call per block, and the same
// outputs, byte for byte, and the same errors, as reading it in batches. Read
// ahead by the reader thread into two places of the input area in turn, each
// block goes to the place the one before did not take, with the outputs,
// errors and run calls of the blocks read without the thread.

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ReadAhead } from "../../src/pcap/index.js";
import { ltField } from "../../src/pcap/pcap-layout.js";
import { Inputs } from "../../src/run/inputs.js";
import { replay, type ReplayResult } from "../../src/run/replay.js";
import { Runner } from "../../src/wasm/runner.js";
import { concat, payload, pcapFile, type PcapHeaderSpec, type PcapRecordSpec } from "../pcap/builders.js";

const root = new URL("../..", import.meta.url).pathname;
const HUB = join(root, "examples/hub-and-spoke/network.yaml");

let scratch = "";
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "strata-blocks-"));
});
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});
afterEach(() => {
  vi.restoreAllMocks();
  delete process.env.STRATA_READER_THREAD_AFTER;
});

/** Every file under `dir`, by path; summary.json without its timing. */
function outputs(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, e.name);
      if (e.isDirectory()) walk(path);
      else files.set(relative(dir, path), readFileSync(path).toString("base64"));
    }
  };
  walk(dir);
  const summary = files.get("summary.json");
  if (summary !== undefined)
    files.set(
      "summary.json",
      Buffer.from(summary, "base64")
        .toString()
        .replace(/"(elapsedSeconds|packetsPerSecond)": [\d.e+-]+/g, '"$1": 0'),
    );
  return files;
}

/** `n` frames to the hub's hosts (every 7th broadcast), of `len(i)` bytes. */
function frames(n: number, len: (i: number) => number, frac = (i: number) => (i % 1000) * 1000): PcapRecordSpec[] {
  return Array.from({ length: n }, (_, i) => {
    const dst = i % 7 === 0 ? [0xff, 0xff, 0xff, 0xff, 0xff, 0xff] : [2, 0, 0, 0, 0, 1 + (i % 4)];
    const head = Uint8Array.of(...dst, 2, 0, 0, 9, (i >> 8) & 0xff, i & 0xff, 0x08, 0x00);
    return { sec: 1_700_000_000 + Math.floor(i / 1000), frac: frac(i), data: concat(head, payload(len(i) - 14, i)) };
  });
}

let runs = 0;
/** A capture file of `bytes`. */
function capture(bytes: Uint8Array): string {
  const file = join(scratch, `in-${runs++}.pcap`);
  writeFileSync(file, bytes);
  return file;
}

/** A replay of `file` at lan:h1.1, counting the runner's calls; with `batches`, the blocks are refused. */
function counted(file: string, batches: boolean): { out: string; result: ReplayResult; stage: number; go: number } {
  const stage = vi.spyOn(Runner.prototype, "stage");
  const go = vi.spyOn(Runner.prototype, "go");
  if (batches) vi.spyOn(Inputs.prototype, "blocks").mockReturnValue(undefined);
  const out = join(scratch, `run-${runs++}`);
  const result = replay({ spec: HUB, inputs: [{ endpoint: "lan:h1.1", file }], out, workers: 1 });
  const counts = { stage: stage.mock.calls.length, go: go.mock.calls.length };
  vi.restoreAllMocks();
  return { out, result, ...counts };
}

interface Case {
  readonly name: string;
  readonly header: PcapHeaderSpec;
  readonly records: PcapRecordSpec[];
  /** Bytes cut off the end of the file. */
  readonly cut?: number;
  /** Run calls: one per block (1 MiB), and per run of a batch after the blocks stop. */
  readonly go: number;
  readonly packets: number;
  readonly error?: RegExp;
}

const CASES: Case[] = [
  {
    name: "10,000 64-byte frames: one block",
    header: { nano: true },
    records: frames(10_000, () => 64),
    go: 1,
    packets: 10_000,
  },
  {
    name: "2,000 1,500-byte frames, big-endian, µs, fractions of a whole second carried",
    header: { le: false },
    records: frames(
      2_000,
      () => 1500,
      (i) => (i % 3 === 0 ? 1_000_000 + i : i),
    ),
    // 691 records of 1,516 bytes to a block.
    go: 3,
    packets: 2_000,
  },
  {
    name: "frames longer than the packet buffers (20,000 bytes): they grow, once, between two runs",
    header: {},
    records: frames(300, (i) => (i % 50 === 49 ? 20_000 : 60 + (i % 200))),
    go: 2,
    packets: 300,
  },
  {
    name: "a record over the link type's limit: the blocks stop, the reader says so",
    header: {},
    records: frames(3_000, () => 64).map((r, i) => (i === 2_500 ? { ...r, capLen: 300_000 } : r)),
    go: 1,
    packets: 2_500,
    error: /byte 200024: record says caplen 300000/,
  },
  {
    name: "the last record cut short",
    header: {},
    records: frames(3_000, () => 64),
    cut: 20,
    go: 1,
    packets: 2_999,
    error: /record says caplen 64 but only 44 bytes remain/,
  },
];

describe("a replay reads a pcap file in blocks, parsed in wasm", () => {
  it.each(CASES)("$name: no batch staged, a run per block, the outputs of batches", (c) => {
    const whole = pcapFile(c.header, c.records);
    const file = capture(whole.subarray(0, whole.length - (c.cut ?? 0)));
    const blocks = counted(file, false);
    expect({ stage: blocks.stage, go: blocks.go }).toEqual({ stage: 0, go: c.go });
    expect(blocks.result.summary.packets.injected).toBe(c.packets);
    const batches = counted(file, true);
    expect(batches.go).toBeGreaterThanOrEqual(Math.ceil(c.packets / 256));
    expect(blocks.result.errors.map((e) => e.message)).toEqual(batches.result.errors.map((e) => e.message));
    expect(blocks.result.errors.map((e) => e.message)).toEqual(
      c.error === undefined ? [] : [expect.stringMatching(c.error)],
    );
    expect(outputs(blocks.out)).toEqual(outputs(batches.out));
  });

  it("with 2 data planes, each reads the blocks (none across two chunks): a one-thread replay's outputs", () => {
    const file = capture(
      pcapFile(
        {},
        frames(10_000, (i) => 60 + (i % 300)),
      ),
    );
    const one = counted(file, true);
    const stage = vi.spyOn(Runner.prototype, "stage");
    const out = join(scratch, `run-${runs++}`);
    const two = replay({ spec: HUB, inputs: [{ endpoint: "lan:h1.1", file }], out, workers: 2, chunkPackets: 1000 });
    expect(stage).not.toHaveBeenCalled();
    expect(two.workers.reduce((a, b) => a + b, 0)).toBe(10_000);
    expect(outputs(out)).toEqual(outputs(one.out));
  });

  it("a capture the network takes adapted (an FCS announced) is read in batches", () => {
    const bytes = pcapFile(
      { linkTypeField: ltField(1, 4) },
      frames(600, () => 68),
    );
    const { stage, go } = counted(capture(bytes), false);
    expect(stage).toBeGreaterThan(0);
    expect(go).toBe(stage);
  });
});

interface AheadCase {
  readonly name: string;
  readonly records: PcapRecordSpec[];
  readonly cut?: number;
  readonly packets: number;
  /** Blocks the thread reads ahead before the reading stops or falls back (the last: the end, 0 bytes). */
  readonly taken: number;
  readonly error?: RegExp;
}

const AHEAD: AheadCase[] = [
  {
    name: "20,000 frames of 60-359 bytes: five blocks, records cut across each block's end",
    records: frames(20_000, (i) => 60 + (i % 300)),
    packets: 20_000,
    taken: 5,
  },
  {
    name: "frames of 20,000 bytes from the second block on: memory grown while the thread reads ahead",
    records: frames(6_000, (i) => (i % 1500 === 1499 ? 20_000 : 60 + (i % 1000))),
    packets: 6_000,
    taken: 4,
  },
  {
    // Records of 1,016 bytes after the file's 24: the 954th starts 80,328 bytes before the first block's end.
    name: "a frame of 100,000 bytes cut by a block's end, more than the room before the next: read here from there",
    records: frames(3_000, (i) => (i === 953 ? 100_000 : 1000)),
    packets: 3_000,
    taken: 1,
  },
  {
    name: "a capture cut short mid-block",
    records: frames(20_000, (i) => 60 + (i % 300)),
    cut: 20,
    packets: 19_999,
    taken: 5,
    error: /record says caplen \d+ but only \d+ bytes remain/,
  },
  {
    name: "a record over the limit in the third block",
    records: frames(12_000, (i) => 60 + (i % 300)).map((r, i) => (i === 11_000 ? { ...r, capLen: 300_000 } : r)),
    packets: 11_000,
    taken: 3,
    error: /record says caplen 300000/,
  },
];

describe("a capture read ahead by a thread into two places of the input area in turn", () => {
  it.each(AHEAD)("$name: the outputs, errors and runs of the blocks read here", (c) => {
    const whole = pcapFile({}, c.records);
    const file = capture(whole.subarray(0, whole.length - (c.cut ?? 0)));
    process.env.STRATA_READER_THREAD_AFTER = "never";
    const here = counted(file, false);
    process.env.STRATA_READER_THREAD_AFTER = "0";
    const slots: number[] = [];
    const next = ReadAhead.prototype.next;
    vi.spyOn(ReadAhead.prototype, "next").mockImplementation(function (this: ReadAhead) {
      const n = next.call(this);
      slots.push(this.slot);
      return n;
    });
    const ahead = counted(file, false);
    // Each block into the place the block before did not take: the thread reads one while wasm runs the other.
    expect(slots).toEqual(Array.from({ length: c.taken }, (_, k) => k % 2));
    expect({ stage: ahead.stage, go: ahead.go }).toEqual({ stage: 0, go: here.go });
    expect(ahead.result.summary.packets.injected).toBe(c.packets);
    expect(ahead.result.errors.map((e) => e.message)).toEqual(here.result.errors.map((e) => e.message));
    expect(ahead.result.errors.map((e) => e.message)).toEqual(
      c.error === undefined ? [] : [expect.stringMatching(c.error)],
    );
    expect(outputs(ahead.out)).toEqual(outputs(here.out));
  });
});
