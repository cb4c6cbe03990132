// The threads beside a replay's data plane, started from the first byte by their knobs (src/tuning.ts): the file
// writer's (src/engine/file-writer.ts: the recordings' writes and CRC-32s) and the capture reader's
// (src/pcap/read-ahead.ts: the capture read ahead of the blocks, src/run/blocks.ts). Each run through them writes the
// files of the run without them, byte for byte; a damaged capture read ahead ends the run as it does without: the
// same line, the same exit code, the same files. The file writer writes one data plane's grouped records where they
// lie in its (shared) linear memory, also in a run whose memory grows midway (a longer frame: buffers and rings
// re-made).

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { BUILDS } from "../../bench/dataplane.js";
import { l2ExactSpec, routerSpec, vxlanSpec } from "../../bench/descriptions.js";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { FileWriter, fileWriter } from "../../src/engine/file-writer.js";
import { PcapWriter, ReadAhead } from "../../src/pcap/index.js";
import { Replay } from "../../src/run/replay.js";
import { TUNING_KNOBS } from "../../src/tuning.js";
import { expectSameFiles, outFiles } from "../helpers/outputs.js";

/** The bench's scenarios (bench/replay.ts), 4,096 frames each; router-layered's links are not recorded (no files). */
const PIPELINES = {
  "l2-exact": { spec: l2ExactSpec, endpoint: "lan:feed", recorded: true },
  "router-layered": { spec: routerSpec, endpoint: "lanA:feed", recorded: false },
  vxlan: { spec: vxlanSpec, endpoint: "tenant:vm3", recorded: true },
} as const;
type Pipeline = keyof typeof PIPELINES;

interface Mode {
  readonly name: string;
  readonly writer: boolean;
  readonly reader: boolean;
  readonly workers: number;
}

const MODES: Mode[] = [
  { name: "the file writer's thread, 1 data plane", writer: true, reader: false, workers: 1 },
  { name: "the file writer's thread, 2 data planes", writer: true, reader: false, workers: 2 },
  { name: "the reader's thread", writer: false, reader: true, workers: 1 },
];

const CASES = Object.keys(PIPELINES).flatMap((p) => MODES.map((m) => ({ pipeline: p as Pipeline, ...m })));

let dir = "";
let runs = 0;
/** Per pipeline: its description and capture, and the files of a one-thread run without the threads. */
const files = new Map<Pipeline, { spec: string; capture: string; alone: Map<string, Buffer> }>();
/** Replays prepared once, by pipeline and data planes (the knobs are read by each run). */
const prepared = new Map<string, Replay>();

/** Sets the knobs: the threads asked for from the first byte, the others never. */
function threads(writer: boolean, reader: boolean): void {
  process.env.STRATA_WRITER_THREAD_AFTER = writer ? "0" : "never";
  process.env.STRATA_READER_THREAD_AFTER = reader ? "0" : "never";
}

