import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { formatValue, parseValue } from "../../src/description/notation.js";
import { parseExact, parsePattern, type RawValue } from "../../src/description/patterns.js";
import type { Pattern } from "../../src/description/types.js";
import { designNamed, type FieldDef, type NameKind } from "../../src/wire/designs.js";

function field(design: string, name: string): FieldDef {
  const f = designNamed(design)?.fields.find((x) => x.name === name);
  if (f === undefined) throw new Error(`no field ${design}.${name}`);
  return f;
}

const MAC = field("ethernet", "dst"); // mac, 48 bits
const TYPE = field("ethernet", "type"); // uint, 16 bits
const PCP = field("ethernet", "pcp"); // uint, 3 bits
const V4 = field("ipv4", "dst"); // ipv4, 32 bits
const V6 = field("ipv6", "dst"); // ipv6, 128 bits
const CNA = field("cna", "dst"); // uint, 32 bits

const exact = (value: bigint): Pattern => ({ kind: "exact", value });
const prefix = (value: bigint, len: number): Pattern => ({ kind: "prefix", value, len });
const ternary = (value: bigint, mask: bigint): Pattern => ({ kind: "ternary", value, mask });
const range = (lo: bigint, hi: bigint): Pattern => ({ kind: "range", lo, hi });

/** input → the pattern (undefined = wildcard), or { error } = a substring of problem + fix. */
type Case = [FieldDef, RawValue, Pattern | undefined | { error: string }];

const ALL_ONES_128 = (1n << 128n) - 1n;

