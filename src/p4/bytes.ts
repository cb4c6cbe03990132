// P4Runtime bytestrings (P4Runtime spec §8.4, "Bytestrings"): values of bit<W>
// go over the wire big-endian in the shortest string that holds them — no
// leading zero bytes — and 0 is one zero byte (it needs one bit). Servers
// accept longer zero-padded strings too, but only the canonical form keeps
// read-write symmetry, so that is what strata writes and what its tests demand.

/** The canonical bytestring of an unsigned value. */
export function canonical(value: bigint): Uint8Array {
  if (value < 0n) throw new Error(`bytestring of a negative value ${value}`);
  const bytes: number[] = [];
  let v = value;
  do {
    bytes.unshift(Number(v & 0xffn));
    v >>= 8n;
  } while (v > 0n);
  return Uint8Array.from(bytes);
}

/** The value of a bytestring (big-endian). */
export function valueOf(bytes: Uint8Array): bigint {
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return v;
}

/**
 * A bytestring's canonical form (a copy, leading zero bytes dropped), or undefined when it is
 * empty or its value needs more than `bits` bits: the check a server makes of every value it takes.
 */
export function canonicalOf(bytes: Uint8Array, bits: number): Uint8Array | undefined {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  if (bytes.length === 0) return undefined;
  const lead = bytes[start] ?? 0;
  const used = (bytes.length - start - 1) * 8 + (lead === 0 ? 0 : 32 - Math.clz32(lead));
  return used > bits ? undefined : new Uint8Array(bytes.subarray(start));
}

/** Whether a bytestring is canonical: not empty, and no leading zero byte unless it is the single byte of 0. */
export function isCanonical(bytes: Uint8Array): boolean {
  return bytes.length === 1 || (bytes.length > 1 && bytes[0] !== 0);
}

export const base64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString("base64");
export const fromBase64 = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, "base64"));

/** A field's value in `len` big-endian bytes at `offset` of a key vector. */
export function readBig(bytes: Uint8Array, offset: number, len: number): bigint {
  let v = 0n;
  for (let i = 0; i < len; i++) v = (v << 8n) | BigInt(bytes[offset + i] ?? 0);
  return v;
}

export function writeBig(bytes: Uint8Array, offset: number, len: number, value: bigint): void {
  let v = value;
  for (let i = len - 1; i >= 0; i--) {
    bytes[offset + i] = Number(v & 0xffn);
    v >>= 8n;
  }
}

export const ones = (bits: number): bigint => (1n << BigInt(bits)) - 1n;

// Key vectors byte by byte (no bigint: a P4Runtime server translates every entry it takes).

/** ORs a bytestring's value, right-aligned, into the `len` bytes at `offset` (its leading bytes past `len` are dropped,
 * as writeBig drops them). */
export function orBytes(into: Uint8Array, offset: number, len: number, bytes: Uint8Array): void {
  const n = Math.min(bytes.length, len);
  const from = bytes.length - n;
  const at = offset + len - n;
  for (let i = 0; i < n; i++) into[at + i] = (into[at + i] ?? 0) | (bytes[from + i] ?? 0);
}

/** Sets the top `count` bits of the `len` big-endian bytes at `offset`. */
export function setHighBits(into: Uint8Array, offset: number, len: number, count: number): void {
  for (let i = 0; i < len; i++) {
    const here = Math.max(0, Math.min(8, count - 8 * i));
    into[offset + i] = (into[offset + i] ?? 0) | ((0xff << (8 - here)) & 0xff);
  }
}

/** Sets the low `count` bits of the `len` big-endian bytes at `offset`. */
export function setLowBits(into: Uint8Array, offset: number, len: number, count: number): void {
  for (let i = 0; i < len; i++) {
    const here = Math.max(0, Math.min(8, count - 8 * (len - 1 - i)));
    into[offset + i] = (into[offset + i] ?? 0) | ((1 << here) - 1);
  }
}

/** The prefix length of an LPM mask, or −1 if the mask is not a prefix. */
export function prefixLength(mask: bigint, bits: number): number {
  const host = ones(bits) ^ mask;
  if ((host & (host + 1n)) !== 0n) return -1;
  return bits - host.toString(2).replace(/^0+$/, "").length;
}
