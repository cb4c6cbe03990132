// The hop-limit field (IPv4 TTL, IPv6 hop limit, the outer TTL of gre and
// vxlan, the MPLS TTL) is the one field forwarding changes (`ttl: decrement`).
// A header class therefore keeps it apart from the other fields: as the set of
// its 256 values, one bit each of a bigint, so that forwarding is a shift
// (every value one lower) and expiry is the values 0 and 1 falling off. A
// design without a hop-limit field has one value: the set is 1n.

import type { Pattern } from "../description/types.js";

/** Every value of an 8-bit hop-limit field. */
export const ALL_HOPS = (1n << 256n) - 1n;
/** The hop "set" of a design without a hop-limit field. */
export const NO_HOPS = 1n;
/** Values forwarding drops as ttl-expired: 0 and 1. */
const EXPIRING = 3n;

/** The values of a `bits`-wide hop-limit field a pattern matches (no pattern: all). */
export function hopsOf(p: Pattern | undefined, bits = 8): bigint {
  if (p === undefined) return ALL_HOPS;
  let mask = 0n;
  const width = BigInt(bits);
  for (let v = 0n; v < 1n << width; v++) {
    const holds =
      p.kind === "exact"
        ? v === p.value
        : p.kind === "prefix"
          ? v >> (width - BigInt(p.len)) === p.value >> (width - BigInt(p.len))
          : p.kind === "ternary"
            ? (v & p.mask) === p.value
            : p.lo <= v && v <= p.hi;
    if (holds) mask |= 1n << v;
  }
  return mask;
}

/** The set holding one value. */
export const oneHop = (v: bigint | number): bigint => 1n << BigInt(v);

/** Forwarding's side effect on a set: the values that go on (each one lower), and those dropped as expired. */
export function decrement(hops: bigint): { readonly next: bigint; readonly expired: bigint } {
  // A walk lowers the same few sets over and over (a leaf's, then a spine's, in turn): their answers are kept, as
  // 256-bit arithmetic allocates.
  let known = decremented.get(hops);
  if (known === undefined) {
    if (decremented.size >= DECREMENTS_KEPT) decremented.clear();
    known = { next: (hops & ~EXPIRING) >> 1n, expired: hops & EXPIRING };
    decremented.set(hops, known);
  }
  return known;
}

/** decrement()'s answers, by set (a map's keys compare numbers by value), at most DECREMENTS_KEPT of them. */
const decremented = new Map<bigint, { readonly next: bigint; readonly expired: bigint }>();
const DECREMENTS_KEPT = 64;

/** The values as they were `times` decrements ago (each `times` higher). */
export function undecrement(hops: bigint, times: number): bigint {
  return times === 0 ? hops : (hops << BigInt(times)) & ALL_HOPS;
}

/** Some value of the set, preferring `prefer` (the usual default TTL): the witness of a class. */
export function someHop(hops: bigint, prefer = 64): number {
  if ((hops >> BigInt(prefer)) & 1n) return prefer;
  for (let v = 255; v >= 0; v--) if ((hops >> BigInt(v)) & 1n) return v;
  return -1;
}

/** The set as ranges of values: [[2, 255]], [[64, 64]], … */
export function hopRanges(hops: bigint): [number, number][] {
  const out: [number, number][] = [];
  let start = -1;
  for (let v = 0; v <= 256; v++) {
    const on = v < 256 && ((hops >> BigInt(v)) & 1n) === 1n;
    if (on && start < 0) start = v;
    if (!on && start >= 0) {
      out.push([start, v - 1]);
      start = -1;
    }
  }
  return out;
}

/** How a class's hop values read: "" for all of them, else "ttl=64", "ttl=2..255", "ttl=1|3..9". */
export function formatHops(hops: bigint, field: string | undefined): string {
  if (field === undefined || hops === ALL_HOPS) return "";
  const parts = hopRanges(hops).map(([a, b]) => (a === b ? `${a}` : `${a}..${b}`));
  return `${field}=${parts.length === 0 ? "none" : parts.join("|")}`;
}

/** The number of values in a set. */
export function hopCount(hops: bigint): number {
  let n = 0;
  for (let h = hops; h > 0n; h &= h - 1n) n++;
  return n;
}
