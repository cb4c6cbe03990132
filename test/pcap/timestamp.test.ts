// Timestamp units <-> (sec, nsec) against BigInt arithmetic, for every kind of resolution.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TsConverter, tsResolCode, tsResolution, unitsFromTs, unitsHi, unitsLo } from "../../src/pcap/timestamp.js";

const U64 = 2n ** 64n - 1n;

function reference(ts: bigint, code: number): string {
  const units = code & 0x80 ? 2n ** BigInt(code & 0x7f) : 10n ** BigInt(code);
  return String((ts * 1_000_000_000n) / units);
}

const sec = new Float64Array(3);
const nsec = new Uint32Array(3);

/** Through TsConverter.store, at a non-zero index with the neighbours watched. */
function split(ts: bigint, code: number): [number, number] {
  sec.fill(-1);
  nsec.fill(0xa5a5a5a5);
  new TsConverter(code).store(Number(ts >> 32n), Number(ts & 0xffffffffn), 0, sec, nsec, 1);
  expect([sec[0], sec[2], nsec[0], nsec[2]]).toEqual([-1, -1, 0xa5a5a5a5, 0xa5a5a5a5]);
  return [sec[1] ?? -1, nsec[1] ?? -1];
}

function convert(ts: bigint, code: number): string {
  const [s, ns] = split(ts, code);
  expect(ns).toBeLessThan(1e9);
  return String(BigInt(s) * 1_000_000_000n + BigInt(ns));
}

const CODES = [
  { name: "10^-6 (default)", code: 6 },
  { name: "10^-9", code: 9 },
  { name: "10^-3", code: 3 },
  { name: "10^0", code: 0 },
  { name: "10^-12 (truncated to ns)", code: 12 },
  { name: "10^-19", code: 19 },
  { name: "2^-10", code: 0x80 | 10 },
  { name: "2^-20", code: 0x80 | 20 },
  { name: "2^-30", code: 0x80 | 30 },
  { name: "2^-32", code: 0x80 | 32 },
  { name: "2^-40", code: 0x80 | 40 },
  { name: "2^-64", code: 0x80 | 64 },
];

describe("TsConverter", () => {
  it.each(CODES)("splits u64 timestamps exactly at $name", ({ code }) => {
    // Edges, then today's values, then anything: seconds must stay below 2^53 to be exact.
    const units = code & 0x80 ? 2n ** BigInt(code & 0x7f) : 10n ** BigInt(code);
    const maxTs = 2n ** 53n * units - 1n < U64 ? 2n ** 53n * units - 1n : U64;
    for (const ts of [0n, 1n, 999_999n, 1_000_000n, 1_700_000_000_123_456_789n % (maxTs + 1n), maxTs]) {
      expect(convert(ts, code)).toBe(reference(ts, code));
    }
    // Below 2^53 units (the one-division path), then the whole range.
    for (const max of [2n ** 53n - 1n, maxTs]) {
      fc.assert(
        fc.property(fc.bigInt({ min: 0n, max }), (ts) => convert(ts, code) === reference(ts, code)),
        { numRuns: 300 },
      );
    }
  });
});

describe("unitsFromTs", () => {
  const WRITABLE = [0, 3, 6, 9, 0x80 | 1, 0x80 | 10, 0x80 | 20, 0x80 | 29];
  it.each(WRITABLE)("inverts TsConverter for if_tsresol 0x%s", (code) => {
    const res = tsResolution(code);
    const max =
      code & 0x80 ? 2n ** BigInt(Math.min(64, 53 + (code & 0x7f))) - 1n : 2n ** 53n * BigInt(res.unitsPerSec) - 1n;
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: max > U64 ? U64 : max }), (ts) => {
        const [s, ns] = split(ts, code);
        unitsFromTs(s, ns, res);
        return ((BigInt(unitsHi) << 32n) | BigInt(unitsLo)) === ts;
      }),
      { numRuns: 300 },
    );
  });

  // Decimal units: the floor. Binary units: the unit that reads back as exactly this ns, else the floor.
  it.each(WRITABLE)("rounds any nanosecond down to the unit for if_tsresol 0x%s", (code) => {
    const res = tsResolution(code);
    const units = code & 0x80 ? 2n ** BigInt(code & 0x7f) : 10n ** BigInt(code);
    const readBack = (ts: bigint): bigint => (ts * 1_000_000_000n) / units;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.integer({ min: 0, max: 999_999_999 }), (sec, nsec) => {
        unitsFromTs(sec, nsec, res);
        const ts = (BigInt(unitsHi) << 32n) | BigInt(unitsLo);
        const ns = BigInt(sec) * 1_000_000_000n + BigInt(nsec);
        const floor = (ns * units) / 1_000_000_000n;
        if (readBack(ts) === ns) return ts === floor || ts === floor + 1n;
        return ts === floor && readBack(floor + 1n) !== ns;
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    { name: "finer than ns (10^-10)", code: 10 },
    { name: "finer than ns (2^-30)", code: 0x80 | 30 },
  ])("refuses a resolution $name", ({ code }) => {
    expect(() => unitsFromTs(0, 0, tsResolution(code))).toThrow(RangeError);
  });

  it("refuses seconds that are negative or not whole", () => {
    expect(() => unitsFromTs(-1, 0, tsResolution(6))).toThrow(RangeError);
    expect(() => unitsFromTs(1.5, 0, tsResolution(6))).toThrow(RangeError);
  });
});

describe("tsResolCode", () => {
  it.each([
    { units: 1e6, code: 6 },
    { units: 1e9, code: 9 },
    { units: 1, code: 0 },
    { units: 1024, code: 0x80 | 10 },
    { units: 3, code: undefined },
  ])("$units units/s is if_tsresol $code", ({ units, code }) => {
    expect(tsResolCode(units)).toBe(code);
  });
});
