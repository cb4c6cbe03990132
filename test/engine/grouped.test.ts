// The recording ring grouped by the file writer's thread (src/engine/recordings.ts RecordingFiles.takeRing,
// src/engine/file-writer-thread.ts): once the files have taken FileLimits.threadAfter bytes, a pause hands the ring
// whole to the thread, which groups each recording's records and writes them, while the data plane fills its other
// ring. Each case runs the same packets through an engine with a small recording ring (a pause every ~190 records)
// twice, the file writer never started and started from the first byte, and the two --out directories must hold the
// same files byte for byte (summary.json's CRC-32s too); the thread must have grouped rings where it may: not past the
// 128-open limit (the rings are grouped on the data plane's thread from the pause that would need more files open), not
// when the deliveries go to listeners too (the ring holds their tagged records).

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { BUILDS } from "../../bench/dataplane.js";
import { l2ExactSpec, vxlanSpec } from "../../bench/descriptions.js";
import { compile } from "../../src/control/compile.js";
import { parseSpec } from "../../src/description/load.js";
import { Engine } from "../../src/engine/engine.js";
import { fileWriter } from "../../src/engine/file-writer.js";
import { Outputs } from "../../src/engine/outputs.js";
import type { InputBatch } from "../../src/wasm/runner.js";
import { expectSameFiles, outFiles } from "../helpers/outputs.js";
import { batchOf } from "../pipeline/helpers/engine-run.js";

const dir = mkdtempSync(join(tmpdir(), "strata-grouped-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  delete process.env.STRATA_WRITER_THREAD_AFTER;
});

const FRAMES = 4096;
/** The recording ring asked for: the runner makes it the size of one record of the longest packet (~16.6 KiB). */
const RING = 16 << 10;

/** A 64-byte Ethernet frame to 02:00:<dst> (l2ExactSpec's row dst − 1 sends it out of link (dst − 1) % ports + 1),
 * `len` bytes long. */
function frame(dst: number, i: number, len = 64): Uint8Array {
  const f = new Uint8Array(len).fill(i & 0xff);
  f.set([0x02, 0, (dst >>> 24) & 0xff, (dst >>> 16) & 0xff, (dst >>> 8) & 0xff, dst & 0xff], 0);
  f.set([0x02, 0, 0, 0, 0xff, 0xf0], 6);
  f.set([0x08, 0x00, 0x45], 12);
  return f;
}

/** Batches of 256 frames, the i-th to dst(i), `len(i)` bytes long. */
function l2Frames(dst: (i: number) => number, len: (i: number) => number = () => 64): InputBatch[] {
  const batches: InputBatch[] = [];
  for (let first = 0; first < FRAMES; first += 256)
    batches.push(
      batchOf(
        Array.from({ length: 256 }, (_, k) => {
          const bytes = frame(dst(first + k), first + k, len(first + k));
          return { bytes, origLen: bytes.length, tsSec: 1_700_000_000, tsNsec: (first + k) * 1000, endpoint: 0 };
        }),
      ),
    );
  return batches;
}

/** A spread of dst over 1,024 rows, the same in every run. */
const spread = (i: number): number => ((i * 7919) % 1024) + 1;

interface Case {
  readonly name: string;
  readonly spec: () => string;
  readonly endpoint: string;
  readonly batches: () => InputBatch[];
  /** The deliveries to listeners too (tagged records in the ring). */
  readonly deliveries?: boolean;
  /** Whether the thread groups rings. */
  readonly grouped: boolean;
}

const CASES: Case[] = [
  {
    name: "l2-exact, 4 recorded links",
    spec: () => l2ExactSpec(),
    endpoint: "lan:feed",
    batches: () => l2Frames(spread),
    grouped: true,
  },
  {
    name: "l2-exact, 3 of its 4 links first used after the thread started",
    spec: () => l2ExactSpec(),
    endpoint: "lan:feed",
    batches: () => l2Frames((i) => (i < FRAMES / 2 ? 4 * (i % 256) + 1 : spread(i))),
    grouped: true,
  },
  {
    name: "200 recorded links, past the 128-open limit midway",
    spec: () => l2ExactSpec(1024, 200),
    endpoint: "lan:feed",
    batches: () => l2Frames((i) => (i < FRAMES / 2 ? 200 * (i % 5) + (i % 100) + 1 : spread(i))),
    grouped: true,
  },
  {
    name: "a frame of 40,000 bytes midway (memory grown, rings re-made)",
    spec: () => l2ExactSpec(),
    endpoint: "lan:feed",
    batches: () => l2Frames(spread, (i) => (i === 2500 ? 40_000 : 64)),
    grouped: true,
  },
  {
    name: "vxlan, the members' deliveries recorded",
    spec: () => vxlanSpec(),
    endpoint: "tenant:vm3",
    batches: () => BUILDS.vxlan().batches,
    grouped: true,
  },
  {
    name: "vxlan, the deliveries to listeners too (tagged): the ring grouped on the data plane's thread",
    spec: () => vxlanSpec(),
    endpoint: "tenant:vm3",
    batches: () => BUILDS.vxlan().batches,
    deliveries: true,
    grouped: false,
  },
];

let runs = 0;

/** Runs `c`'s packets to a fresh --out, the file writer started from the first byte or never; its files, and the rings
 * the thread grouped. */
function record(c: Case, batches: readonly InputBatch[], thread: boolean): { out: string; groups: number } {
  process.env.STRATA_WRITER_THREAD_AFTER = thread ? "0" : "never";
  const compiled = compile(parseSpec(c.spec(), "grouped.yaml"));
  const out = join(dir, `run-${runs++}`);
  const outputs = Outputs.open(out, compiled, { command: "run", inputs: [], force: false, trace: false });
  const engine = Engine.open({ compiled, endpoints: [c.endpoint], buffers: { recordingBytes: RING } });
  const groups = fileWriter().groups;
  try {
    engine.connect({ recordings: outputs.recordings, ...(c.deliveries === true ? { deliveries: true } : {}) });
    let first = 0;
    for (const b of batches) {
      engine.run(b, first);
      first += b.count;
    }
    outputs.finish(engine.stop());
  } finally {
    outputs.release();
  }
  return { out, groups: fileWriter().groups - groups };
}

describe("the recording ring grouped by the file writer's thread: the files of a run without it", () => {
  it.each(CASES)("$name", (c) => {
    const batches = c.batches();
    const alone = record(c, batches, false);
    const beside = record(c, batches, true);
    expect({ alone: alone.groups, grouped: beside.groups > 0 }).toEqual({ alone: 0, grouped: c.grouped });
    expect([...outFiles(alone.out).keys()].filter((f) => f.endsWith(".pcap")).length).toBeGreaterThan(0);
    expectSameFiles(beside.out, alone.out);
  });
});
