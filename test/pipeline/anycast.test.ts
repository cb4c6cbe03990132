// Anycast links (seed §4.3): a packet transmitted on one reaches *one* of its
// receivers. The model leaves the choice open; strata chooses by a hash of the
// header fields, so a flow keeps its receiver (session affinity, seed §4.2).
// The reference interpreter does not model the choice, so these properties
// look at what strata writes alone (./helpers/engine-run.ts).

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compile } from "../../src/control/compile.js";
import { parseSpec } from "../../src/description/load.js";
import type { RefInput } from "../../src/model/interpreter.js";
import { cnaPacket, ethernetFrame, ipv4Packet, ipv6Packet } from "./helpers/packets.js";
import { runEngine } from "./helpers/engine-run.js";

/** s sends on an anycast link to r1, r2, r3, which take everything and deliver it. */
const spec = (header: string, names: readonly string[]): string =>
  `
networks:
  net:
    header: ${header}
    members: { s: { name: "${names[0]}" }, r1: { name: "${names[1]}" }, r2: { name: "${names[2]}" }, ` +
  `r3: { name: "${names[3]}" } }
    links:
      - { from: s.1, to: [r1.1, r2.1, r3.1], mode: anycast, group: any }
    tables:
      r1: { acquire: [ { do: receive } ], receive: [ { do: deliver } ] }
      r2: { acquire: [ { do: receive } ], receive: [ { do: deliver } ] }
      r3: { acquire: [ { do: receive } ], receive: [ { do: deliver } ] }
`;

const u32 = fc.nat({ max: 0xffffffff }).map(BigInt);
const u16 = fc.nat({ max: 0xffff });
const u8 = fc.nat({ max: 0xff });

/** Per design: the description, and a flow (the header fields) as a packet factory over payloads. */
const DESIGNS: readonly {
  header: string;
  names: readonly string[];
  flow: fc.Arbitrary<(payload: Uint8Array) => Uint8Array>;
}[] = [
  {
    header: "ethernet",
    names: ["02:00:00:00:00:01", "02:00:00:00:00:02", "02:00:00:00:00:03", "02:00:00:00:00:04"],
    flow: fc
      .record({
        dst: fc.bigInt({ min: 0n, max: (1n << 48n) - 1n }),
        src: fc.bigInt({ min: 0n, max: (1n << 48n) - 1n }),
        type: u16,
        vid: fc.nat({ max: 4095 }),
      })
      .map(
        (f) => (payload) =>
          ethernetFrame({
            dst: f.dst,
            src: f.src,
            type: f.type === 0x8100 || f.type === 0x88a8 ? 0x0800 : f.type,
            tags: f.vid === 0 ? [] : [{ vid: f.vid }],
            payload,
          }),
      ),
  },
  {
    header: "ipv4",
    names: ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"],
    flow: fc
      .record({ src: u32, dst: u32, proto: fc.constantFrom(6, 17), ports: fc.tuple(u16, u16), ttl: u8 })
      .map((f) => (payload) => ipv4Packet({ ...f, payload })),
  },
  {
    header: "ipv6",
    names: ["2001:db8::1", "2001:db8::2", "2001:db8::3", "2001:db8::4"],
    flow: fc
      .record({
        src: fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }),
        dst: fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }),
        flow: fc.nat({ max: 0xfffff }),
        next: u8,
      })
      .map((f) => (payload) => ipv6Packet({ ...f, payload })),
  },
  {
    header: "cna",
    names: ["1", "2", "3", "4"],
    flow: fc.record({ src: u32, dst: u32, session: u32 }).map((f) => (payload) => cnaPacket({ ...f, payload })),
  },
];

const payloads = fc.array(fc.uint8Array({ maxLength: 40 }), { minLength: 2, maxLength: 6 });

describe.each(DESIGNS)("anycast over $header", ({ header, names, flow }) => {
  const c = compile(parseSpec(spec(header, names), "anycast.yaml"));
  const receivers = ["net.r1", "net.r2", "net.r3"];
  const limits = { hopLimit: 8, copyLimit: 8 };

  /** Where each input packet was delivered, by its input number (its timestamp's nanoseconds, inputsOf). */
  function deliveredTo(inputs: readonly RefInput[]): string[] {
    const files = [...runEngine(c, ["net:s.1"], inputs, 0, limits).recorded.files];
    expect(files.filter(([f]) => f.startsWith("links/")).flatMap(([, records]) => records)).toHaveLength(inputs.length);
    const delivered = files
      .filter(([f]) => f.startsWith("delivered/"))
      .flatMap(([f, records]) => records.map((r) => ({ to: f.slice("delivered/".length), input: r.tsNsec })))
      .sort((a, b) => a.input - b.input);
    // Each packet reaches exactly one receiver, and that receiver is one of the link's.
    expect(delivered.map((d) => d.input)).toEqual(inputs.map((_, i) => i));
    return delivered.map((d) => d.to);
  }

  const inputsOf = (packets: readonly Uint8Array[]): RefInput[] =>
    packets.map((bytes, i) => ({ bytes, origLen: bytes.length, tsSec: 0, tsNsec: i, endpoint: 0 }));

  it("sends every packet of a flow to the same receiver, one of the link's", () => {
    fc.assert(
      fc.property(flow, payloads, (make, bodies) => {
        const to = deliveredTo(inputsOf(bodies.map(make)));
        expect(receivers).toContain(to[0]);
        expect(new Set(to).size).toBe(1);
      }),
      { numRuns: 50 },
    );
  });

  it("spreads different flows over more than one receiver", () => {
    fc.assert(
      fc.property(fc.array(flow, { minLength: 48, maxLength: 48 }), (flows) => {
        const to = deliveredTo(inputsOf(flows.map((make) => make(new Uint8Array(8)))));
        for (const r of to) expect(receivers).toContain(r);
        // Equal flows can be drawn; distinct ones over three receivers all landing on one is (1/3)^47-unlikely.
        expect(new Set(to).size).toBeGreaterThan(1);
      }),
      { numRuns: 10 },
    );
  });
});

describe("anycast affinity is by flow, not by every header field", () => {
  it.each([
    {
      header: "ipv4",
      names: ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"],
      vary: (ttl: number) => ipv4Packet({ src: 0x0a000001n, dst: 0x0a090909n, proto: 6, ports: [40000, 443], ttl }),
    },
    {
      header: "ipv6",
      names: ["2001:db8::1", "2001:db8::2", "2001:db8::3", "2001:db8::4"],
      vary: (hlim: number) => ipv6Packet({ src: 1n, dst: 2n, flow: 7, next: 6, hlim }),
    },
  ])("$header: one flow at different TTLs keeps its receiver", ({ header, names, vary }) => {
    const c = compile(parseSpec(spec(header, names), "anycast.yaml"));
    const packets = [64, 63, 62, 61, 60, 12, 2].map(vary);
    const r = runEngine(
      c,
      ["net:s.1"],
      packets.map((bytes) => ({ bytes, origLen: bytes.length, tsSec: 0, tsNsec: 0, endpoint: 0 })),
      0,
      { hopLimit: 8, copyLimit: 8 },
    );
    const delivered = [...r.recorded.files].filter(([f]) => f.startsWith("delivered/"));
    expect(delivered.flatMap(([, records]) => records)).toHaveLength(packets.length);
    expect(delivered).toHaveLength(1);
  });
});