const CASES: Case[] = [
  // mac
  [MAC, "02:00:00:00:0a:01", exact(0x02000000_0a01n)],
  [MAC, "02-00-00-00-0A-01", exact(0x02000000_0a01n)],
  [MAC, "ff:ff:ff:ff:ff:ff", exact(0xffff_ffff_ffffn)],
  [MAC, 0x02000000_0a01, exact(0x02000000_0a01n)],
  [MAC, "0x020000000a01", exact(0x02000000_0a01n)],
  [MAC, "02:00-00:00:0a:01", { error: "is not a MAC address" }],
  [MAC, "02:00:00:0a:01", { error: "six hex pairs" }],
  [MAC, "02:00:00:00:00:00/8", prefix(0x02000000_0000n, 8)],
  [MAC, "02:00:00:00:0a:01/24", { error: "did you mean 02:00:00:00:00:00/24?" }],
  [MAC, "02:00:00:00:00:00/49", { error: "prefix length 49 is longer than dst (48 bits)" }],
  [MAC, "01:00:00:00:00:00 &&& 01:00:00:00:00:00", ternary(0x01000000_0000n, 0x01000000_0000n)],
  [MAC, "03:00:00:00:00:00 &&& 01:00:00:00:00:00", { error: "did you mean 01:00:00:00:00:00 &&& 01:00:00:00:00:00?" }],
  [MAC, 0x1_0000_0000_0000, { error: "does not fit in dst (48 bits) (the largest value is ff:ff:ff:ff:ff:ff)" }],
  [MAC, "*", undefined],
  [MAC, " * ", undefined],
  // uint, 16 bits
  [TYPE, 2048, exact(2048n)],
  [TYPE, "2048", exact(2048n)],
  [TYPE, "0x0800", exact(2048n)],
  [TYPE, "0X0800", exact(2048n)],
  [TYPE, "0b100000000000", exact(2048n)],
  [TYPE, "0o4000", exact(2048n)],
  [TYPE, 0, exact(0n)],
  [TYPE, 65535, exact(65535n)],
  [TYPE, 65536, { error: "65536 does not fit in type (16 bits) (the largest value is 65535 (0xffff))" }],
  [TYPE, "0x10000", { error: "0x10000 does not fit in type (16 bits)" }],
  [TYPE, "0x0800 &&& 0xff00", ternary(0x0800n, 0xff00n)],
  [TYPE, "0x0801 &&& 0xff00", { error: "has value bits outside the mask (did you mean 0x0800 &&& 0xff00?)" }],
  [TYPE, "1 &&& 2 &&& 3", { error: "more than one '&&&'" }],
  [TYPE, "0x0800..0x08ff", range(0x0800n, 0x08ffn)],
  [TYPE, "5..5", range(5n, 5n)],
  [TYPE, "10..5", { error: "range 10..5 is empty (10 > 5) (write the smaller bound first: 5..10)" }],
  [TYPE, "0x0800/8", prefix(0x0800n, 8)],
  [TYPE, "0x0801/8", { error: "did you mean 0x0800/8?" }],
  [TYPE, "2049/15", { error: "did you mean 2048/15?" }],
  [TYPE, "0/0", prefix(0n, 0)],
  [TYPE, "1/x", { error: "'x' after '/' is not a prefix length" }],
  [TYPE, -1, { error: "-1 is negative" }],
  [TYPE, 1.5, { error: "1.5 is not an integer" }],
  [TYPE, "abc", { error: "'abc' is not an unsigned integer" }],
  // A decimal with leading zeros is read nowhere: 010 is 8 to some tools and 10 to others.
  [TYPE, "0", exact(0n)],
  [
    TYPE,
    "0800",
    {
      error:
        "'0800': leading zeros are ambiguous (octal to some tools) (write 800 " +
        "in decimal, or give the base: 0x…, 0o…, 0b…)",
    },
  ],
  [TYPE, "00001", { error: "'00001': leading zeros are ambiguous" }],
  [TYPE, "0800..0x0900", { error: "'0800': leading zeros are ambiguous" }],
  [
    TYPE,
    "0x0800/08",
    { error: "prefix length '08': leading zeros are ambiguous (octal to some tools) (write 0x0800/8)" },
  ],
  [TYPE, "0o4000", exact(0x0800n)],
  [TYPE, "0b0001", exact(1n)],
  [TYPE, "", { error: "is not an unsigned integer" }],
  // uint, 3 bits
  [PCP, 7, exact(7n)],
  [PCP, 8, { error: "the largest value is 7 (0x7)" }],
  [PCP, "0b111", exact(7n)],
  // uint, 32 bits (cna names)
  [CNA, "4294967295", exact(0xffff_ffffn)],
  [CNA, "4294967296", { error: "does not fit in dst (32 bits)" }],
  // ipv4
  [V4, "10.0.1.254", exact(0x0a0001fen)],
  [V4, "255.255.255.255", exact(0xffff_ffffn)],
  [V4, "0.0.0.0", exact(0n)],
  [V4, "10.0.0.0/8", prefix(0x0a000000n, 8)],
  [V4, "0.0.0.0/0", prefix(0n, 0)],
  [V4, "10.0.0.1/32", prefix(0x0a000001n, 32)],
  [V4, "10.0.0.1/8", { error: "10.0.0.1/8 has bits set after the first 8 (did you mean 10.0.0.0/8?)" }],
  [V4, "10.0.0.0/33", { error: "prefix length 33 is longer than dst (32 bits)" }],
  [V4, "10.0.0.1..10.0.0.9", range(0x0a000001n, 0x0a000009n)],
  [V4, "10.0.0.0 &&& 255.0.0.0", ternary(0x0a000000n, 0xff000000n)],
  [V4, "256.0.0.1", { error: "each part is 0..255" }],
  [V4, "10.0.0.01", { error: "leading zeros are ambiguous" }],
  [V4, "10.0.0", { error: "'10.0.0' is not an IPv4 address" }],
  [V4, 4294967296, { error: "the largest value is 255.255.255.255" }],
  // ipv6
  [V6, "2001:db8::1", exact(0x2001_0db8_0000_0000_0000_0000_0000_0001n)],
  [V6, "::", exact(0n)],
  [V6, "::1", exact(1n)],
  [V6, "1::", exact(1n << 112n)],
  [V6, "1:2:3:4:5:6:7:8", exact(0x0001_0002_0003_0004_0005_0006_0007_0008n)],
  [V6, "1:2:3:4:5:6:7::", exact(0x0001_0002_0003_0004_0005_0006_0007_0000n)],
  [V6, "::ffff:10.0.0.1", exact(0xffff_0a00_0001n)],
  [V6, "::1.2.3.4", exact(0x0102_0304n)],
  [V6, "FE80::ABCD", exact(0xfe80_0000_0000_0000_0000_0000_0000_abcdn)],
  [V6, "2001:db8::/32", prefix(0x2001_0db8n << 96n, 32)],
  [V6, "2001:db8::1/32", { error: "did you mean 2001:db8::/32?" }],
  [V6, "::/0", prefix(0n, 0)],
  [V6, "::/129", { error: "prefix length 129 is longer than dst (128 bits)" }],
  [V6, "1:2:3:4:5:6:7:8:9", { error: "is not an IPv6 address" }],
  [V6, "1:2:3:4:5:6:7", { error: "it needs eight groups" }],
  [V6, "1::2::3", { error: "'::' may appear once" }],
  [V6, "fe80::1%eth0", { error: "zone indices" }],
  [V6, "12345::", { error: "is not an IPv6 address" }],
  [V6, "::1.2.3", { error: "is not an IPv6 address" }],
  [V6, ALL_ONES_128, exact(ALL_ONES_128)],
  [V6, `0x${"f".repeat(32)}`, exact(ALL_ONES_128)],
  [
    V6,
    `0x1${"0".repeat(32)}`,
    { error: "does not fit in dst (128 bits) (the largest value is ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff)" },
  ],
];

