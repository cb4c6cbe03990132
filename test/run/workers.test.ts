// Replay across worker threads writes what a one-thread replay writes: every
// capture file, trace.jsonl and the marker byte for byte, summary.json apart
// from its timing — on every example, on the real captures, on a damaged
// input; and --workers takes only a whole number in range.
// The threads run the built worker (dist/src/run/worker.js): npm test builds first.

import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../..//src/cli/main.js";
import { replay, type ReplayOptions, type ReplayResult } from "../../src/run/replay.js";
import { BYTES_PER_PLANE, defaultWorkers, replayWorkers } from "../../src/run/workers.js";
import { concat, payload, pcapFile, type PcapRecordSpec } from "../pcap/builders.js";
import { REPLAY_EXAMPLES } from "../helpers/examples.js";
import { outFiles as outputs } from "../helpers/outputs.js";

const root = new URL("../..", import.meta.url).pathname;
const REAL = join(root, "test/fixtures/pcaps-real");
const HUB = join(root, "examples/hub-and-spoke/network.yaml");

let scratch = "";
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "strata-workers-"));
});
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

/** Where two files first differ (-1: nowhere): toEqual on megabytes takes minutes. */
function firstDifference(a: string | Buffer | undefined, b: string | Buffer): number {
  if (a === undefined) return 0;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  if (x.equals(y)) return -1;
  let i = 0;
  while (i < x.length && i < y.length && x[i] === y[i]) i++;
  return i;
}

let runs = 0;
function run(options: Omit<ReplayOptions, "out">, workers: number): { out: string; result: ReplayResult } {
  const out = join(scratch, `run-${runs++}`);
  return { out, result: replay({ ...options, out, workers }) };
}

/**
 * Runs with 1 and with each of `counts` workers (chunks of `chunkPackets`, small so
 * that a few packets cross every data plane); every output the same. Returns the
 * packets each data plane ran.
 */
