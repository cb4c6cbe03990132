// trace.idx: every entry's offset is where a scan of trace.jsonl finds that
// packet's line, whichever way the lines were written (one at a time, or a
// chunk's at once as workers hand them over); `--packet N` reads one line
// through it, and an index that is not the trace's is not used.

import { crc32Reference } from "./crc32-reference.js";
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../..//src/cli/main.js";
import { replay } from "../../src/run/replay.js";
import { INDEX_ENTRY_LEN, INDEX_HEADER_LEN, readIndexed, TraceFile } from "../../src/engine/trace-file.js";
import { TRACE_LINE_MAX } from "../../src/engine/trace.js";
import { OutDir } from "../../src/out-dir.js";

const root = new URL("../..", import.meta.url).pathname;
const HUB = join(root, "examples/hub-and-spoke/network.yaml");
const H1 = join(root, "pcaps/example-hub-h1.pcap");
const H3 = join(root, "pcaps/example-hub-h3.pcap");

let dir = "";
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "strata-trace-file-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A trace line for `packet`. */
const text = (packet: number, endpoint = "lan:h1.1"): string =>
  `${JSON.stringify({ packet, endpoint, tsNs: "0", len: 42, steps: [] })}\n`;

/** The index's entries: [packet, offset]. */
function entries(): [number, number][] {
  const b = readFileSync(join(dir, "trace.idx"));
  const out: [number, number][] = [];
  for (let at = INDEX_HEADER_LEN; at < b.length; at += INDEX_ENTRY_LEN)
    out.push([Number(b.readBigUInt64LE(at)), Number(b.readBigUInt64LE(at + 8))]);
  return out;
}

/** What a scan of trace.jsonl finds: each line's packet and the byte it starts at. */
function scan(): [number, number][] {
  const b = readFileSync(join(dir, "trace.jsonl"));
  const out: [number, number][] = [];
  for (let at = 0; at < b.length;) {
    const end = b.indexOf(10, at);
    out.push([(JSON.parse(b.toString("utf8", at, end)) as { packet: number }).packet, at]);
    at = end + 1;
  }
  return out;
}

/** How a case writes its lines: one at a time (line) or chunks at once (append), as a replay on one thread or on
 * workers does. */
type Write = { packets: number[]; endpoint?: string } | { chunk: number[] };

describe("trace.idx against a scan of trace.jsonl", () => {
  const cases: { name: string; writes: Write[]; look: { packet: number; found: boolean }[] }[] = [
    {
      name: "every packet, one line at a time",
      writes: [{ packets: [0, 1, 2, 3, 4] }],
      look: [
        { packet: 0, found: true }, // the first
        { packet: 4, found: true }, // the last
        { packet: 2, found: true },
        { packet: 5, found: false },
      ],
    },
    {
      name: "only some packets (--trace-packets 5,17,100-102)",
      writes: [{ packets: [5, 17, 100, 101, 102] }],
      look: [
        { packet: 5, found: true },
        { packet: 102, found: true },
        { packet: 0, found: false }, // before the first
        { packet: 16, found: false }, // a packet with no line, between two
        { packet: 103, found: false }, // after the last
      ],
    },
    {
      name: "chunks as the workers hand them over, and lines",
      writes: [{ chunk: [0, 1, 2] }, { chunk: [] }, { packets: [3] }, { chunk: [4, 5] }],
      look: [
        { packet: 0, found: true },
        { packet: 3, found: true },
        { packet: 5, found: true },
      ],
    },
    {
      name: "names of several bytes a character",
      writes: [{ packets: [0, 1, 2], endpoint: "lan:é€😀" }],
      look: [{ packet: 2, found: true }],
    },
    { name: "no line at all", writes: [], look: [{ packet: 0, found: false }] },
  ];
  it.each(cases)("$name", ({ writes, look }) => {
    const claimed = OutDir.claim(dir, { command: "run", inputs: [], files: ["trace.jsonl", "trace.idx"] });
    const file = new TraceFile(claimed);
    for (const w of writes) {
      if ("chunk" in w) {
        const lines = w.chunk.map((p) => text(p));
        file.append(
          lines.join(""),
          w.chunk,
          lines.map((l) => Buffer.byteLength(l)),
        );
      } else {
        for (const p of w.packets) {
          const line = text(p, w.endpoint);
          file.line(p, line, Buffer.byteLength(line));
        }
      }
    }
    file.close();
    claimed.release();
    expect(file.digest()).toBe(crc32Reference(readFileSync(join(dir, "trace.jsonl"))));
    expect(entries()).toEqual(scan());
    const lines = scan();
    for (const { packet, found } of look) {
      const got = readIndexed(dir, packet, TRACE_LINE_MAX);
      if (found) {
        const k = lines.findIndex(([p]) => p === packet);
        expect(got).toEqual({
          found: true,
          text: readFileSync(join(dir, "trace.jsonl"), "utf8").split("\n")[k],
          line: k + 1,
        });
      } else {
        expect(got).toEqual({
          found: false,
          lines: lines.length,
          first: lines[0]?.[0] ?? 0,
          last: lines.at(-1)?.[0] ?? 0,
        });
      }
    }
  });
});

