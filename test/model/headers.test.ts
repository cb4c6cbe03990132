// The reference's own header code, checked against hand-made packets: the
// differential tests trust it, so it gets its table of cases too.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DESIGNS } from "../../src/wire/designs.js";
import { cnaPacket, ethernetFrame, ipv4Packet, ipv6Packet } from "../pipeline/helpers/packets.js";
import { headerDesign, HEADERS, internetChecksum, TPID_SERVICE } from "../../src/model/headers.js";

const design = headerDesign;

describe("parse", () => {
  it.each([
    {
      name: "untagged frame",
      design: "ethernet",
      bytes: ethernetFrame({ type: 0x86dd }),
      fields: { type: 0x86ddn, vid: 0n, pcp: 0n, ivid: 0n },
    },
    {
      name: "802.1Q tag",
      design: "ethernet",
      bytes: ethernetFrame({ tags: [{ vid: 10, pcp: 5, dei: 1 }] }),
      fields: { type: 0x0800n, vid: 10n, pcp: 5n, ivid: 0n },
    },
    {
      name: "802.1ad + 802.1Q",
      design: "ethernet",
      bytes: ethernetFrame({ tags: [{ tpid: TPID_SERVICE, vid: 100 }, { vid: 7 }] }),
      fields: { vid: 100n, ivid: 7n, type: 0x0800n },
    },
    {
      name: "a third tag is the type",
      design: "ethernet",
      bytes: ethernetFrame({ tags: [{ vid: 1 }, { vid: 2 }, { vid: 3 }] }),
      fields: { vid: 1n, ivid: 2n, type: 0x8100n },
    },
    {
      name: "UDP ports after options",
      design: "ipv4",
      bytes: ipv4Packet({ options: new Uint8Array(8), proto: 17, ports: [53, 1024], dscp: 46, ttl: 9 }),
      fields: { sport: 53n, dport: 1024n, dscp: 46n, ttl: 9n },
    },
    {
      name: "no ports in a later fragment",
      design: "ipv4",
      bytes: ipv4Packet({ proto: 6, ports: [80, 81], fragOffset: 1 }),
      fields: { sport: 0n, dport: 0n },
    },
    {
      name: "no ports for ICMP",
      design: "ipv4",
      bytes: ipv4Packet({ proto: 1, ports: [80, 81] }),
      fields: { sport: 0n, dport: 0n, proto: 1n },
    },
    {
      name: "IPv6 flow label under the traffic class",
      design: "ipv6",
      bytes: ipv6Packet({ tc: 0xff, flow: 0xabcde, hlim: 3 }),
      fields: { flow: 0xabcden, hlim: 3n },
    },
    {
      name: "cna",
      design: "cna",
      bytes: cnaPacket({ session: 9n, overlay: 0x800n, reserved: 0xffff }),
      fields: { session: 9n, overlay: 0x800n },
    },
  ])("$name", ({ design: name, bytes, fields }) => {
    const parsed = design(name).parse(bytes)?.fields;
    expect(Object.fromEntries(Object.keys(fields).map((k) => [k, parsed?.get(k)]))).toEqual(fields);
  });

  it.each([
    { name: "frame one byte short", design: "ethernet", bytes: ethernetFrame().subarray(0, 13) },
    { name: "tag without its type", design: "ethernet", bytes: ethernetFrame({ tags: [{ vid: 1 }] }).subarray(0, 17) },
    { name: "IPv4 IHL 4", design: "ipv4", bytes: Uint8Array.from(ipv4Packet(), (b, i) => (i === 0 ? 0x44 : b)) },
    {
      name: "IPv4 options past the capture",
      design: "ipv4",
      bytes: ipv4Packet({ options: new Uint8Array(8) }).subarray(0, 24),
    },
    { name: "IPv4 total length under the header", design: "ipv4", bytes: ipv4Packet({ totalLen: 19 }) },
    { name: "version 6 in an IPv4 network", design: "ipv4", bytes: ipv6Packet() },
    { name: "IPv6 header cut", design: "ipv6", bytes: ipv6Packet().subarray(0, 39) },
    { name: "cna header cut", design: "cna", bytes: cnaPacket().subarray(0, 15) },
  ])("refuses: $name", ({ design: name, bytes }) => {
    expect(design(name).parse(bytes)).toBeUndefined();
  });
});

