// Damaged inputs among several: the damaged one ends at its damage, the others
// are replayed to their end, and nothing read is lost — every packet has a
// fate, the summary counts exactly the good packets, the link captures hold
// them, and summary.json carries the error (exit 2).

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryIo } from "../../src/cli/io.js";
import { main } from "../..//src/cli/main.js";
import { openCapture } from "../../src/pcap/index.js";
import type { Summary } from "../../src/engine/summary.js";
import { concat, drain, epb, idb, payload, pcapFile, pcapRecord, type PcapRecordSpec, shb } from "../pcap/builders.js";

const root = new URL("../..", import.meta.url).pathname;
const DAMAGED = join(root, "pcaps/pcapfix_test_damaged.pcap");
const DAMAGED_ERROR = /pcapfix_test_damaged\.pcap: byte 114: record says caplen 16896 but only 8756 bytes remain/;
const HUB = join(root, "examples/hub-and-spoke/network.yaml");
const H3 = join(root, "pcaps/example-hub-h3.pcap");

// Three senders, each on its own link to r, which takes every frame: a packet
// injected at s<k>.1 crosses link s<k>.1-r.<k> once and is delivered to r.
const SINK = `networks:
  lan:
    header: ethernet
    members:
      s1: { name: "02:00:00:00:00:01" }
      s2: { name: "02:00:00:00:00:02" }
      s3: { name: "02:00:00:00:00:03" }
      r: { name: "02:00:00:00:00:09" }
    links: [ { from: s1.1, to: r.1 }, { from: s2.1, to: r.2 }, { from: s3.1, to: r.3 } ]
    tables:
      r: { acquire: [ { do: receive } ], receive: [ { do: deliver } ] }
`;

let dir = "";
let sink = "";
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "strata-inputs-"));
  sink = join(dir, "sink.yaml");
  writeFileSync(sink, SINK);
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** An Ethernet frame from sender k, packet i: lengths vary so a misplaced byte shows. */
function frame(k: number, i: number): Uint8Array {
  const head = Uint8Array.of(2, 0, 0, 0, 0, 9, 2, 0, 0, 0, 0, k, 0x08, 0x00);
  return concat(head, payload(46 + ((i * 13) % 90), k * 31 + i));
}

/** Packet i of sender k at second i, k ms in: the inputs interleave. */
function records(k: number, n: number): PcapRecordSpec[] {
  return Array.from({ length: n }, (_, i) => ({ sec: 1_700_000_000 + i, frac: k * 1000, data: frame(k, i) }));
}

function write(name: string, bytes: Uint8Array): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

/** A good pcap of n packets from sender k. */
const good = (name: string, k: number, n: number): string => write(name, pcapFile({}, records(k, n)));

/** A pcap of sender k cut inside record `keep` of n: `keep` good packets, then the file ends in a record. */
function cut(name: string, k: number, n: number, keep: number): string {
  const all = records(k, n);
  const torn = pcapRecord(all[keep] ?? {}).subarray(0, 16 + 5);
  return write(name, concat(pcapFile({}, all.slice(0, keep)), torn));
}

/** A pcapng of sender k whose second interface, declared after `keep` packets, is 802.11: no Ethernet network takes it.
 * */
function wrongLinkTypeLater(name: string, k: number, keep: number): string {
  const packet = (r: PcapRecordSpec, iface: number): Uint8Array => {
    const us = BigInt(r.sec ?? 0) * 1_000_000n + BigInt(r.frac ?? 0);
    return epb({
      iface,
      tsHi: Number(us >> 32n),
      tsLo: Number(us & 0xffffffffn),
      ...(r.data !== undefined ? { data: r.data } : {}),
    });
  };
  const all = records(k, keep + 3);
  return write(
    name,
    concat(
      shb(),
      idb({ linkType: 1 }),
      ...all.slice(0, keep).map((r) => packet(r, 0)),
      idb({ linkType: 105 }),
      ...all.slice(keep).map((r, j) => packet(r, j === 0 ? 1 : 0)),
    ),
  );
}

/** The frames a link capture holds, as hex. */
function framesOf(path: string): string[] {
  const r = drain(openCapture(path));
  expect(r.error).toBeUndefined();
  return r.packets.map((p) => p.hex);
}

/** The first `good` frames of an input file, as hex (the reader's view, before the damage). */
function goodFrames(path: string, good: number): string[] {
  return drain(openCapture(path))
    .packets.slice(0, good)
    .map((p) => p.hex);
}

interface Input {
  /** Sender 1..3 (its link to r), or an endpoint of the hub example. */
  endpoint: string;
  file: () => string;
  /** Packets before the damage (all of them for a good input). */
  good: number;
  error?: RegExp;
}

const s = (k: number): string => `lan:s${k}.1`;