function expectSameOutputs(
  options: Omit<ReplayOptions, "out">,
  counts: readonly number[],
  chunkPackets = 3,
): number[][] {
  const one = run(options, 1);
  expect(one.result.workers).toEqual([]);
  const expected = outputs(one.out);
  expect(expected.has("summary.json")).toBe(true);
  return counts.map((n) => {
    const many = run({ ...options, chunkPackets }, n);
    const got = outputs(many.out);
    expect([...got.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [file, bytes] of expected)
      expect(firstDifference(got.get(file), bytes), `${file} with ${n} workers: first byte that differs`).toBe(-1);
    expect(many.result.errors.map((e) => e.message)).toEqual(one.result.errors.map((e) => e.message));
    expect(many.result.workers).toHaveLength(n);
    expect(many.result.workers.reduce((a, b) => a + b, 0)).toBe(one.result.summary.packets.injected);
    return [...many.result.workers];
  });
}

const examples = REPLAY_EXAMPLES;

describe("replay across worker threads", () => {
  const split: number[][] = [];

  // 3 workers on the examples with the most packets and flows; 2 on every one.
  const THREE = new Set(["gre", "vxlan", "bridged-lans"]);

  it.each(examples)("example %s: more workers write what 1 writes, trace included", (name) => {
    const dir = join(root, "examples", name);
    const example = JSON.parse(readFileSync(join(dir, "example.json"), "utf8")) as { inputs: string[] };
    const inputs = example.inputs.map((i) => {
      const eq = i.indexOf("=");
      return { endpoint: i.slice(0, eq), file: join(root, i.slice(eq + 1)) };
    });
    split.push(
      ...expectSameOutputs({ spec: join(dir, "network.yaml"), inputs, trace: true }, THREE.has(name) ? [2, 3] : [2]),
    );
  });

  it("the examples' packets were split: every worker thread ran some", () => {
    // Per example a thread may get nothing (a few packets); over all of them each gets some.
    // Data plane 0 is the main thread's, which takes one chunk in 2 per thread, and one.
    for (const n of [2, 3]) {
      const totals = split
        .filter((s) => s.length === n)
        .reduce((a, s) => a.map((v, k) => v + (s[k] ?? 0)), Array<number>(n).fill(0));
      expect(
        totals.every((t) => t > 0),
        `${n} workers: ${totals.join(", ")}`,
      ).toBe(true);
    }
  });

  it("the real captures, merged into the hub example, run the same on 1 and 2 workers", () => {
    const files = readdirSync(REAL).filter((f) => /\.pcapn?g?$/.test(f) && !f.includes("damaged"));
    expect(files.length).toBeGreaterThanOrEqual(10);
    // Four inputs per spoke, merged by timestamp; a capture the LAN cannot take ends with an error, the same either
    // way.
    const inputs = files.map((f, k) => ({ endpoint: `lan:h${(k % 4) + 1}.1`, file: join(REAL, f) }));
    const [two] = expectSameOutputs({ spec: HUB, inputs, trace: true }, [2], 50);
    expect(two?.[0]).toBeGreaterThan(0);
    expect(two?.[1]).toBeGreaterThan(0);
  });

  it("many chunks: 30,000 packets from two inputs, broadcasts copied, jumbo frames, on 1 and 2 workers", () => {
    // Past the chunk size (1,000 packets here) more times than there are slots (4), so slots are reused and the
    // shared record buffers grow: 300 jumbo frames, broadcast, make one chunk's records far larger than the rest.
    const dst = (i: number): number[] =>
      i % 7 === 0 ? [0xff, 0xff, 0xff, 0xff, 0xff, 0xff] : [2, 0, 0, 0, 0, 1 + (i % 4)];
    const frames = (k: number, n: number): PcapRecordSpec[] =>
      Array.from({ length: n }, (_, i) => {
        const len = i >= 5000 && i < 5300 ? 9000 : 46 + ((i * 37 + k) % 200);
        const head = Uint8Array.of(...dst(i), 2, 0, 0, k, (i >> 8) & 0x3f, i & 0xff, 0x08, 0x00);
        return {
          sec: 1_700_000_000 + Math.floor(i / 3),
          frac: (i % 3) * 1000 + k,
          data: concat(head, payload(len, i)),
        };
      });
    const file = (k: number, n: number): string => {
      const path = join(scratch, `frames-${k}.pcap`);
      writeFileSync(path, pcapFile({}, frames(k, n)));
      return path;
    };
    const inputs = [
      { endpoint: "lan:h1.1", file: file(1, 20_000) },
      { endpoint: "lan:h2.1", file: file(2, 10_000) },
    ];
    const [two] = expectSameOutputs({ spec: HUB, inputs }, [2], 1000);
    // The worker thread runs chunk 0, the main thread's data plane 1; after those, whichever reaches a chunk first.
    expect(two?.every((ran) => ran >= 1000 && ran % 1000 === 0)).toBe(true);
  });

  it("one input, passed over where a data plane does not run it, to its damage: same outputs, same error", () => {
    // A data plane reads past the others' chunks without reading the packets in (PcapReader.skip): the count, and where
    // the damage is found, must be what reading them says. The last record is cut short; the one before says caplen 0.
    const frames: PcapRecordSpec[] = Array.from({ length: 5_000 }, (_, i) => ({
      sec: 1_700_000_000 + i,
      frac: 0,
      data:
        i === 4_000
          ? new Uint8Array(0)
          : concat(
              Uint8Array.of(2, 0, 0, 0, 0, 1 + (i % 4), 2, 0, 0, 9, (i >> 8) & 0x3f, i & 0xff, 0x08, 0x00),
              payload(50, i),
            ),
    }));
    const whole = pcapFile({}, frames);
    const path = join(scratch, "cut.pcap");
    writeFileSync(path, whole.subarray(0, whole.length - 20));
    const inputs = [{ endpoint: "lan:h1.1", file: path }];
    const [two] = expectSameOutputs({ spec: HUB, inputs, trace: true }, [2], 700);
    expect(two?.reduce((a, b) => a + b, 0)).toBe(4_999);
    const { result } = run({ spec: HUB, inputs, chunkPackets: 700 }, 2);
    expect(result.errors.map((e) => e.message)).toEqual([
      expect.stringMatching(/cut\.pcap: byte \d+: record says caplen 64 but only 44 bytes remain/),
    ]);
  });

  it("a damaged input ends at its damage with workers as without: same outputs, same error", () => {
    const inputs = [
      { endpoint: "lan:h1.1", file: join(REAL, "pcapfix_test_damaged.pcap") },
      { endpoint: "lan:h3.1", file: join(REAL, "various_gre.pcap") },
      { endpoint: "lan:h2.1", file: join(REAL, "pptp.pcap") },
    ];
    expectSameOutputs({ spec: HUB, inputs }, [2]);
    const { out, result } = run({ spec: HUB, inputs }, 2);
    expect(result.errors.map((e) => e.message)).toEqual([
      expect.stringMatching(
        /pcapfix_test_damaged\.pcap: byte 114: record says caplen 16896 but only 8756 bytes remain/,
      ),
    ]);
    expect(result.summary.inputs.map((i) => i.packets)).toEqual([1, 100, 23]);
    expect(JSON.parse(readFileSync(join(out, "summary.json"), "utf8"))).toHaveProperty("error");
  });

  it("reports progress, and trace --packet reads a packet back", async () => {
    const calls: number[][] = [];
    const inputs = [{ endpoint: "lan:h1.1", file: join(REAL, "various_gre.pcap") }];
    const out = join(scratch, "progress");
    const result = replay({
      spec: HUB,
      inputs,
      out,
      trace: true,
      workers: 2,
      progress: (done, total, packets) => calls.push([done, total, packets]),
    });
    expect(calls.length).toBeGreaterThan(0);
    const size = readFileSync(inputs[0]?.file ?? "").length;
    expect(calls.at(-1)).toEqual([size, size, result.summary.packets.injected]);
    const io = memoryIo();
    expect(await main(["trace", out, "--packet", "57"], io)).toBe(0);
    expect(io.stdout.text).toMatch(/packet 57\b/);
  });

  it("the default is one data plane per core, and one per 64 MiB of captures at most", () => {
    expect(defaultWorkers(0, 2)).toBe(1);
    expect(defaultWorkers(BYTES_PER_PLANE - 1, 2)).toBe(1);
    expect(defaultWorkers(2 * BYTES_PER_PLANE, 2)).toBe(2);
    expect(defaultWorkers(Number.MAX_SAFE_INTEGER, 2)).toBe(2);
    expect(defaultWorkers(3 * BYTES_PER_PLANE, 8)).toBe(3);
    expect(defaultWorkers(Number.MAX_SAFE_INTEGER, 1)).toBe(1);
    expect(defaultWorkers(Number.MAX_SAFE_INTEGER, 1000)).toBe(64);
  });
});

describe("inputs that can be read only once (pipes, /dev/stdin) run on one thread, saying so", () => {
  const big = 3 * BYTES_PER_PLANE;
  it.each([
    {
      name: "--workers 2, a pipe",
      asked: 2,
      inputs: { totalBytes: 100, readOnce: ["/dev/stdin"] },
      workers: 1,
      note: /^--workers 2, but \/dev\/stdin is not a regular file .* so the replay runs on one thread$/,
    },
    {
      name: "the default for large captures, and a pipe",
      asked: undefined,
      inputs: { totalBytes: big, readOnce: ["/dev/fd/63"] },
      workers: 1,
      note: /^2 data planes were due for 192 MiB of captures, but \/dev\/fd\/63 is not a regular file/,
    },
    {
      name: "--workers 2, regular files",
      asked: 2,
      inputs: { totalBytes: 100, readOnce: [] },
      workers: 2,
      note: undefined,
    },
    {
      name: "--workers 1, a pipe: nothing to say",
      asked: 1,
      inputs: { totalBytes: 100, readOnce: ["/dev/stdin"] },
      workers: 1,
      note: undefined,
    },
    {
      name: "the default for small captures, a pipe: nothing to say",
      asked: undefined,
      inputs: { totalBytes: 100, readOnce: ["/dev/stdin"] },
      workers: 1,
      note: undefined,
    },
  ])("$name", ({ asked, inputs, workers, note }) => {
    const r = replayWorkers(asked, inputs, false, 2);
    expect(r.workers).toBe(workers);
    if (note === undefined) expect(r.note).toBeUndefined();
    else expect(r.note).toMatch(note);
  });

  it(
    "strata run --workers 2 with its capture on stdin: exit 0, one warning, " + "the outputs of a run from the file",
    async () => {
      const file = join(root, "pcaps/example-hub-h1.pcap");
      const fromFile = join(scratch, "stdin-file");
      const fromPipe = join(scratch, "stdin-pipe");
      expect(await main(["run", HUB, "--in", `lan:h1.1=${file}`, "--out", fromFile], memoryIo())).toBe(0);
      // Through a shell's pipe: Node gives a child's stdin as a socket, which /dev/stdin cannot open.
      const command = `cat "$1" | "$2" "$3" run "$4" --in lan:h1.1=/dev/stdin --out "$5" --workers 2`;
      const child = spawnSync(
        "sh",
        ["-c", command, "sh", file, process.execPath, join(root, "dist/src/cli/main.js"), HUB, fromPipe],
        { encoding: "utf8" },
      );
      expect(child.stderr).toMatch(
        new RegExp(
          [
            String.raw`^strata: warning: --workers 2, but \/dev\/stdin is not a regular file`,
            String.raw` \(a pipe or a device\) and every data plane reads each input itself:`,
            String.raw` it can be read only once, so the replay runs on one thread\n$`,
          ].join(""),
        ),
      );
      expect(child.status).toBe(0);
      const a = outputs(fromFile);
      const b = outputs(fromPipe);
      a.set("summary.json", Buffer.from(String(a.get("summary.json")).replace(file, "/dev/stdin")));
      expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
      for (const [k, v] of a) expect([k, firstDifference(b.get(k), v)]).toEqual([k, -1]);
    },
  );
});

describe("strata run --workers: bad values", () => {
  it.each([
    ["0", /^strata: --workers 0 is too small \(at least 1\)$/],
    ["-1", /^strata: --workers -1 is not a whole number \(give 1 to 64\)$/],
    ["1.5", /^strata: --workers 1\.5 is not a whole number \(give 1 to 64\)$/],
    ["abc", /^strata: --workers abc is not a whole number \(give 1 to 64\)$/],
    ["99999999999", /^strata: --workers 99999999999 is too large \(at most 64\)$/],
  ])("--workers %s: one line, exit 2, nothing written", async (value, message) => {
    const out = join(scratch, `bad-${value}`);
    const io = memoryIo();
    const code = await main(
      ["run", HUB, "--in", `lan:h1.1=${join(root, "pcaps/example-hub-h1.pcap")}`, "--out", out, "--workers", value],
      io,
    );
    expect(code).toBe(2);
    expect(io.stderr.text.trimEnd().split("\n")).toEqual([expect.stringMatching(message)]);
    expect(io.stdout.text).toBe("");
    expect(existsSync(out)).toBe(false);
  });
});
