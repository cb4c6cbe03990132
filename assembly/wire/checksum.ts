// The Internet checksum (RFC 1071): the ones' complement of the ones' complement
// sum of 16-bit big-endian words, an odd last byte padded with zero.

import { getU16, getU8 } from "./bytes";

/** Ones' complement sum of `len` bytes at `p`, folded to 16 bits, added to `initial`. */
export function onesSum(p: usize, len: i32, initial: u32): u32 {
  let sum: u64 = <u64>initial;
  let i = 0;
  // Four bytes at a time: a u64 accumulator cannot overflow for any packet length.
  for (; i + 4 <= len; i += 4) sum += <u64>bswap<u32>(load<u32>(p + i));
  if (i + 2 <= len) {
    sum += <u64>getU16(p + i);
    i += 2;
  }
  if (i < len) sum += (<u64>getU8(p + i)) << 8;
  // Fold to 16 bits: 2^16 ≡ 1 (mod 0xffff), so a word's position in the sum does not matter.
  sum = (sum & 0xffffffff) + (sum >> 32);
  sum = (sum & 0xffffffff) + (sum >> 32);
  let s = <u32>sum;
  s = (s & 0xffff) + (s >>> 16);
  s = (s & 0xffff) + (s >>> 16);
  return s;
}

/** The checksum field value for `len` bytes at `p`. */
export function checksum(p: usize, len: i32): u32 {
  return ~onesSum(p, len, 0) & 0xffff;
}
