// Open addressing, the mechanics every hashed index shares (keyed.ts,
// keyed-prefix.ts, tuple-space.ts): a power-of-two array of slots of
// 1 << shift bytes, each holding its entry + 1 at some byte (0: empty). An
// entry goes to its home slot or the first empty one after it; removal shifts
// the rest of the probe run back (no tombstones). There are at least twice as
// many slots as the table has entries with memory: an index re-makes them when
// the table grows (slotsFor).
//
// The record sits at the start of its index's record:
//
//   ┌──────────┬─────────────┬──────────┬───────────┐
//   │ at usize │ block usize │ mask u32 │ shift u32 │
//   └──────────┴─────────────┴──────────┴───────────┘

import { Table } from "../storage";

@unmanaged
export class Slots {
  /** Slot 0: 32-byte aligned within `block`, so that no slot straddles two cache lines. */
  at: usize;
  block: usize;
  /** Slots − 1. */
  mask: u32;
  /** log2 of a slot's bytes. */
  shift: u32;
}

/** A slot's home, from what it holds (a key, a group, a hash). */
export type Home = (t: Table, slot: usize) => u32;

/** Slots for `entries` entries: a power of two, at least twice as many, at least 16. */
export function slotsFor(entries: i32): u32 {
  const n = <u32>entries * 2 < 16 ? 16 : <u32>entries * 2;
  return 1 << (32 - clz(n - 1));
}

/** Whether `s` has fewer slots than `entries` entries want: the index must be re-made. */
export function tooFew(s: Slots, entries: i32): bool {
  return slotsFor(entries) > s.mask + 1;
}

/** Makes `s` empty, with slots of 1 << `shift` bytes for `entries` entries (the old ones freed). */
export function make(s: Slots, entries: i32, shift: u32): void {
  free(s);
  const n = slotsFor(entries);
  const bytes = (<usize>n) << shift;
  s.block = heap.alloc(bytes + 32);
  s.at = (s.block + 31) & ~(<usize>31);
  s.mask = n - 1;
  s.shift = shift;
  memory.fill(s.at, 0, bytes);
}

export function free(s: Slots): void {
  if (s.block != 0) heap.free(s.block);
  s.block = 0;
  s.at = 0;
}

@inline export function slotAt(s: Slots, i: u32): usize {
  return s.at + ((<usize>i) << s.shift);
}

/** The first empty slot from `home` on (there is one: at most half are full). */
export function emptyFrom(s: Slots, home: u32, entryOffset: usize): usize {
  let i = home;
  while (load<u32>(slotAt(s, i) + entryOffset) != 0) i = (i + 1) & s.mask;
  return slotAt(s, i);
}

/** The slot from `home` on that holds entry `e` (it is there). */
export function slotOf(s: Slots, home: u32, entryOffset: usize, e: i32): u32 {
  let i = home;
  while (load<u32>(slotAt(s, i) + entryOffset) != <u32>(e + 1)) i = (i + 1) & s.mask;
  return i;
}

/**
 * Empties slot `i` by backward-shift deletion: later slots of its probe run
 * are pulled back over the hole when that keeps them reachable from their home.
 */
export function shiftBack(t: Table, s: Slots, i: u32, entryOffset: usize, home: Home): void {
  const size = (<usize>1) << s.shift;
  let hole = i;
  let j = (i + 1) & s.mask;
  while (true) {
    const slot = slotAt(s, j);
    if (load<u32>(slot + entryOffset) == 0) break;
    const h = home(t, slot);
    // Movable iff its home is not cyclically within (hole, j].
    const inRange = hole <= j ? h > hole && h <= j : h > hole || h <= j;
    if (!inRange) {
      memory.copy(slotAt(s, hole), slot, size);
      hole = j;
    }
    j = (j + 1) & s.mask;
  }
  memory.fill(slotAt(s, hole), 0, size);
}

/** Mean distance of the entries from their home slots: 0 is perfect; a weak hash shows here first. */
export function meanDistance(t: Table, s: Slots, entryOffset: usize, home: Home): f64 {
  let total: u64 = 0;
  let n = 0;
  for (let i: u32 = 0; i <= s.mask; i++) {
    const slot = slotAt(s, i);
    if (load<u32>(slot + entryOffset) == 0) continue;
    total += <u64>((i - home(t, slot)) & s.mask);
    n++;
  }
  return n == 0 ? 0 : <f64>total / <f64>n;
}