describe("parsePattern", () => {
  test.each(CASES)("%s %s", (f, input, expected) => {
    const got = parsePattern(input, f);
    if (expected !== undefined && "error" in expected) {
      expect(got.ok).toBe(false);
      if (!got.ok) expect(`${got.problem} (${got.fix})`).toContain(expected.error);
    } else {
      expect(got).toEqual({ ok: true, value: expected });
    }
  });
});

describe("parseExact", () => {
  test.each<[FieldDef, RawValue, bigint | string]>([
    [V4, "10.0.0.1", 0x0a000001n],
    [V4, "10.0.0.0/8", "is a pattern"],
    [TYPE, "*", "is a pattern"],
    [TYPE, "1..2", "is a pattern"],
    [TYPE, "1 &&& 1", "is a pattern"],
    [TYPE, 0x0800, 0x0800n],
  ])("%s %s", (f, input, expected) => {
    const got = parseExact(input, f);
    if (typeof expected === "bigint") expect(got).toEqual({ ok: true, value: expected });
    else expect(got.ok ? "" : got.problem).toContain(expected);
  });
});

describe("formatValue is canonical", () => {
  test.each<[NameKind, string, string]>([
    ["mac", "02-00-00-00-0A-01", "02:00:00:00:0a:01"],
    ["ipv4", "10.0.1.254", "10.0.1.254"],
    ["ipv6", "2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"],
    ["ipv6", "2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"], // a single zero group is not compressed
    ["ipv6", "2001:0:0:1:0:0:0:1", "2001:0:0:1::1"], // the longest run
    ["ipv6", "1:0:0:2:0:0:3:4", "1::2:0:0:3:4"], // the first of equal runs
    ["ipv6", "::", "::"],
    ["ipv6", "::ffff:10.0.0.1", "::ffff:a00:1"],
    ["uint", "0x0800", "2048"],
  ])("%s %s → %s", (kind, text, canonical) => {
    const v = parseValue(text, kind);
    expect(v.ok).toBe(true);
    if (v.ok) expect(formatValue(v.value, kind)).toBe(canonical);
  });
});

describe("every value survives format → parse", () => {
  test.each<[NameKind, number]>([
    ["mac", 48],
    ["ipv4", 32],
    ["ipv6", 128],
    ["uint", 32],
  ])("%s", (kind, bits) => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << BigInt(bits)) - 1n }), (value) => {
        expect(parseValue(formatValue(value, kind), kind)).toEqual({ ok: true, value });
      }),
    );
  });
});
