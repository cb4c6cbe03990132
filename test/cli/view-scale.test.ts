// `strata view` at sizes that once broke it: a run whose one capture is asked for more records
// than a call takes arguments.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { PcapWriter } from "../../src/pcap/pcap-writer.js";
import { pageDataOf } from "../view/page-helpers.js";

const root = new URL("../..", import.meta.url).pathname;
const LOOP = join(root, "test/fixtures/analysis/loop.yaml");

async function strata(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = memoryIo();
  const code = await main(argv, io);
  return { code, stdout: io.stdout.text, stderr: io.stderr.text };
}

let tmp = "";
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), "strata-view-scale-"));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("strata view --run: a capture asked for more records than a call takes arguments", () => {
  // Frames for lan.h3 go round s1 ⇄ s2 until the hop limit: each of 200 crosses lan.s1.9-s2.9
  // about 1,020 times, so the page's bytes need ~204,000 records of that one capture
  // (62363b8: Math.max(...records), "Maximum call stack size exceeded", exit 70).
  const FRAMES = 200;
  it(`${FRAMES} looping frames, every one's bytes kept`, async () => {
    const capture = join(tmp, "loop.pcap");
    const w = new PcapWriter(capture, { linkType: 1, snapLen: 65535 });
    const frame = new Uint8Array(60);
    frame.set([2, 0, 0, 0, 0, 3, 2, 0, 0, 0, 0, 1, 0x88, 0xb5]);
    for (let i = 0; i < FRAMES; i++) w.write(frame, 0, frame.length, frame.length, 1_700_000_000, i * 1000);
    w.close();
    const run = join(tmp, "loop-run");
    const replay = await strata(
      "run",
      LOOP,
      "--in",
      `lan:h1.1=${capture}`,
      "--out",
      run,
      "--trace",
      "--hop-limit",
      "1024",
    );
    expect(replay.code).toBe(0);
    const summary = JSON.parse(readFileSync(join(run, "summary.json"), "utf8")) as {
      links: Record<string, { packets: number }>;
    };
    expect(summary.links["lan.s1.9-s2.9"]?.packets).toBeGreaterThan(150_000);

    const page = join(tmp, "loop.html");
    const r = await strata("view", LOOP, "--run", run, "--out", page, "--bytes", `0-${FRAMES - 1}`);
    expect(r).toMatchObject({ code: 0, stderr: "" });
    const bytes = pageDataOf(readFileSync(page, "utf8")).run?.trace?.bytes;
    // The last frame's crossings are the capture's last records: all of them read.
    const last = bytes?.steps[String(FRAMES - 1)] ?? [];
    const crossed = last.filter((v) => v >= 0 && bytes?.views[v]?.what === "crossed lan.s1.9-s2.9");
    expect(crossed.length).toBeGreaterThan(1000);
  }, 180_000);
});
