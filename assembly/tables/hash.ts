// The hash, written once: every hashed index (tuple-space.ts, keyed.ts) and
// the flow hash of an anycast link (pipeline/effects.ts) are made of these.
//
// A multiply only carries entropy upward, and keys often vary in their high
// bytes only (a MAC's last bytes sit at the top of a little-endian word): each
// word's high half is folded onto its low half (an invertible step) before the
// multiply, each product is folded down before the next, and the hash comes
// from the well-mixed high half. (Without the first fold, 1,024 MACs that
// differ in their last two bytes probed 11.7 slots past home on average.)

const M1: u64 = 0x9e3779b97f4a7c15;
const M2: u64 = 0xff51afd7ed558ccd;

/** Where a hash salted with `salt` (a group, or 0) starts. */
@inline export function seed(salt: i32): u64 {
  return <u64>(salt + 1) * M1;
}

/** One round: word `w` folded into `h`. */
@inline export function round(h: u64, w: u64): u64 {
  const m = (h ^ w ^ (w >> 32)) * M1;
  return m ^ (m >> 29);
}

/** The hash of the rounds so far. */
@inline export function finish(h: u64): u32 {
  return <u32>((h * M2) >> 32);
}

/** Hash of (key & mask) over `words` u64 words, salted with `salt`. */
@inline export function hashMasked(key: usize, mask: usize, words: i32, salt: i32): u32 {
  let h = seed(salt);
  for (let i = 0; i < words; i++) {
    const o = (<usize>i) << 3;
    h = round(h, load<u64>(key + o) & load<u64>(mask + o));
  }
  return finish(h);
}