describe("build", () => {
  it.each([
    { design: "ethernet", fields: { dst: 2n, src: 3n, type: 0x0800n, vid: 0n, pcp: 0n, ivid: 0n }, len: 14 },
    { design: "ethernet", fields: { dst: 2n, src: 3n, type: 0x0800n, vid: 0n, pcp: 6n, ivid: 0n }, len: 18 },
    { design: "ethernet", fields: { dst: 2n, src: 3n, type: 0x0806n, vid: 5n, pcp: 1n, ivid: 9n }, len: 22 },
    { design: "ipv4", fields: { src: 1n, dst: 2n, proto: 17n, ttl: 64n, dscp: 10n }, len: 20 },
    { design: "ipv6", fields: { src: 1n, dst: 2n, next: 58n, hlim: 255n, flow: 0xfffffn }, len: 40 },
    { design: "cna", fields: { src: 1n, dst: 2n, session: 3n, overlay: 4n }, len: 16 },
  ])("$design header of $len bytes parses back to its fields", ({ design: name, fields, len }) => {
    const h = design(name).build(new Map(Object.entries(fields)), 0);
    expect(h.length).toBe(len);
    const parsed = design(name).parse(h)?.fields;
    expect(Object.fromEntries(Object.keys(fields).map((k) => [k, parsed?.get(k)]))).toEqual(fields);
    if (name === "ipv4") expect(internetChecksum(h)).toBe(0);
  });
});

describe("decrementHopLimit", () => {
  it("updates a correct IPv4 checksum to what recomputing it gives (RFC 1624 = RFC 1071)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 255 }),
        fc.nat(255),
        fc.nat(63),
        fc.nat(10),
        fc.nat(0xffff),
        (ttl, proto, dscp, words, ident) => {
          const p = ipv4Packet({
            ttl,
            proto,
            dscp,
            ident,
            options: Uint8Array.from({ length: 4 * words }, (_, i) => i * 37),
          });
          const out = design("ipv4").decrementHopLimit?.(p);
          expect(out?.[8]).toBe(ttl - 1);
          expect(internetChecksum(out?.subarray(0, 20 + 4 * words) ?? new Uint8Array(1))).toBe(0);
        },
      ),
    );
  });

  it.each([
    { design: "ipv4", bytes: ipv4Packet({ ttl: 1 }) },
    { design: "ipv4", bytes: ipv4Packet({ ttl: 0 }) },
    { design: "ipv6", bytes: ipv6Packet({ hlim: 1 }) },
  ])("drops a $design packet whose hop limit would reach 0", ({ design: name, bytes }) => {
    expect(design(name).decrementHopLimit?.(bytes)).toBeUndefined();
    expect(design(name).decrementHopLimit).toBeDefined();
  });
});

describe("header lengths", () => {
  it.each([
    { name: "untagged frame", design: "ethernet", bytes: ethernetFrame(), len: 14 },
    { name: "one tag", design: "ethernet", bytes: ethernetFrame({ tags: [{ vid: 1 }] }), len: 18 },
    {
      name: "a third tag is payload",
      design: "ethernet",
      bytes: ethernetFrame({ tags: [{ vid: 1 }, { vid: 2 }, { vid: 3 }] }),
      len: 22,
    },
    {
      name: "IPv4 with 8 bytes of options",
      design: "ipv4",
      bytes: ipv4Packet({ options: new Uint8Array(8) }),
      len: 28,
    },
    { name: "IPv6", design: "ipv6", bytes: ipv6Packet({ payload: new Uint8Array(9) }), len: 40 },
    { name: "cna", design: "cna", bytes: cnaPacket({ payload: new Uint8Array(3) }), len: 16 },
  ])("parse takes the header's bytes: $name", ({ design: name, bytes, len }) => {
    expect(design(name).parse(bytes)?.len).toBe(len);
  });

  it.each([
    { design: "ipv4", bytes: ipv4Packet({ payload: new Uint8Array(10) }), stated: 30 },
    { design: "ipv4", bytes: ipv4Packet({ totalLen: 25 }), stated: 25 },
    { design: "ipv4", bytes: Uint8Array.of(0x45, 0, 0), stated: undefined },
    { design: "ipv6", bytes: ipv6Packet({ payload: new Uint8Array(7) }), stated: 47 },
    { design: "ipv6", bytes: ipv6Packet().subarray(0, 5), stated: undefined },
  ])("$design states its length: $stated", ({ design: name, bytes, stated }) => {
    expect(design(name).statedLen?.(bytes)).toBe(stated);
  });

  it("designs without a length field state none", () => {
    expect(design("ethernet").statedLen).toBeUndefined();
    expect(design("cna").statedLen).toBeUndefined();
  });

  it.each([
    { design: "ipv4", payload: 100, at: 2, stated: 120 },
    { design: "ipv6", payload: 100, at: 4, stated: 100 },
  ])("a pushed $design header states its payload's original length", ({ design: name, payload, at, stated }) => {
    const h = design(name).build(new Map(), payload);
    expect(((h[at] ?? 0) << 8) | (h[at + 1] ?? 0)).toBe(stated);
  });
});

describe("the reference's designs", () => {
  it("have the fields and widths the description's registry gives, for every design the reference knows", () => {
    for (const d of DESIGNS.filter((x) => HEADERS.has(x.name))) {
      expect(design(d.name).bits, d.name).toEqual(Object.fromEntries(d.fields.map((f) => [f.name, f.bits])));
    }
  });

  it("refuse a design the reference does not know, saying where to add it", () => {
    expect(() => design("ppp")).toThrow(
      "the reference (src/model/headers.ts) knows no header design 'ppp': add its entry to HEADERS",
    );
  });
});
