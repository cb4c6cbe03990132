// What the main thread of a replay across worker threads does with a worker's chunk: it writes the
// records, but works out nothing per byte of them — their CRC-32 (summary.json's) comes with the
// chunk, worked out in the worker, and is combined (src/engine/checksum.ts). Counted: the bytes the
// main thread's running CRCs read are the files' headers and the chunks of its own data plane.

import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { RunningCrc } from "../../src/engine/checksum.js";
import { FILE_HEADER_LEN } from "../../src/pcap/pcap-layout.js";
import { replay } from "../../src/run/replay.js";
import { concat, payload, pcapFile, type PcapRecordSpec } from "../pcap/builders.js";

const root = new URL("../..", import.meta.url).pathname;
const HUB = join(root, "examples/hub-and-spoke/network.yaml");

let scratch = "";
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "strata-workers-main-"));
});
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});
afterEach(() => {
  vi.restoreAllMocks();
});

const frames = (n: number): PcapRecordSpec[] =>
  Array.from({ length: n }, (_, i) => ({
    sec: 1_700_000_000 + i,
    data: concat(
      Uint8Array.of(2, 0, 0, 0, 0, 1 + (i % 4), 2, 0, 0, 9, (i >> 8) & 0xff, i & 0xff, 8, 0),
      payload(60, i),
    ),
  }));

describe("the main thread works out no CRC-32 over a worker's records", () => {
  it.each([
    { workers: 2, packets: 6_000, chunkPackets: 500 },
    { workers: 3, packets: 9_000, chunkPackets: 700 },
  ])("$workers data planes, $packets packets in chunks of $chunkPackets", ({ workers, packets, chunkPackets }) => {
    const file = join(scratch, `in-${workers}.pcap`);
    writeFileSync(file, pcapFile({}, frames(packets)));
    const update = vi.spyOn(RunningCrc.prototype, "update");
    const out = join(scratch, `run-${workers}`);
    const result = replay({ spec: HUB, inputs: [{ endpoint: "lan:h1.1", file }], out, workers, chunkPackets });
    const files = Object.keys(result.summary.crc32 ?? {}).filter((f) => f.endsWith(".pcap"));
    const recorded = files.reduce((n, f) => n + statSync(join(out, f)).size, 0);
    const read = update.mock.calls.reduce((n, [bytes]) => n + bytes.length, 0);
    expect(files.length).toBeGreaterThan(0);
    expect(recorded).toBeGreaterThan(packets * 60);
    // The headers, and nothing of the records (the main thread's own chunks' CRCs are worked out as they are recorded).
    expect(read).toBe(files.length * FILE_HEADER_LEN);
  });
});
