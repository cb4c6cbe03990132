// The file writer's thread beside a replay's data plane (src/engine/file-writer.ts: the recordings' writes and
// CRC-32s), started from the first byte by its knob (src/tuning.ts): each run through it writes the files of the run
// without it, byte for byte.

import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { BUILDS } from "../../bench/dataplane.js";
import { l2ExactSpec, routerSpec, vxlanSpec } from "../../bench/descriptions.js";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { FileWriter } from "../../src/engine/file-writer.js";
import { PcapWriter } from "../../src/pcap/index.js";
import { Replay } from "../../src/run/replay.js";
import { TUNING_KNOBS } from "../../src/tuning.js";
import { outFiles } from "../helpers/outputs.js";

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
  readonly workers: number;
}

const MODES: Mode[] = [
  { name: "the file writer's thread, 1 data plane", writer: true, workers: 1 },
  { name: "the file writer's thread, 2 data planes", writer: true, workers: 2 },
];

const CASES = Object.keys(PIPELINES).flatMap((p) => MODES.map((m) => ({ pipeline: p as Pipeline, ...m })));

let dir = "";
let runs = 0;
/** Per pipeline: its description and capture, and the files of a one-thread run without the threads. */
const files = new Map<Pipeline, { spec: string; capture: string; alone: Map<string, Buffer> }>();
/** Replays prepared once, by pipeline and data planes (the knobs are read by each run). */
const prepared = new Map<string, Replay>();

/** Sets the knob: the thread from the first byte, or never. */
function threads(writer: boolean): void {
  process.env.STRATA_WRITER_THREAD_AFTER = writer ? "0" : "never";
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
    threads(false);
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
    threads(c.writer);
    const written = run(c.pipeline, c.workers);
    expect(writes.mock.calls.length > 0).toBe(c.writer && PIPELINES[c.pipeline].recorded);
    const alone = files.get(c.pipeline)?.alone ?? new Map<string, Buffer>();
    expect([...written.keys()].sort()).toEqual([...alone.keys()].sort());
    for (const [file, bytes] of alone) expect(written.get(file)?.equals(bytes), `${file}: the same bytes`).toBe(true);
  });

  it.each(["lots", "-1", "1e9", "1 MiB"])(
    "a knob that is not a size (%j): one line, exit code 2, no --out made",
    async (v) => {
      const f = files.get("l2-exact");
      if (f === undefined) throw new Error("no capture");
      process.env.STRATA_WRITER_THREAD_AFTER = v;
      const io = memoryIo();
      const out = join(dir, `run-${runs++}`);
      const code = await main(
        ["run", f.spec, "--in", `${PIPELINES["l2-exact"].endpoint}=${f.capture}`, "--out", out],
        io,
      );
      expect({ code, stderr: io.stderr.text }).toEqual({
        code: 2,
        stderr: `strata: STRATA_WRITER_THREAD_AFTER: "${v}" is not a size (a number of bytes, or never)\n`,
      });
      expect(existsSync(out)).toBe(false);
    },
  );
});
