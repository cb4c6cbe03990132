// The check summary.json records of every file a run writes beside it (src/engine/digests.ts
// checks it on read): zlib's CRC-32, kept running as the bytes are written. It guards against
// accidents — a trace edited by hand, a recording swapped for another capture, a file cut
// short — not against someone who edits summary.json too, so a cryptographic hash would buy
// nothing here; CRC-32 costs less than half of SHA-256's time on the recordings' path (docs/cli.md).

import { crc32 } from "node:zlib";

/** A CRC-32 of the bytes given so far. */
export class RunningCrc {
  #crc = 0;

  update(bytes: Uint8Array): void {
    this.#crc = crc32(bytes, this.#crc);
  }

  /** As update() with `len` bytes whose own CRC-32 is `crc`, without them (worked out where they were made). */
  append(crc: number, len: number): void {
    this.#crc = crc32Combine(this.#crc, crc, len);
  }

  /** As summary.json writes it: 8 lowercase hex digits. */
  hex(): string {
    return crcHex(this.#crc);
  }
}

export const crcHex = (crc: number): string => (crc >>> 0).toString(16).padStart(8, "0");

// CRC-32 of two spans put together from theirs (zlib's crc32_combine): appending `len` bytes to a span multiplies its
// CRC by x^(8·len) modulo the polynomial; the powers x^(2^k) are a table.
const POLY = 0xedb88320;
const X_ONE = 0x80000000; // x^0, bit-reflected

/** a·b modulo the CRC-32 polynomial (a ≠ 0), bit-reflected. */
function multModP(a: number, b: number): number {
  let m = X_ONE;
  let p = 0;
  let x = b >>> 0;
  for (;;) {
    if ((a & m) !== 0) {
      p ^= x;
      if ((a & (m - 1)) === 0) break;
    }
    m >>>= 1;
    x = (x & 1) !== 0 ? (x >>> 1) ^ POLY : x >>> 1;
  }
  return p >>> 0;
}

/** x^(2^k) modulo the polynomial, k = 0 … 31 (then they repeat). */
const X2N = ((): Uint32Array => {
  const table = new Uint32Array(32);
  let p = X_ONE >>> 1; // x^1
  table[0] = p;
  for (let k = 1; k < 32; k++) table[k] = p = multModP(p, p);
  return table;
})();

/** The CRC-32 of span A then span B, from A's CRC, B's and B's length in bytes. */
export function crc32Combine(crcA: number, crcB: number, lenB: number): number {
  let p = X_ONE;
  // x^(8·lenB): the bits of lenB from k = 3.
  for (let n = lenB, k = 3; n > 0; n = Math.floor(n / 2), k++) if (n % 2 === 1) p = multModP(X2N[k & 31] ?? 0, p);
  return (multModP(p, crcA) ^ crcB) >>> 0;
}
