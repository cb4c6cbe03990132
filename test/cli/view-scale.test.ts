// `strata view` at sizes that once broke it: a hub of thousands of spokes drawn in a bounded
// heap (ELK was given a dummy node for every row each spoke's edge crossed, and ran out of
// heap), a run whose one capture is asked for more records than a call takes arguments, and
// what it says on a terminal while it works.

import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { PcapWriter } from "../../src/pcap/pcap-writer.js";
import { pageDataOf } from "../view/page-helpers.js";

const root = new URL("../..", import.meta.url).pathname;
const BIN = join(root, "dist/src/cli/main.js");
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

/** A hub and `spokes` hosts, each linked to it: the members and links strata view draws, no tables. */
function hub(spokes: number): string {
  const mac = (i: number): string =>
    `02:00:00:${[16, 8, 0].map((s) => ((i >> s) & 255).toString(16).padStart(2, "0")).join(":")}`;
  const members = Array.from({ length: spokes }, (_, i) => `      h${i + 1}: { name: "${mac(i + 1)}" }`);
  const links = Array.from(
    { length: spokes },
    (_, i) => `      - { from: h${i + 1}.1, to: hub.${i + 1}, mode: two-way }`,
  );
  return `networks:
  lan:
    header: ethernet
    members:
      hub: { name: "02:00:ff:ff:ff:fe", role: infra }
${members.join("\n")}
    links:
${links.join("\n")}
`;
}

describe("strata view of a large description, in a bounded heap", () => {
  // 62363b8 ran out of a heap of 128 MB at 2,000 spokes; it needed 1.7 GB for 4,000, and died at
  // 4.3 GB for 10,000. 4,000 are drawn now in 64 MB (20,000 in 192 MB: docs/cli.md, strata view).
  const cases = [{ spokes: 4000, heapMb: 128 }];
  it.each(cases)("a hub of $spokes spokes, node --max-old-space-size=$heapMb", ({ spokes, heapMb }) => {
    const spec = join(tmp, `hub-${spokes}.yaml`);
    writeFileSync(spec, hub(spokes));
    const [page, svg] = [join(tmp, `hub-${spokes}.html`), join(tmp, `hub-${spokes}.svg`)];
    const r = spawnSync(
      process.execPath,
      [`--max-old-space-size=${heapMb}`, BIN, "view", spec, "--out", page, "--svg", svg],
      { encoding: "utf8" },
    );
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`1 networks, ${spokes + 1} members, ${spokes} links`);
    for (const file of [page, svg]) {
      const text = readFileSync(file, "utf8");
      expect(text.match(/<g class="node member[^"]*" data-node=/g)).toHaveLength(spokes + 1);
      expect(text.match(/<g class="link [^"]*" data-link=/g)).toHaveLength(spokes);
    }
  });
});

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
  });
});

describe("strata view on a terminal: what it is doing, on stderr", () => {
  it("names each stage while stderr is a terminal (script(1) gives it one)", () => {
    const page = join(tmp, "hub-tty.html");
    const command = [process.execPath, BIN, "view", join(root, "examples/hub-and-spoke/network.yaml"), "--out", page]
      .map((a) => `'${a}'`)
      .join(" ");
    const r = spawnSync("script", ["-qec", command, "/dev/null"], { encoding: "utf8" });
    expect(r.status).toBe(0);
    // The first stage is drawn when the bar starts, the last when it stops (then cleared).
    expect(r.stdout).toMatch(/strata view: reading .*network\.yaml…/);
    expect(r.stdout).toMatch(/strata view: writing .*hub-tty\.html…/);
    expect(r.stdout).toMatch(/wrote .*hub-tty\.html \(.*\): 1 networks, 5 members, 4 links/);
  });
});