/** The files a replay of `p`'s capture on `workers` data planes writes. */
function run(p: Pipeline, workers: number): Map<string, Buffer> {
  const f = files.get(p);
  if (f === undefined) throw new Error(`no capture for ${p}`);
  const key = `${p}-${workers}`;
  const out = join(dir, key);
  let r = prepared.get(key);
  if (r === undefined) {
    const inputs = [{ endpoint: PIPELINES[p].endpoint, file: f.capture }];
    r = Replay.prepare({ spec: f.spec, inputs, out, workers, chunkPackets: 1000 });
    prepared.set(key, r);
  }
  expect(r.run().summary.packets.injected).toBe(4096);
  const written = outFiles(out);
  rmSync(out, { recursive: true, force: true });
  return written;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "strata-threads-"));
  for (const [name, { spec }] of Object.entries(PIPELINES) as [Pipeline, (typeof PIPELINES)[Pipeline]][]) {
    const capture = join(dir, `${name}.pcap`);
    const w = new PcapWriter(capture, { linkType: 1, snapLen: 65535 });
    BUILDS[name]().batches.forEach((b, k) => {
      for (let i = 0; i < b.count; i++)
        w.write(b.data, b.offset[i] ?? 0, b.capLen[i] ?? 0, b.origLen[i] ?? 0, 1_700_000_000 + k, i * 1000);
    });
    w.close();
    writeFileSync(join(dir, `${name}.yaml`), spec());
    files.set(name, { spec: join(dir, `${name}.yaml`), capture, alone: new Map() });
    threads(false, false);
    files.set(name, { spec: join(dir, `${name}.yaml`), capture, alone: run(name, 1) });
  }
});
afterEach(() => {
  vi.restoreAllMocks();
  for (const knob of TUNING_KNOBS) delete process.env[knob];
});
afterAll(() => {
  for (const r of prepared.values()) r.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a replay through the threads beside its data plane writes the files of one without them", () => {
  it.each(CASES)("$pipeline, $name", (c) => {
    const writes = vi.spyOn(FileWriter.prototype, "write");
    const reads = vi.spyOn(ReadAhead.prototype, "next");
    threads(c.writer, c.reader);
    const lent = fileWriter().lentWrites;
    const written = run(c.pipeline, c.workers);
    expect({
      writes: writes.mock.calls.length > 0,
      reads: reads.mock.calls.length > 0,
      lent: fileWriter().lentWrites > lent,
    }).toEqual({
      writes: c.writer && PIPELINES[c.pipeline].recorded,
      reads: c.reader,
      lent: c.writer && PIPELINES[c.pipeline].recorded && c.workers === 1,
    });
    const alone = files.get(c.pipeline)?.alone ?? new Map<string, Buffer>();
    expect([...written.keys()].sort()).toEqual([...alone.keys()].sort());
    for (const [file, bytes] of alone) expect(written.get(file)?.equals(bytes), `${file}: the same bytes`).toBe(true);
  });

  it("a frame of 40,000 bytes midway (memory grown, buffers and rings re-made): the files of a run without", () => {
    const f = files.get("l2-exact");
    if (f === undefined) throw new Error("no capture");
    const capture = join(dir, "long.pcap");
    const w = new PcapWriter(capture, { linkType: 1, snapLen: 65535 });
    const long = new Uint8Array(40_000);
    BUILDS["l2-exact"]().batches.forEach((b, k) => {
      for (let i = 0; i < b.count; i++) {
        const at = b.offset[i] ?? 0;
        const len = b.capLen[i] ?? 0;
        if (k === 2 && i === 100) long.set(b.data.subarray(at, at + len));
        if (k === 2 && i === 100) w.write(long, 0, long.length, long.length, 1_700_000_000 + k, i * 1000);
        else w.write(b.data, at, len, b.origLen[i] ?? 0, 1_700_000_000 + k, i * 1000);
      }
    });
    w.close();
    const outs = [false, true].map((writer) => {
      threads(writer, false);
      const out = join(dir, `run-${runs++}`);
      const r = Replay.prepare({
        spec: f.spec,
        inputs: [{ endpoint: PIPELINES["l2-exact"].endpoint, file: capture }],
        out,
      });
      const lent = fileWriter().lentWrites;
      try {
        expect(r.run().summary.packets.injected).toBe(4096);
      } finally {
        r.close();
      }
      return { out, lent: fileWriter().lentWrites - lent };
    });
    expect(outs[1]?.lent).toBeGreaterThan(0);
    expect([...outFiles(outs[0]?.out ?? "").keys()].length).toBeGreaterThan(1);
    expectSameFiles(outs[1]?.out ?? "", outs[0]?.out ?? "");
  });

  it("a capture cut short, read ahead: the line, exit code and files of the run without the thread", async () => {
    const f = files.get("l2-exact");
    if (f === undefined) throw new Error("no capture");
    const whole = readFileSync(f.capture);
    const cut = join(dir, "cut.pcap");
    writeFileSync(cut, whole.subarray(0, whole.length - 20));
    const ends = [];
    for (const reader of [false, true]) {
      threads(false, reader);
      const reads = vi.spyOn(ReadAhead.prototype, "next");
      const io = memoryIo();
      const out = join(dir, `run-${runs++}`);
      const code = await main(["run", f.spec, "--in", `${PIPELINES["l2-exact"].endpoint}=${cut}`, "--out", out], io);
      expect(reads.mock.calls.length > 0).toBe(reader);
      ends.push({ code, stderr: io.stderr.text, out });
    }
    const [alone, ahead] = ends;
    expect(ahead?.stderr).toMatch(/record says caplen \d+ but only \d+ bytes remain/);
    expect({ code: ahead?.code, stderr: ahead?.stderr }).toEqual({ code: alone?.code, stderr: alone?.stderr });
    expectSameFiles(ahead?.out ?? "", alone?.out ?? "");
  });

  it.each([
    { knob: "STRATA_WRITER_THREAD_AFTER", value: "lots" },
    { knob: "STRATA_WRITER_THREAD_AFTER", value: "1e9" },
    { knob: "STRATA_READER_THREAD_AFTER", value: "-1" },
    { knob: "STRATA_READER_THREAD_AFTER", value: "1 MiB" },
  ] as const)("$knob=$value, not a size: one line, exit code 2, no --out made", async ({ knob, value }) => {
    const f = files.get("l2-exact");
    if (f === undefined) throw new Error("no capture");
    process.env[knob] = value;
    const io = memoryIo();
    const out = join(dir, `run-${runs++}`);
    const code = await main(
      ["run", f.spec, "--in", `${PIPELINES["l2-exact"].endpoint}=${f.capture}`, "--out", out],
      io,
    );
    expect({ code, stderr: io.stderr.text }).toEqual({
      code: 2,
      stderr: `strata: ${knob}: "${value}" is not a size (a number of bytes, or never)\n`,
    });
    expect(existsSync(out)).toBe(false);
  });
});
