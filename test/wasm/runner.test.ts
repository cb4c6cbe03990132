// Runner (src/wasm/runner.ts), the TypeScript half of a run: stage() copies a
// batch into linear memory, go() runs it and, each time the data plane pauses
// for room, hands the trace ring's events over and flushRecordings() the
// recording ring, a recording at a time.
// Packets cross the hub-and-spoke fixture: h1 → hub → h2, three records each.

import { readFileSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";
import { compile } from "../../src/control/compile.js";
import { resolveEndpoint } from "../../src/control/endpoints.js";
import { install } from "../../src/control/install.js";
import { parseSpec } from "../../src/description/load.js";
import { DROP_REASONS, LAYOUTS, REGIONS, TRACE_KINDS } from "../../src/wasm/abi.js";
import { DataPlane } from "../../src/wasm/module.js";
import { type InputBatch, Runner, type RunnerOptions, type TraceEvent } from "../../src/wasm/runner.js";
import { concat } from "../pcap/builders.js";
import { ethernetFrame } from "../pipeline/helpers/packets.js";
import { type Rec, type Recorded, recordIn } from "../pipeline/helpers/recorded.js";

const c = compile(parseSpec(readFileSync(new URL("../fixtures/specs/hub.yaml", import.meta.url), "utf8"), "hub.yaml"));
/** Endpoint 0: sent by h1 on its link; endpoint 1: sent by h3 on its link. */
const injections = [resolveEndpoint(c, "lan:h1.1"), resolveEndpoint(c, "lan:h3.1")];
const mac = (last: number): bigint => 0x020000000000n + BigInt(last);
const linkOf = (from: string, to: string): number =>
  c.links.find((l) => c.members[l.sender]?.key === from && c.members[l.receivers[0]?.member ?? -1]?.key === to)
    ?.index ?? -1;
const memberOf = (key: string): number => c.members.find((m) => m.key === key)?.index ?? -1;
/** The file strata run records a link's crossings in (both directions of a two-way link). */
const fileOf = (from: string, to: string): string => `links/${c.links[linkOf(from, to)]?.qualified ?? "?"}`;

/** Frame i: to h2, from h1 (endpoint 0) or h3 (endpoint 1), its payload 20 + i % 30 bytes of i. */
function frame(i: number, endpoint = 0): Uint8Array {
  return ethernetFrame({
    dst: mac(2),
    src: mac(endpoint === 0 ? 1 : 3),
    payload: new Uint8Array(20 + (i % 30)).fill(i),
  });
}

/** Frames back to back after `lead` bytes of 0xa5 (so a wrong base shows), stored in `order`. */
function batchOf(
  frames: readonly Uint8Array[],
  endpoint: number | readonly number[],
  lead = 0,
  order: readonly number[] = frames.map((_, i) => i),
): InputBatch {
  const offset = new Uint32Array(frames.length);
  let at = lead;
  for (const i of order) {
    offset[i] = at;
    at += frames[i]?.length ?? 0;
  }
  const data = new Uint8Array(at + 16).fill(0xa5);
  frames.forEach((f, i) => data.set(f, offset[i]));
  return {
    data,
    count: frames.length,
    offset,
    capLen: Uint32Array.from(frames, (f) => f.length),
    origLen: Uint32Array.from(frames, (f) => f.length + 4),
    tsSec: Float64Array.from(frames, (_, i) => 1000 + i),
    tsNsec: Uint32Array.from(frames, (_, i) => i * 7),
    endpoint: typeof endpoint === "number" ? endpoint : Uint32Array.from(endpoint),
  };
}

/** A runner on the fixture, its packets recorded as strata run records them. */
function setup(options: Partial<RunnerOptions> = {}): { dp: DataPlane; runner: Runner; recorded: Recorded } {
  const dp = DataPlane.load();
  install(dp, c, injections);
  const recorded = recordIn(dp, c);
  return { dp, recorded, runner: new Runner(dp, { maxFanout: c.maxFanout, slotLen: 256, ...options }, recorded) };
}

/** What a batch of frames from `endpoints` must be recorded as: each frame on its host's link to hub, on hub's link to
 * h2, and delivered to h2, each recording in the frames' order. */
function expected(frames: readonly Uint8Array[], endpoints: readonly number[]): Map<string, Rec[]> {
  const files = new Map<string, Rec[]>();
  frames.forEach((bytes, i) => {
    const rec = { tsSec: 1000 + i, tsNsec: i * 7, origLen: bytes.length + 4, bytes };
    for (const file of [fileOf(endpoints[i] === 1 ? "h3" : "h1", "hub"), fileOf("hub", "h2"), "delivered/lan.h2"])
      files.set(file, [...(files.get(file) ?? []), rec]);
  });
  return files;
}

/** The recordings as a plain object, recordings in name order (the order of their first records is not kept). */
const plain = (files: ReadonlyMap<string, readonly Rec[]>): Record<string, readonly Rec[]> =>
  Object.fromEntries([...files].sort((a, b) => (a[0] < b[0] ? -1 : 1)));

const region = (dp: DataPlane, name: (typeof REGIONS)[number]): number => dp.exports.region(REGIONS.indexOf(name));

describe("Runner.stage", () => {
  it.each([
    { name: "one endpoint for all, offsets from 0", n: 3, endpoint: 1, lead: 0, order: [0, 1, 2], base: 0 },
    { name: "an endpoint per packet", n: 3, endpoint: [1, 0, 1], lead: 0, order: [0, 1, 2], base: 0 },
    { name: "a batch starting 100 bytes into its data", n: 3, endpoint: 0, lead: 100, order: [0, 1, 2], base: 100 },
    {
      name: "packets stored out of order: the lowest offset is the base",
      n: 3,
      endpoint: [0, 1, 0],
      lead: 40,
      order: [2, 0, 1],
      base: 40,
    },
    { name: "no packets", n: 0, endpoint: 0, lead: 8, order: [], base: 0 },
    {
      name: "a data span beyond batchBytes, into a grown area",
      n: 40,
      endpoint: 0,
      lead: 24,
      order: Array.from({ length: 40 }, (_, i) => i),
      base: 24,
      options: { batchBytes: 64, slots: 1 },
    },
  ])("copies $name", ({ n, endpoint, lead, order, base, options }) => {
    const { dp, runner } = setup({ batchPackets: 64, ...options });
    const frames = Array.from({ length: n }, (_, i) => frame(i));
    const batch = batchOf(frames, endpoint, lead, order);
    const staged = runner.stage(batch);
    expect(staged).toEqual({ count: n, base });
    const end = Math.max(base, ...frames.map((f, i) => (batch.offset[i] ?? 0) + f.length));
    const u32 = (name: (typeof REGIONS)[number]): number[] =>
      Array.from(dp.mem.u32.subarray(region(dp, name) >>> 2, (region(dp, name) >>> 2) + n));
    expect(dp.mem.u8.slice(region(dp, "in-data"), region(dp, "in-data") + end - base)).toEqual(
      batch.data.slice(base, end),
    );
    // Offsets go in as given; wasm subtracts the base when it loads a packet.
    expect(u32("in-offset")).toEqual(Array.from(batch.offset));
    expect(u32("in-len")).toEqual(Array.from(batch.capLen));
    expect(u32("in-orig-len")).toEqual(Array.from(batch.origLen));
    expect(u32("in-nsec")).toEqual(Array.from(batch.tsNsec));
    expect(u32("in-sec")).toEqual(Array.from(batch.tsSec));
    expect(u32("in-endpoint")).toEqual(
      typeof endpoint === "number" ? Array.from({ length: n }, () => endpoint) : endpoint,
    );
    // The data area holds the whole span: no other input array, nor a ring, starts inside it.
    const data = region(dp, "in-data");
    const others = REGIONS.filter((r) => r !== "in-data" && !r.endsWith("-pos")).map((r) => region(dp, r));
    expect(others.filter((at) => at >= data && at < data + end - base)).toEqual([]);
  });

  it.each([
    { name: "as many packets as batchPackets", batchPackets: 4, n: 4, error: null },
    {
      name: "one packet more than batchPackets",
      batchPackets: 4,
      n: 5,
      error: "batch of 5 packets; the runner takes 4",
    },
  ])("takes $name", ({ batchPackets, n, error }) => {
    const { runner } = setup({ batchPackets });
    const stage = (): unknown =>
      runner.stage(
        batchOf(
          Array.from({ length: n }, (_, i) => frame(i)),
          0,
        ),
      );
    if (error === null) expect(stage()).toEqual({ count: n, base: 0 });
    else expect(stage).toThrow(error);
  });
});

describe("Runner.run", () => {
  it.each([
    { name: "from one endpoint", n: 5, endpoints: [0, 0, 0, 0, 0], lead: 0, first: 0, options: {} },
    {
      name: "from an endpoint per packet, numbered from 100",
      n: 4,
      endpoints: [0, 1, 1, 0],
      lead: 0,
      first: 100,
      options: {},
    },
    { name: "re-based: the data starts 300 bytes in", n: 4, endpoints: [1, 0, 1, 0], lead: 300, first: 7, options: {} },
    {
      name: "a data span beyond batchBytes (grown)",
      n: 40,
      endpoints: Array.from({ length: 40 }, (_, i) => i % 2),
      lead: 50,
      first: 0,
      options: { batchBytes: 64 },
    },
  ])("delivers every packet $name", ({ n, endpoints, lead, first, options }) => {
    const frames = Array.from({ length: n }, (_, i) => frame(i, endpoints[i]));
    const { runner, recorded } = setup(options);
    runner.run(batchOf(frames, endpoints, lead), first, null);
    runner.flushRecordings();
    expect(plain(recorded.files)).toEqual(plain(expected(frames, endpoints)));
    // Traced, the same records; and the trace has each packet, numbered from `first`, injected, then on its host's
    // link to hub, on hub's link to h2, and delivered to h2, one packet after the other.
    const traced = setup({ ...options, trace: true });
    const path: string[] = [];
    traced.runner.run(batchOf(frames, endpoints, lead), first, {
      event(e): void {
        const kind = TRACE_KINDS[e.kind];
        if (kind === "inject") path.push(`${e.packet} inject`);
        else if (kind === "link") path.push(`${e.packet} link ${e.link}`);
        else if (kind === "deliver") path.push(`${e.packet} deliver ${e.member}`);
      },
    });
    traced.runner.flushRecordings();
    expect(plain(traced.recorded.files)).toEqual(plain(expected(frames, endpoints)));
    expect(path).toEqual(
      frames.flatMap((_, i) => [
        `${first + i} inject`,
        `${first + i} link ${linkOf(endpoints[i] === 1 ? "h3" : "h1", "hub")}`,
        `${first + i} link ${linkOf("hub", "h2")}`,
        `${first + i} deliver ${memberOf("h2")}`,
      ]),
    );
  });

  it("runs the next batch after one that grew the data span", () => {
    const { runner, recorded } = setup({ batchBytes: 64 });
    const big = Array.from({ length: 20 }, (_, i) => frame(i));
    const small = [frame(0)];
    runner.run(batchOf(big, 0, 64), 0, null);
    runner.run(batchOf(small, 0), 20, null);
    runner.flushRecordings();
    // Each recording's last record is the small batch's frame: on h1's link, on hub's link to h2, delivered to h2.
    const last = [...expected(small, [0])].map(([file]) => [file, recorded.of(file).slice(-1)]);
    expect(Object.fromEntries(last)).toEqual(plain(expected(small, [0])));
    expect(recorded.of("delivered/lan.h2")).toHaveLength(big.length + small.length);
  });

  // A trace ring of the least size the runner allows (room for one step of the
  // widest fan-out): the data plane pauses many times in one batch, and go() resumes it.
  const FRAMES = Array.from({ length: 60 }, (_, i) => frame(i));
  /** Every event of a traced run of FRAMES, as a line each. */
  const traceOf = (traceEvents: number): { events: string[]; resumes: number; recorded: Recorded } => {
    const { dp, runner, recorded } = setup({ trace: true, traceEvents });
    const resume = vi.spyOn(dp.exports, "resume");
    const events: string[] = [];
    runner.run(batchOf(FRAMES, 0), 0, { event: (e: TraceEvent) => void events.push(JSON.stringify(e)) });
    runner.flushRecordings();
    return { events, resumes: resume.mock.calls.length, recorded };
  };

  it("pauses and resumes when the trace ring is full: every event arrives, in order", () => {
    const small = traceOf(1);
    const roomy = traceOf(1 << 15);
    expect(small.resumes).toBeGreaterThan(10);
    expect(roomy.resumes).toBe(0);
    expect(small.events).toEqual(roomy.events);
    expect(plain(small.recorded.files)).toEqual(
      plain(
        expected(
          FRAMES,
          FRAMES.map(() => 0),
        ),
      ),
    );
  });

  it("pauses and resumes when the trace ring is full, to no sink: the ring is only emptied", () => {
    const { dp, runner, recorded } = setup({ trace: true, traceEvents: 1 });
    const resume = vi.spyOn(dp.exports, "resume");
    runner.run(batchOf(FRAMES, 0), 0, null);
    runner.flushRecordings();
    expect(resume.mock.calls.length).toBeGreaterThan(10);
    expect(plain(recorded.files)).toEqual(
      plain(
        expected(
          FRAMES,
          FRAMES.map(() => 0),
        ),
      ),
    );
    expect([linkOf("h1", "hub"), linkOf("hub", "h2")].map((l) => dp.exports.linkPackets(l))).toEqual([
      FRAMES.length,
      FRAMES.length,
    ]);
    expect(dp.exports.memberDelivered(memberOf("h2"))).toBe(FRAMES.length);
  });
});

describe("Runner.flushRecordings: one recording ring for every recording", () => {
  /** Frames to h2 (h1 > hub, hub > h2, h2's delivery: three records each) of these lengths. */
  const sized = (lens: readonly number[]): Uint8Array[] =>
    lens.map((len, i) =>
      ethernetFrame({ dst: mac(2), src: mac(1), payload: Uint8Array.from({ length: len - 14 }, (_, j) => i + j) }),
    );
  const times = (n: number, len: number): number[] => Array<number>(n).fill(len);

  /** What a recording must hold: a pcap record (little-endian, nanoseconds) per frame, as batchOf stamps them. */
  const records = (frames: readonly Uint8Array[]): Uint8Array =>
    concat(
      ...frames.flatMap((f, i) => {
        const h = new DataView(new ArrayBuffer(16));
        [1000 + i, i * 7, f.length, f.length + 4].forEach((v, k) => h.setUint32(4 * k, v, true));
        return [new Uint8Array(h.buffer), f];
      }),
    );

  /** Recording numbers: h1 > hub, hub > h2 and h2's deliveries get the given ones, every other link one of its own. */
  interface Numbering {
    readonly count: number;
    readonly toHub: number;
    readonly toH2: number;
    readonly h2: number;
  }
  const SMALL: Numbering = {
    count: c.links.length + 1,
    toHub: linkOf("h1", "hub"),
    toH2: linkOf("hub", "h2"),
    h2: c.links.length,
  };

  function setupRing(
    n: Numbering,
    recordingBytes: number,
  ): { dp: DataPlane; runner: Runner; written: Map<number, Uint8Array>; flushes: number[][] } {
    const dp = DataPlane.load();
    install(dp, c, injections);
    const special = new Map([
      [linkOf("h1", "hub"), n.toHub],
      [linkOf("hub", "h2"), n.toH2],
    ]);
    const others = [...Array(n.count).keys()].filter((k) => k !== n.toHub && k !== n.toH2 && k !== n.h2);
    c.links.forEach((l) => dp.exports.linkSetRecording(l.index, special.get(l.index) ?? others[l.index] ?? -1));
    dp.exports.memberSetRecording(memberOf("h2"), n.h2);
    const written = new Map<number, Uint8Array>();
    /** The recordings each write-out handed over, in the order it did. */
    const flushes: number[][] = [];
    let current: number[] = [];
    const runner = new Runner(
      dp,
      { maxFanout: c.maxFanout, slotLen: 256, recordingBytes },
      {
        count: n.count,
        write(k, data, start, len): void {
          written.set(k, concat(written.get(k) ?? new Uint8Array(0), data.slice(start, start + len)));
          current.push(k);
        },
      },
    );
    const gather = dp.exports.recordingsGather;
    vi.spyOn(dp.exports, "recordingsGather").mockImplementation(() => {
      current = [];
      flushes.push(current);
      return gather();
    });
    return { dp, runner, written, flushes };
  }

  // The least ring the runner makes holds one record of the longest packet a packet buffer
  // holds (slotLen 256): 8 (ring record) + 16 (pcap header) + 4 (in-link tag) + 256 = 284 bytes.
  it.each([
    {
      name: "a roomy ring: the records stay in it until flushed",
      numbering: SMALL,
      recordingBytes: 1 << 16,
      lens: times(30, 60),
      pausesAtLeast: 0,
      tooLong: false,
    },
    {
      name: "20,000 recordings, three with packets: only those are written, in their order",
      numbering: { count: 20_000, toHub: 19_999, toH2: 7, h2: 12_345 },
      recordingBytes: 1 << 16,
      lens: times(30, 60),
      pausesAtLeast: 0,
      tooLong: false,
    },
    // Grouped by recording, each record is copied whole and nothing past it: short, 16-byte multiples, long.
    {
      name: "records of every length from 14 to 269 bytes, grouped whole",
      numbering: SMALL,
      recordingBytes: 4096,
      lens: Array.from({ length: 256 }, (_, i) => 14 + i),
      pausesAtLeast: 20,
      tooLong: false,
    },
    {
      name: "a ring of a few records: the run writes it out each time it pauses",
      numbering: SMALL,
      recordingBytes: 0,
      lens: times(30, 60),
      pausesAtLeast: 20,
      tooLong: false,
    },
    // 8 + 16 + 214 = 238 bytes: every record but the ring's first waits for a write-out.
    {
      name: "records larger than half the ring: one in the ring at a time",
      numbering: SMALL,
      recordingBytes: 0,
      lens: times(10, 214),
      pausesAtLeast: 29,
      tooLong: false,
    },
    {
      name: "a record the whole ring cannot hold: the packet is dropped as too-long",
      numbering: SMALL,
      recordingBytes: 0,
      lens: times(3, 300),
      pausesAtLeast: 0,
      tooLong: true,
    },
  ])("$name", ({ numbering, recordingBytes, lens, pausesAtLeast, tooLong }) => {
    const { dp, runner, written, flushes } = setupRing(numbering, recordingBytes);
    const resume = vi.spyOn(dp.exports, "resume");
    const frames = sized(lens);
    const n = frames.length;
    runner.run(batchOf(frames, 0), 0, null);
    expect(resume.mock.calls.length).toBeGreaterThanOrEqual(pausesAtLeast);
    if (pausesAtLeast === 0) expect(written.size).toBe(0);
    runner.flushRecordings();
    const want = tooLong
      ? new Map()
      : new Map([numbering.toHub, numbering.toH2, numbering.h2].map((k) => [k, records(frames)]));
    expect(written).toEqual(want);
    // Each write-out hands over each recording that has records once, in the order of their numbers.
    for (const f of flushes) expect(f).toEqual([...new Set(f)].sort((a, b) => a - b));
    const drops = new BigUint64Array(dp.mem.u8.buffer, dp.exports.memberDrops(memberOf("h1")), DROP_REASONS.length);
    expect(Number(drops[DROP_REASONS.indexOf("too-long")])).toBe(tooLong ? n : 0);
    // Emptied: a second flush has nothing to hand over.
    written.clear();
    runner.flushRecordings();
    expect(written.size).toBe(0);
  });

  it("without recordings, on a data plane whose recordings an earlier runner numbered: their records let go", () => {
    const { dp, runner, recorded } = setup({ recordingBytes: 0 });
    runner.run(batchOf(sized([200]), 0), 0, null);
    runner.flushRecordings();
    expect(recorded.of("delivered/lan.h2")).toHaveLength(1);
    // The ring holds a record or two: this run fills it many times over.
    const frames = sized(times(30, 200));
    new Runner(dp, { maxFanout: c.maxFanout, slotLen: 256 }).run(batchOf(frames, 0), 1, null);
    expect(dp.exports.memberDelivered(memberOf("h2"))).toBe(1 + frames.length);
    expect(recorded.of("delivered/lan.h2")).toHaveLength(1);
  });

  it("without recordings: nothing is recorded, every packet runs its course", () => {
    const dp = DataPlane.load();
    install(dp, c, injections);
    const runner = new Runner(dp, { maxFanout: c.maxFanout, slotLen: 256, recordingBytes: 0 });
    const frames = sized(times(30, 200));
    runner.run(batchOf(frames, 0), 0, null);
    expect(() => runner.flushRecordings()).not.toThrow();
    expect(dp.exports.memberDelivered(memberOf("h2"))).toBe(frames.length);
    for (const m of [-1, ...c.members.map((x) => x.index)])
      expect(Array.from(new BigUint64Array(dp.mem.u8.buffer, dp.exports.memberDrops(m), DROP_REASONS.length))).toEqual(
        DROP_REASONS.map(() => 0n),
      );
  });
});

describe("what the data plane hands back: recordings and the trace, nothing else", () => {
  // strata run reads the recording ring and the trace ring; a ring only tests read would let the tests check
  // something users never run (issue 29).
  it("has no ring but the recording ring and the trace ring to read back", () => {
    const rings = REGIONS.filter((r) => !r.startsWith("in-"));
    expect(rings).toEqual([
      "trace-base",
      "trace-pos",
      "recording-active",
      "recording-span-ends",
      "recording-span-lens",
    ]);
    expect(Object.keys(LAYOUTS).filter((k) => k !== "WRITE")).toEqual(["RINGREC", "EVENT"]);
    const exports = Object.keys(DataPlane.load().exports);
    expect(exports.filter((name) => /^(output|out)[A-Z]/.test(name))).toEqual([]);
    expect(exports).toEqual(expect.arrayContaining(["traceInit", "recordingsInit", "recordingsGather"]));
  });
});
