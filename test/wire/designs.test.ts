// Header codecs, per design: parse into the key vector, emit from it, round
// trips at a non-zero offset, truncated input, and forwarding's TTL effect.
// Buffers start filled with 0xa5 so that a byte nobody wrote shows.

import { describe, expect, it } from "vitest";
import { DataPlane } from "../../src/wasm/module.js";
import { type DesignDef, keyLayout } from "../../src/wire/designs.js";
import { design, vector } from "./helpers/keys.js";

const dp = DataPlane.load();
const x = dp.exports;
const FILL = 0xa5;
const OFFSET = 13; // odd, so nothing relies on alignment

const hex = (s: string): Uint8Array =>
  Uint8Array.from(s.replace(/\s+/g, "").match(/../g) ?? [], (b) => parseInt(b, 16));

/** The key vector's fields by name (the in-link excluded). */
function fields(d: DesignDef, key: Uint8Array): Record<string, bigint> {
  const out: Record<string, bigint> = {};
  for (const slot of keyLayout(d).slots.slice(1)) {
    let v = 0n;
    for (let i = 0; i < slot.len; i++) v = (v << 8n) | BigInt(key[slot.offset + i] ?? 0);
    out[slot.field.name] = v;
  }
  return out;
}

/** Runs the parser on `bytes` placed at OFFSET in a 0xa5-filled buffer. */
function parse(d: DesignDef, bytes: Uint8Array): { len: number; key: Uint8Array } {
  const buf = dp.alloc(bytes.length + 2 * OFFSET);
  const key = dp.alloc(64);
  dp.mem.u8.fill(FILL, buf, buf + bytes.length + 2 * OFFSET);
  dp.mem.u8.set(bytes, buf + OFFSET);
  dp.mem.u8.fill(FILL, key, key + 64);
  const len = x.designParse(d.id, buf + OFFSET, bytes.length, key);
  return { len, key: dp.mem.u8.slice(key, key + keyLayout(d).len) };
}

function emit(d: DesignDef, values: Record<string, bigint>, payloadLen: number): Uint8Array {
  const key = dp.alloc(64);
  dp.mem.u8.set(vector(d, values), key);
  const n = x.designEmitLen(d.id, key);
  const buf = dp.alloc(n + 2 * OFFSET);
  dp.mem.u8.fill(FILL, buf, buf + n + 2 * OFFSET);
  x.designEmit(d.id, buf + OFFSET, key, payloadLen);
  const out = dp.mem.u8.slice(buf, buf + n + 2 * OFFSET);
  // Nothing written outside the header.
  expect(out.subarray(0, OFFSET).every((b) => b === FILL)).toBe(true);
  expect(out.subarray(OFFSET + n).every((b) => b === FILL)).toBe(true);
  return out.slice(OFFSET, OFFSET + n);
}

