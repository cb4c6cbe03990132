// Key bytes: masks, prefixes and comparisons, over `keyLen` bytes or one
// field's. Keys are a multiple of 8 bytes long, so whole words are compared.

import { Table } from "./storage";

/** Whether every bit set in `a` (keyLen bytes) is also set in `b`. */
export function maskWithin(a: usize, b: usize, keyLen: i32): bool {
  for (let i = 0; i < keyLen; i += 8) {
    const x = load<u64>(a + <usize>i);
    if ((x & load<u64>(b + <usize>i)) != x) return false;
  }
  return true;
}

/** Whether key & mask equals `value` (stored masked) over `words` words. */
@inline export function equalMasked(key: usize, mask: usize, value: usize, words: i32): bool {
  for (let i = 0; i < words; i++) {
    const o = (<usize>i) << 3;
    if ((load<u64>(key + o) & load<u64>(mask + o)) != load<u64>(value + o)) return false;
  }
  return true;
}

/** Whether mask bytes [off, off+len) are all 0xff (1), all 0x00 (0) — "exact or absent" — or neither (−1). */
export function fieldAllOrNothing(m: usize, off: i32, len: i32): i32 {
  const first = load<u8>(m + <usize>off);
  if (first != 0 && first != 0xff) return -1;
  for (let i = 1; i < len; i++) if (load<u8>(m + <usize>(off + i)) != first) return -1;
  return first == 0xff ? 1 : 0;
}

/** The prefix length of the mask bytes [off, off+len), or -1 if they are not a prefix mask. */
export function prefixLen(m: usize, off: i32, len: i32): i32 {
  let bits = 0;
  let i = 0;
  while (i < len && load<u8>(m + <usize>(off + i)) == 0xff) {
    bits += 8;
    i++;
  }
  if (i < len) {
    const b = <u32>load<u8>(m + <usize>(off + i));
    const ones = clz<u32>(~(b << 24));
    if (((b << ones) & 0xff) != 0) return -1; // ones not contiguous from the top
    bits += ones;
    i++;
    for (; i < len; i++) if (load<u8>(m + <usize>(off + i)) != 0) return -1;
  }
  return bits;
}

/** Big-endian comparison of `len` bytes. */
export function compareBytes(a: usize, b: usize, len: i32): i32 {
  for (let i = 0; i < len; i++) {
    const x = load<u8>(a + <usize>i);
    const y = load<u8>(b + <usize>i);
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

/** Whether `mask` is the table's: every declared field given in full. */
export function isTableMask(t: Table, mask: usize): bool {
  return memory.compare(mask, t.mask, <usize>t.keyLen) == 0;
}

/** What every match kind requires of an entry: its mask within the table's fields, no value bit outside its mask. */
export function withinFields(t: Table, value: usize, mask: usize): bool {
  return maskWithin(mask, t.mask, t.keyLen) && maskWithin(value, mask, t.keyLen);
}
