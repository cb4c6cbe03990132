// Canonical bytestrings (P4Runtime spec §8.4), LPM prefix lengths and id allocation.

import { describe, expect, it } from "vitest";
import {
  canonical,
  canonicalOf,
  isCanonical,
  ones,
  orBytes,
  prefixLength,
  readBig,
  setHighBits,
  setLowBits,
  valueOf,
} from "../../src/p4/bytes.js";
import { allocateIds, idKind } from "../../src/p4/ids.js";

describe("canonical bytestrings", () => {
  it.each([
    [0n, "00"],
    [1n, "01"],
    [0x63n, "63"],
    [0xffn, "ff"],
    [0x100n, "0100"],
    [0x0800n, "0800"],
    [0xffff_ffff_ffffn, "ffffffffffff"],
    [0x0200_0000_0a01n, "020000000a01"],
    [(1n << 128n) - 1n, "ff".repeat(16)],
  ])("%s is %s", (v, hex) => {
    expect(Buffer.from(canonical(v)).toString("hex")).toBe(hex);
    expect(valueOf(canonical(v))).toBe(v);
    expect(isCanonical(canonical(v))).toBe(true);
  });

  it.each([
    ["", false, "empty: the server rejects it"],
    ["00", true, "zero is one zero byte"],
    ["0000", false, "a zero byte too many"],
    ["0063", false, "a leading zero byte (bit<16> 99 sent padded)"],
    ["63", true, ""],
    ["8000", true, ""],
  ])("%s canonical: %s (%s)", (hex, ok) => {
    expect(isCanonical(Uint8Array.from(Buffer.from(hex, "hex")))).toBe(ok);
  });
});

describe("a server's check of a bytestring (canonicalOf)", () => {
  it.each([
    ["00", 1, "00"],
    ["0000", 9, "00"],
    ["0063", 16, "63"],
    ["01ff", 9, "01ff"],
    ["01ff", 8, undefined],
    ["0200", 9, undefined],
    ["000000ff", 8, "ff"],
    ["", 8, undefined],
  ])("%s as bit<%s>: %s", (hex, bits, want) => {
    const got = canonicalOf(Uint8Array.from(Buffer.from(hex, "hex")), bits);
    expect(got === undefined ? undefined : Buffer.from(got).toString("hex")).toBe(want);
  });
});

describe("key vectors byte by byte", () => {
  // Each against the bigint it replaces, in a 4-byte field at offset 2 of an 8-byte key; the bytes around the field
  // (0xa5) do not change.
  const field = (fn: (b: Uint8Array) => void): Uint8Array => {
    const b = new Uint8Array(8);
    fn(b);
    return b;
  };
  it.each([0, 1, 7, 8, 9, 20, 31, 32])("setHighBits(%s) and setLowBits(%s) of 32 bits", (n) => {
    expect(
      readBig(
        field((b) => setHighBits(b, 2, 4, n)),
        2,
        4,
      ),
    ).toBe(ones(32) ^ ones(32 - n));
    expect(
      readBig(
        field((b) => setLowBits(b, 2, 4, n)),
        2,
        4,
      ),
    ).toBe(ones(n));
    const around = field((b) => {
      b.fill(0xa5);
      b.fill(0, 2, 6);
      setHighBits(b, 2, 4, n);
    });
    expect([around[0], around[1], around[6], around[7]]).toEqual([0xa5, 0xa5, 0xa5, 0xa5]);
  });
  it.each([
    ["0a01", "00000a01"],
    ["0a000001", "0a000001"],
    ["000a000001", "0a000001"],
  ])("orBytes(%s) right-aligned: %s", (hex, want) => {
    expect(
      Buffer.from(field((b) => orBytes(b, 2, 4, Uint8Array.from(Buffer.from(hex, "hex")))).subarray(2, 6)).toString(
        "hex",
      ),
    ).toBe(want);
  });
});

describe("LPM prefix lengths", () => {
  it.each([
    [0n, 32, 0],
    [0xffffff00n, 32, 24],
    [0xffffffffn, 32, 32],
    [0x80000000n, 32, 1],
    [0xff00ff00n, 32, -1],
    [0x0fffffffn, 32, -1],
  ])("mask %s of %s bits: /%s", (mask, bits, len) => {
    expect(prefixLength(mask, bits)).toBe(len);
  });
});

describe("P4Info ids", () => {
  it("carry the resource type in the top byte and are unique, stable and never 0 in the low bits", () => {
    const names = Array.from({ length: 2000 }, (_, i) => `StrataIngress.t${i}`);
    const a = allocateIds("table", names);
    const b = allocateIds("table", [...names].reverse());
    expect(a).toEqual(b);
    const ids = [...a.values()];
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) {
      expect(id >>> 24).toBe(0x02);
      expect(id & 0xffffff).not.toBe(0);
      expect(idKind(id)).toBe("table");
    }
  });

  it("moves a colliding name to the next free id", () => {
    const first = allocateIds("action", ["StrataIngress.a"]).get("StrataIngress.a") ?? 0;
    const moved = allocateIds("action", ["StrataIngress.a"], new Set([first])).get("StrataIngress.a") ?? 0;
    expect(moved).toBe(first + 1);
  });

  it.each([
    ["action", 0x01],
    ["table", 0x02],
    ["controllerHeader", 0x04],
    ["actionProfile", 0x11],
  ] as const)("%s ids start with 0x%s", (kind, prefix) => {
    expect((allocateIds(kind, ["x"]).get("x") ?? 0) >>> 24).toBe(prefix);
  });
});