/** RFC 1071, written plainly. */
function checksum(bytes: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < bytes.length; i += 2) sum += ((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

const MAC_A = 0x020000000001n;
const MAC_B = 0x020000000002n;

const cases = [
  {
    name: "ethernet, untagged",
    design: "ethernet",
    bytes: hex("020000000002 020000000001 0800"),
    len: 14,
    fields: { dst: MAC_B, src: MAC_A, type: 0x0800n, vid: 0n, pcp: 0n, ivid: 0n },
  },
  {
    name: "ethernet, 802.1Q",
    design: "ethernet",
    bytes: hex("020000000002 020000000001 8100 a00a 86dd"),
    len: 18,
    fields: { dst: MAC_B, src: MAC_A, type: 0x86ddn, vid: 10n, pcp: 5n, ivid: 0n },
  },
  {
    name: "ethernet, 802.1ad + 802.1Q",
    design: "ethernet",
    bytes: hex("020000000002 020000000001 88a8 2064 8100 00c8 0806"),
    len: 22,
    fields: { dst: MAC_B, src: MAC_A, type: 0x0806n, vid: 100n, pcp: 1n, ivid: 200n },
  },
  {
    name: "ipv4, UDP",
    design: "ipv4",
    bytes: hex("4500001c 0000 0000 40 11 0000 0a000001 0a000302 04d2 0035 0008 0000"),
    len: 20,
    fields: { src: 0x0a000001n, dst: 0x0a000302n, proto: 17n, ttl: 64n, dscp: 0n, sport: 1234n, dport: 53n },
  },
  {
    name: "ipv4 with options, TCP, DSCP 46",
    design: "ipv4",
    bytes: hex("46b80020 0000 0000 07 06 0000 c0a80001 c0a80002 01020304 0050 1f90 00000000"),
    len: 24,
    fields: { src: 0xc0a80001n, dst: 0xc0a80002n, proto: 6n, ttl: 7n, dscp: 46n, sport: 80n, dport: 8080n },
  },
  {
    name: "ipv4, SCTP: ports, every byte its own",
    design: "ipv4",
    bytes: hex("4500001c 0000 0000 40 84 0000 0a000001 0a000302 abcd ef01 0000 0000"),
    len: 20,
    fields: { src: 0x0a000001n, dst: 0x0a000302n, proto: 132n, ttl: 64n, dscp: 0n, sport: 0xabcdn, dport: 0xef01n },
  },
  {
    name: "ipv4, UDP-Lite",
    design: "ipv4",
    bytes: hex("4500001c 0000 0000 40 88 0000 0a000001 0a000302 0102 0304 0000 0000"),
    len: 20,
    fields: { src: 0x0a000001n, dst: 0x0a000302n, proto: 136n, ttl: 64n, dscp: 0n, sport: 0x0102n, dport: 0x0304n },
  },
  {
    name: "ipv4, ICMP has no ports",
    design: "ipv4",
    bytes: hex("4500001c 0000 0000 40 01 0000 0a000001 0a000302 0800 0000 0000 0000"),
    len: 20,
    fields: { src: 0x0a000001n, dst: 0x0a000302n, proto: 1n, ttl: 64n, dscp: 0n, sport: 0n, dport: 0n },
  },
  {
    name: "ipv4, UDP cut short before its ports",
    design: "ipv4",
    bytes: hex("4500001c 0000 0000 40 11 0000 0a000001 0a000302 04d2 00"),
    len: 20,
    fields: { src: 0x0a000001n, dst: 0x0a000302n, proto: 17n, ttl: 64n, dscp: 0n, sport: 0n, dport: 0n },
  },
  {
    name: "ipv4, a later fragment has no ports",
    design: "ipv4",
    bytes: hex("4500001c 0000 0010 40 11 0000 0a000001 0a000302 04d2 0035 0008 0000"),
    len: 20,
    fields: { src: 0x0a000001n, dst: 0x0a000302n, proto: 17n, ttl: 64n, dscp: 0n, sport: 0n, dport: 0n },
  },
  {
    name: "ipv6",
    design: "ipv6",
    bytes: hex("6001234500083a40 fe800000000000000000000000000001 ff020000000000000000000000000002"),
    len: 40,
    fields: {
      src: 0xfe800000000000000000000000000001n,
      dst: 0xff020000000000000000000000000002n,
      next: 58n,
      hlim: 64n,
      flow: 0x12345n,
    },
  },
  {
    name: "cna",
    design: "cna",
    bytes: hex("00000001 00000002 00000007 0800 0000"),
    len: 16,
    fields: { src: 1n, dst: 2n, session: 7n, overlay: 0x0800n },
  },
  {
    name: "gre, keyed",
    design: "gre",
    bytes: hex("45000020 0000 0000 40 2f 0000 0a000001 0a000002  2000 0800 00000028  45000000"),
    len: 28,
    fields: { src: 0x0a000001n, dst: 0x0a000002n, ttl: 64n, dscp: 0n, type: 0x0800n, key: 40n, keyed: 1n },
  },
  {
    name: "gre, without key, IPv6 inside",
    design: "gre",
    bytes: hex("45b8001c 0000 0000 05 2f 0000 0a000001 0a000002  0000 86dd"),
    len: 24,
    fields: { src: 0x0a000001n, dst: 0x0a000002n, ttl: 5n, dscp: 46n, type: 0x86ddn, key: 0n, keyed: 0n },
  },
  {
    name: "gre, checksum, key and sequence number, transparent Ethernet",
    design: "gre",
    bytes: hex("45000034 0000 0000 40 2f 0000 0a000001 0a000002  b000 6558 abcd0000 00000007 00000009"),
    len: 36,
    fields: { src: 0x0a000001n, dst: 0x0a000002n, ttl: 64n, dscp: 0n, type: 0x6558n, key: 7n, keyed: 1n },
  },
  {
    name: "gre, checksum only, PPP",
    design: "gre",
    bytes: hex("45000020 0000 0000 40 2f 0000 0a000001 0a000002  8000 880b 1234 0000"),
    len: 28,
    fields: { src: 0x0a000001n, dst: 0x0a000002n, ttl: 64n, dscp: 0n, type: 0x880bn, key: 0n, keyed: 0n },
  },
  {
    name: "gre, IPv4 options in the outer header",
    design: "gre",
    bytes: hex("46000020 0000 0000 40 2f 0000 0a000001 0a000002 01010101  0000 0800"),
    len: 28,
    fields: { src: 0x0a000001n, dst: 0x0a000002n, ttl: 64n, dscp: 0n, type: 0x0800n, key: 0n, keyed: 0n },
  },
  {
    // various_gre.pcap frame 25 (Cisco IOS, TrustSec inline tagging over GRE).
    name: "gre, a Cisco MetaData shim is skipped like a tag",
    design: "gre",
    bytes: hex("45000088 0091 0000 ff 2f 2551 0aac4006 0aac4007  2000 8909 00000028  0800 0101 0001 0000  45000064"),
    len: 36,
    fields: { src: 0x0aac4006n, dst: 0x0aac4007n, ttl: 255n, dscp: 0n, type: 0x0800n, key: 40n, keyed: 1n },
  },
  {
    // vxlan.pcap frame 1, after its Ethernet header.
    name: "vxlan",
    design: "vxlan",
    bytes: hex("45000086 d2c0 4000 40 11 5152 c0a8cb01 c0a8ca01  b05d 12b5 0072 0000  08000000 00006400"),
    len: 36,
    fields: { src: 0xc0a8cb01n, dst: 0xc0a8ca01n, ttl: 64n, dscp: 0n, sport: 45149n, dport: 4789n, vni: 100n },
  },
  {
    name: "vxlan, reserved bits set are ignored, another port",
    design: "vxlan",
    bytes: hex("45280024 0000 0000 01 11 0000 0a000001 0a000002  c000 2118 0010 abcd  ffffffff fffffeff"),
    len: 36,
    fields: { src: 0x0a000001n, dst: 0x0a000002n, ttl: 1n, dscp: 10n, sport: 0xc000n, dport: 8472n, vni: 0xfffffen },
  },
  {
    name: "mpls, bottom of stack",
    design: "mpls",
    bytes: hex("00064b3f 45000000"),
    len: 4,
    fields: { label: 100n, tc: 5n, s: 1n, ttl: 63n },
  },
  {
    name: "mpls, the largest label, not the bottom",
    design: "mpls",
    bytes: hex("fffff0ff"),
    len: 4,
    fields: { label: 0xfffffn, tc: 0n, s: 0n, ttl: 255n },
  },
];

describe("header designs: parse", () => {
  it.each(cases)("$name", ({ design: name, bytes, len, fields: want }) => {
    const d = design(name);
    const got = parse(d, bytes);
    expect(got.len).toBe(len);
    expect(fields(d, got.key)).toEqual(want);
  });

  it.each(cases)("$name: every truncation of the header is refused", ({ design: name, bytes, len }) => {
    const d = design(name);
    for (let cut = 0; cut < len; cut++) expect(parse(d, bytes.subarray(0, cut)).len, `${cut} bytes`).toBe(-1);
  });

  it.each([
    { name: "ipv4, version 6", design: "ipv4", bytes: hex("6500001c 0000 0000 40 11 0000 0a000001 0a000302") },
    { name: "ipv4, IHL 4", design: "ipv4", bytes: hex("4400001c 0000 0000 40 11 0000 0a000001 0a000302") },
    {
      name: "ipv4, total length below IHL",
      design: "ipv4",
      bytes: hex("45000010 0000 0000 40 11 0000 0a000001 0a000302"),
    },
    {
      name: "ipv4, options beyond the capture",
      design: "ipv4",
      bytes: hex("4f00003c 0000 0000 40 11 0000 0a000001 0a000302"),
    },
    { name: "ipv6, version 4", design: "ipv6", bytes: new Uint8Array(40).fill(0x40) },
    {
      name: "gre, GRE version 1 (PPTP)",
      design: "gre",
      bytes: hex("45000028 0000 0000 40 2f 0000 0a000001 0a000002  3081 880b 0000 8000 00000001 00000002"),
    },
    {
      name: "gre, routing present (RFC 1701)",
      design: "gre",
      bytes: hex("45000020 0000 0000 40 2f 0000 0a000001 0a000002  4000 0800 00000000"),
    },
    {
      name: "gre, strict source route",
      design: "gre",
      bytes: hex("45000020 0000 0000 40 2f 0000 0a000001 0a000002  0800 0800 00000000"),
    },
    {
      name: "gre, recursion 4",
      design: "gre",
      bytes: hex("45000020 0000 0000 40 2f 0000 0a000001 0a000002  0400 0800 00000000"),
    },
    {
      name: "gre, IPv4 protocol 4 (IP in IP)",
      design: "gre",
      bytes: hex("45000020 0000 0000 40 04 0000 0a000001 0a000002  0000 0800 00000000"),
    },
    {
      name: "gre, not IPv4",
      design: "gre",
      bytes: hex("65000020 0000 0000 40 2f 0000 0a000001 0a000002  0000 0800 00000000"),
    },
    {
      name: "gre, a later fragment",
      design: "gre",
      bytes: hex("45000020 0000 00b9 40 2f 0000 0a000001 0a000002  0000 0800 00000000"),
    },
    {
      name: "gre, a first fragment",
      design: "gre",
      bytes: hex("45000020 0000 2000 40 2f 0000 0a000001 0a000002  0000 0800 00000000"),
    },
    {
      name: "gre, a Cisco MetaData shim of another version",
      design: "gre",
      bytes: hex("45000028 0000 0000 40 2f 0000 0a000001 0a000002  0000 8909  0800 0201 0001 0000"),
    },
    {
      name: "vxlan, I flag clear",
      design: "vxlan",
      bytes: hex("45000024 0000 0000 40 11 0000 0a000001 0a000002  c000 12b5 0010 0000  00000000 00006400"),
    },
    {
      name: "vxlan, TCP",
      design: "vxlan",
      bytes: hex("45000024 0000 0000 40 06 0000 0a000001 0a000002  c000 12b5 0010 0000  08000000 00006400"),
    },
    {
      name: "vxlan, a later fragment",
      design: "vxlan",
      bytes: hex("45000024 0000 0001 40 11 0000 0a000001 0a000002  c000 12b5 0010 0000  08000000 00006400"),
    },
    {
      name: "vxlan, options leave no room for VXLAN",
      design: "vxlan",
      bytes: hex("46000024 0000 0000 40 11 0000 0a000001 0a000002 00000000  c000 12b5 0010 0000  08000000"),
    },
  ])("refuses $name", ({ design: name, bytes }) => {
    expect(parse(design(name), bytes).len).toBe(-1);
  });
});

describe("header designs: emit", () => {
  it.each([
    { name: "ethernet", design: "ethernet", payload: 0, want: hex("020000000002 020000000001 0800") },
    {
      name: "ethernet with a VLAN tag",
      design: "ethernet",
      payload: 0,
      vid: 10n,
      pcp: 5n,
      want: hex("020000000002 020000000001 8100 a00a 0800"),
    },
    {
      name: "ethernet, a priority tag (pcp alone)",
      design: "ethernet",
      payload: 0,
      pcp: 3n,
      want: hex("020000000002 020000000001 8100 6000 0800"),
    },
    {
      name: "ethernet, QinQ with no outer vid",
      design: "ethernet",
      payload: 0,
      ivid: 200n,
      want: hex("020000000002 020000000001 88a8 0000 8100 00c8 0800"),
    },
    {
      name: "ethernet, QinQ",
      design: "ethernet",
      payload: 0,
      vid: 100n,
      pcp: 1n,
      ivid: 200n,
      want: hex("020000000002 020000000001 88a8 2064 8100 00c8 0800"),
    },
  ])("$name", ({ design: name, payload, want, vid = 0n, pcp = 0n, ivid = 0n }) => {
    const d = design(name);
    const values = { dst: MAC_B, src: MAC_A, type: 0x0800n, vid, pcp, ivid };
    expect(emit(d, values, payload)).toEqual(want);
  });

  it("ipv4: total length counts the payload, the checksum is valid", () => {
    const d = design("ipv4");
    const h = emit(d, { src: 0x0a000001n, dst: 0x0a000302n, proto: 17n, ttl: 64n, dscp: 46n }, 100);
    expect(h).toEqual(hex(`45b80078 0000 0000 40 11 ${checksumHex(h)} 0a000001 0a000302`));
    expect(checksum(h)).toBe(0);
  });

  it("ipv6: payload length and flow label", () => {
    const h = emit(design("ipv6"), { src: 1n, dst: 2n, next: 17n, hlim: 64n, flow: 0xabcden }, 8);
    expect(h).toEqual(hex("600abcde00081140 00000000000000000000000000000001 00000000000000000000000000000002"));
  });

  it.each([
    { name: "keyed", keyed: 1n, want: "4528003c 0000 0000 40 2f CSUM 0a000001 0a000302  2000 6558 12345678" },
    {
      name: "without key: K clear, no key word",
      keyed: 0n,
      want: "45280038 0000 0000 40 2f CSUM 0a000001 0a000302  0000 6558",
    },
  ])("gre, $name: total length counts GRE and the payload, the checksum is valid", ({ keyed, want }) => {
    const h = emit(
      design("gre"),
      { src: 0x0a000001n, dst: 0x0a000302n, ttl: 64n, dscp: 10n, type: 0x6558n, key: 0x12345678n, keyed },
      32,
    );
    expect(checksum(h.subarray(0, 20))).toBe(0);
    expect(h).toEqual(hex(want.replace("CSUM", checksumHex(h))));
  });

  it("vxlan: IPv4 and UDP lengths, UDP checksum 0, the I flag and the VNI", () => {
    const h = emit(
      design("vxlan"),
      { src: 0xc0a8cb01n, dst: 0xc0a8ca01n, ttl: 64n, dscp: 0n, sport: 45149n, dport: 4789n, vni: 100n },
      98,
    );
    expect(checksum(h.subarray(0, 20))).toBe(0);
    // 20 + 8 + 8 + 98 = 134 (0x86); UDP: 8 + 8 + 98 = 114 (0x72): vxlan.pcap frame 1's outer lengths.
    expect(h).toEqual(
      hex(`45000086 0000 0000 40 11 ${checksumHex(h)} c0a8cb01 c0a8ca01  b05d 12b5 0072 0000  08000000 00006400`),
    );
  });

  it("mpls: one label stack entry", () => {
    expect(emit(design("mpls"), { label: 100n, tc: 5n, s: 1n, ttl: 63n }, 0)).toEqual(hex("00064b3f"));
    expect(emit(design("mpls"), { label: 0xfffffn, tc: 7n, s: 0n, ttl: 0n }, 0)).toEqual(hex("fffffe00"));
  });

  it.each(cases)("$name: emit ∘ parse gives the fields back", ({ design: name, fields: want }) => {
    const d = design(name);
    const readOnly = new Set(d.fields.filter((f) => f.readOnly === true).map((f) => f.name));
    const writable = Object.fromEntries(Object.entries(want).filter(([k]) => !readOnly.has(k)));
    const bytes = emit(d, writable, 0);
    const back = fields(d, parse(d, bytes).key);
    for (const [k, v] of Object.entries(writable)) expect(back[k], k).toBe(v);
  });
});

function checksumHex(h: Uint8Array): string {
  return (((h[10] ?? 0) << 8) | (h[11] ?? 0)).toString(16).padStart(4, "0");
}

describe("forwarding's side effect", () => {
  function decrement(name: string, bytes: Uint8Array): { ok: boolean; after: Uint8Array } {
    const buf = dp.alloc(bytes.length);
    dp.mem.u8.set(bytes, buf);
    const ok = x.designDecrementTtl(design(name).id, buf) !== 0;
    return { ok, after: dp.mem.u8.slice(buf, buf + bytes.length) };
  }

  it.each([64, 2, 255, 0x80])("ipv4 TTL %i − 1 keeps the checksum valid", (ttl) => {
    const h = emit(design("ipv4"), { src: 0xc0a80001n, dst: 0xc0a80002n, proto: 6n, ttl: BigInt(ttl) }, 0);
    const { ok, after } = decrement("ipv4", h);
    expect(ok).toBe(true);
    expect(after[8]).toBe(ttl - 1);
    expect(checksum(after)).toBe(0);
  });

  it.each([64, 2, 255])("ipv4 TTL %i − 1: RFC 1624's HC' = ~(~HC + ~m + m') for every checksum HC", (ttl) => {
    const h = emit(design("ipv4"), { src: 0xc0a80001n, dst: 0xc0a80002n, proto: 17n, ttl: BigInt(ttl) }, 0);
    const buf = dp.alloc(h.length);
    const m = (ttl << 8) | 17;
    const wrong: string[] = [];
    for (let hc = 0; hc <= 0xffff; hc++) {
      dp.mem.u8.set(h, buf);
      dp.mem.u8.set([hc >> 8, hc & 0xff], buf + 10);
      x.designDecrementTtl(design("ipv4").id, buf);
      let sum = (~hc & 0xffff) + (~m & 0xffff) + (m - 0x100);
      sum = (sum & 0xffff) + (sum >>> 16);
      sum = (sum & 0xffff) + (sum >>> 16);
      const got = checksumHex(dp.mem.u8.subarray(buf, buf + h.length));
      if (got !== (~sum & 0xffff).toString(16).padStart(4, "0")) wrong.push(`${hc.toString(16)} → ${got}`);
    }
    expect(wrong).toEqual([]);
  });

  it.each([1, 0])("ipv4 TTL %i expires and leaves the packet as it was", (ttl) => {
    const h = emit(design("ipv4"), { src: 1n, dst: 2n, ttl: BigInt(ttl) }, 0);
    const { ok, after } = decrement("ipv4", h);
    expect(ok).toBe(false);
    expect(after).toEqual(h);
  });

  it.each([
    { name: "gre", values: { src: 1n, dst: 2n, ttl: 64n, type: 0x0800n, key: 5n, keyed: 1n } },
    { name: "vxlan", values: { src: 1n, dst: 2n, ttl: 64n, sport: 1n, dport: 4789n, vni: 7n } },
  ])("$name: the outer IPv4 TTL − 1 keeps its checksum valid; 1 expires", ({ name, values }) => {
    const h = emit(design(name), values, 0);
    const { ok, after } = decrement(name, h);
    expect([ok, after[8]]).toEqual([true, 63]);
    expect(checksum(after.subarray(0, 20))).toBe(0);
    expect(after.subarray(20)).toEqual(h.subarray(20));
    expect(decrement(name, emit(design(name), { ...values, ttl: 1n }, 0)).ok).toBe(false);
  });

  it("mpls TTL − 1; 1 expires", () => {
    const { ok, after } = decrement("mpls", hex("00064b3f"));
    expect([ok, [...after]]).toEqual([true, [...hex("00064b3e")]]);
    expect(decrement("mpls", hex("00064b01"))).toEqual({ ok: false, after: hex("00064b01") });
  });

  it("ipv6 hop limit − 1", () => {
    const h = emit(design("ipv6"), { src: 1n, dst: 2n, hlim: 9n }, 0);
    const { ok, after } = decrement("ipv6", h);
    expect([ok, after[7]]).toEqual([true, 8]);
    expect(decrement("ipv6", emit(design("ipv6"), { hlim: 1n }, 0)).ok).toBe(false);
  });
});