describe("an index that is not the trace's is not used: strata trace reads the trace through", () => {
  const swapFirstTwo = (t: string): string => {
    const [one, two, ...rest] = t.split("\n");
    return [two, one, ...rest].join("\n");
  };
  const cases: { name: string; spoil: () => void; stale: number[] }[] = [
    { name: "no index (a trace from an older strata)", spoil: () => rmSync(join(dir, "trace.idx")), stale: [0, 3, 5] },
    {
      name: "an index without its header (the run did not finish)",
      spoil: () =>
        writeFileSync(
          join(dir, "trace.idx"),
          Buffer.concat([
            Buffer.alloc(INDEX_HEADER_LEN),
            readFileSync(join(dir, "trace.idx")).subarray(INDEX_HEADER_LEN),
          ]),
        ),
      stale: [0, 3, 5],
    },
    {
      name: "an index cut short",
      spoil: () => truncateSync(join(dir, "trace.idx"), INDEX_HEADER_LEN + INDEX_ENTRY_LEN),
      stale: [0, 3, 5],
    },
    {
      name: "a trace of another length (a line added)",
      spoil: () => writeFileSync(join(dir, "trace.jsonl"), `\n${readFileSync(join(dir, "trace.jsonl"), "utf8")}`),
      stale: [0, 3, 5],
    },
    {
      name: "a trace of the same length, lines moved",
      spoil: () =>
        writeFileSync(join(dir, "trace.jsonl"), swapFirstTwo(readFileSync(join(dir, "trace.jsonl"), "utf8"))),
      stale: [0, 1],
    },
  ];
  it.each(cases)("$name", async ({ spoil, stale }) => {
    replay({
      spec: HUB,
      inputs: [
        { endpoint: "lan:h1.1", file: H1 },
        { endpoint: "lan:h3.1", file: H3 },
      ],
      out: dir,
      trace: true,
      workers: 1,
    });
    // Without summary.json (a serve that was killed, an older strata's run) there is no digest to check the trace
    // against (test/engine/digests.test.ts): the index alone is tested here.
    rmSync(join(dir, "summary.json"));
    const packets = [0, 1, 2, 3, 4, 5];
    const shown = async (): Promise<string[]> =>
      Promise.all(
        packets.map(async (p) => {
          const io = memoryIo();
          expect(await main(["trace", dir, "--packet", String(p)], io), io.stderr.text).toBe(0);
          return io.stdout.text;
        }),
      );
    const before = await shown();
    spoil();
    for (const p of stale) {
      const got = readIndexed(dir, p, TRACE_LINE_MAX);
      // Not used, or it points at another packet's line (then strata trace reads the trace through).
      if (got !== undefined) expect(got.found && !got.text.startsWith(`{"packet":${p},`)).toBe(true);
    }
    expect(await shown()).toEqual(before);
  });

  it("an index that is the trace's: --packet reads only that packet's line", async () => {
    replay({
      spec: HUB,
      inputs: [
        { endpoint: "lan:h1.1", file: H1 },
        { endpoint: "lan:h3.1", file: H3 },
      ],
      out: dir,
      trace: true,
      workers: 1,
    });
    rmSync(join(dir, "summary.json")); // no digest to check, as above
    // Line 1 spoilt, its length kept: a scan stops there, the index goes past it.
    const trace = readFileSync(join(dir, "trace.jsonl"));
    trace.fill(0x78, 0, trace.indexOf(10));
    writeFileSync(join(dir, "trace.jsonl"), trace);
    const io = memoryIo();
    expect(await main(["trace", dir, "--packet", "4"], io), io.stderr.text).toBe(0);
    expect(io.stdout.text).toMatch(/^packet 4 /);
    const list = memoryIo();
    expect(await main(["trace", dir], list)).toBe(2);
    expect(list.stderr.text).toMatch(/trace\.jsonl: line 1: not a JSON trace line/);
  });
});