describe("strata run: a damaged input among several", () => {
  it.each<{ name: string; spec?: () => string; inputs: Input[] }>([
    {
      name: "1 input: pcapfix_test_damaged.pcap",
      inputs: [{ endpoint: s(1), file: () => DAMAGED, good: 1, error: DAMAGED_ERROR }],
    },
    {
      name: "1 input: cut inside its 301st record (two batches and a part)",
      inputs: [
        {
          endpoint: s(1),
          file: () => cut("cut-300.pcap", 1, 400, 300),
          good: 300,
          error: /cut-300\.pcap: byte \d+: record says caplen \d+ but only 5 bytes remain/,
        },
      ],
    },
    {
      name: "2 inputs: pcapfix_test_damaged.pcap, then a good one",
      inputs: [
        { endpoint: s(1), file: () => DAMAGED, good: 1, error: DAMAGED_ERROR },
        { endpoint: s(2), file: () => good("good-2-5.pcap", 2, 5), good: 5 },
      ],
    },
    {
      name: "2 inputs: a good one, then one cut in the middle of the merge",
      inputs: [
        { endpoint: s(1), file: () => good("good-1-10.pcap", 1, 10), good: 10 },
        { endpoint: s(2), file: () => cut("cut-2-3.pcap", 2, 10, 3), good: 3, error: /cut-2-3\.pcap: byte \d+:/ },
      ],
    },
    {
      name: "2 inputs in the hub example: pcapfix_test_damaged.pcap and h3 (replication: copies have fates too)",
      spec: () => HUB,
      inputs: [
        { endpoint: "lan:h1.1", file: () => DAMAGED, good: 1, error: DAMAGED_ERROR },
        { endpoint: "lan:h3.1", file: () => H3, good: 2 },
      ],
    },
    {
      name: "3 inputs: the middle one brings an 802.11 interface after 4 packets",
      inputs: [
        { endpoint: s(1), file: () => good("good-1-8.pcap", 1, 8), good: 8 },
        {
          endpoint: s(2),
          file: () => wrongLinkTypeLater("wifi-later.pcapng", 2, 4),
          good: 4,
          error: /wifi-later\.pcapng: interface 1: link type IEEE802_11 \(105\) cannot enter lan:s2\.1/,
        },
        { endpoint: s(3), file: () => good("good-3-8.pcap", 3, 8), good: 8 },
      ],
    },
    {
      name: "3 inputs: two damaged, each reported",
      inputs: [
        { endpoint: s(1), file: () => cut("cut-1-2.pcap", 1, 9, 2), good: 2, error: /cut-1-2\.pcap/ },
        { endpoint: s(2), file: () => good("good-2-9.pcap", 2, 9), good: 9 },
        { endpoint: s(3), file: () => DAMAGED, good: 1, error: DAMAGED_ERROR },
      ],
    },
    {
      name: "2 inputs at scale: 3,000 packets and a copy of them cut after 700 (batches of 256)",
      inputs: [
        { endpoint: s(1), file: () => good("good-1-3000.pcap", 1, 3000), good: 3000 },
        { endpoint: s(2), file: () => cut("cut-1-700.pcap", 1, 3000, 700), good: 700, error: /cut-1-700\.pcap/ },
      ],
    },
  ])("$name", async ({ spec, inputs }) => {
    const out = join(dir, "out");
    const files = inputs.map((i) => i.file());
    const io = memoryIo();
    const code = await main(
      ["run", spec?.() ?? sink, ...inputs.flatMap((i, k) => ["--in", `${i.endpoint}=${files[k]}`]), "--out", out],
      io,
    );

    // Exit 2, one line per damaged input, in the order given; summary.json has the first.
    const errors = inputs.flatMap((i) => (i.error === undefined ? [] : [i.error]));
    expect(code).toBe(2);
    const lines = io.stderr.text.trimEnd().split("\n");
    expect(lines).toHaveLength(errors.length);
    errors.forEach((e, k) => expect(lines[k]).toMatch(new RegExp(`^strata: .*${e.source}`)));
    const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as Summary;
    expect(summary.error).toMatch(errors[0] ?? /never/);

    // Every good packet was injected, and every packet (and copy) has exactly one fate.
    const total = inputs.reduce((n, i) => n + i.good, 0);
    const { injected, copies, delivered, dropped, exited } = summary.packets;
    expect(injected).toBe(total);
    expect(summary.inputs.map((i) => i.packets)).toEqual(inputs.map((i) => i.good));
    summary.inputs.forEach((got, k) =>
      inputs[k]?.error === undefined
        ? expect(got.error).toBeUndefined()
        : expect(got.error).toMatch(inputs[k]?.error ?? /never/),
    );
    expect(delivered + dropped + exited).toBe(injected + copies);
    if (spec !== undefined) return;

    // In the sink: input k's good packets, exactly, on link s<k>.1-r.<k>; all delivered.
    expect(copies).toBe(0);
    expect(delivered).toBe(total);
    inputs.forEach((input, k) => {
      const link = `lan.${input.endpoint.slice(4, 6)}.1-r.${input.endpoint.slice(5, 6)}`;
      expect(summary.links[link]?.packets, link).toBe(input.good);
      expect(framesOf(join(out, `links/${link}.pcap`)), link).toEqual(goodFrames(files[k] ?? "", input.good));
    });
    expect(Object.values(summary.links).reduce((n, l) => n + l.packets, 0)).toBe(injected);
    expect(framesOf(join(out, "delivered/lan.r.pcap"))).toHaveLength(total);
  });
});
