// Tuple-space search: the engine under exact, LPM, ternary and optional tables.
//
// Entries are grouped by mask. All groups share one open-addressing hash index
// keyed by (group, key & group mask). A lookup visits groups in order of their
// highest priority and probes each once; it stops when no later group could
// beat the best match so far. Exact tables have one group; LPM tables one per
// prefix length, ranked by that length, so the first hit is the longest prefix.
//
// A group:
//   ┌─────────────┬───────────┬──────────┬──────────┬──────────────┐
//   │ maxPrio i32 │ count i32 │ next i32 │ (pad)    │ mask[keyLen] │   GROUP_HEADER_LEN = 16
//   └─────────────┴───────────┴──────────┴──────────┴──────────────┘
// `maxPrio` only ever rises while the group lives: it stays an upper bound
// after removals, which is all the early stop needs.

import { hashMasked } from "./hash";
import { entryAt, Table, valueOf } from "./table";

export const GROUP_HEADER_LEN: i32 = 16;
const NO_GROUP: i32 = -1;

@inline function groupAt(t: Table, g: i32): usize {
  return t.groups + <usize>(g * t.groupSize);
}
@inline export function groupMask(t: Table, g: i32): usize {
  return groupAt(t, g) + GROUP_HEADER_LEN;
}
@inline function groupMaxPrio(t: Table, g: i32): i32 {
  return load<i32>(groupAt(t, g));
}
@inline export function orderAt(t: Table, k: i32): i32 {
  return load<i32>(t.order + (<usize>k << 2));
}

/** Whether key & mask equals `value` (stored masked) over `words` words. */
@inline export function equalMasked(key: usize, mask: usize, value: usize, words: i32): bool {
  for (let i = 0; i < words; i++) {
    const o = <usize>i << 3;
    if ((load<u64>(key + o) & load<u64>(mask + o)) != load<u64>(value + o)) return false;
  }
  return true;
}

function sameMask(t: Table, g: i32, mask: usize): bool {
  return memory.compare(groupMask(t, g), mask, <usize>t.keyLen) == 0;
}

function findGroup(t: Table, mask: usize): i32 {
  for (let k = 0; k < t.nOrder; k++) {
    const g = orderAt(t, k);
    if (sameMask(t, g, mask)) return g;
  }
  return NO_GROUP;
}

/** Moves group `g` to its place in the order: highest maxPrio first. */
function reorder(t: Table, g: i32): void {
  let k = 0;
  while (orderAt(t, k) != g) k++;
  const p = groupMaxPrio(t, g);
  while (k > 0 && groupMaxPrio(t, orderAt(t, k - 1)) < p) {
    store<i32>(t.order + (<usize>k << 2), orderAt(t, k - 1));
    k--;
  }
  store<i32>(t.order + (<usize>k << 2), g);
}

function newGroup(t: Table, mask: usize, prio: i32): i32 {
  let g: i32;
  if (t.groupFree >= 0) {
    g = t.groupFree;
    t.groupFree = load<i32>(groupAt(t, g), 8);
  } else {
    g = t.groupsUsed++;
  }
  const p = groupAt(t, g);
  store<i32>(p, prio);
  store<i32>(p, 0, 4);
  store<i32>(p, NO_GROUP, 8);
  memory.copy(groupMask(t, g), mask, <usize>t.keyLen);
  store<i32>(t.order + (<usize>t.nOrder << 2), g);
  t.nOrder++;
  reorder(t, g);
  return g;
}

function dropGroup(t: Table, g: i32): void {
  let k = 0;
  while (orderAt(t, k) != g) k++;
  for (; k + 1 < t.nOrder; k++) store<i32>(t.order + (<usize>k << 2), orderAt(t, k + 1));
  t.nOrder--;
  store<i32>(groupAt(t, g), t.groupFree, 8);
  t.groupFree = g;
}

/** Adds entry `i` (value, mask and rank written) to its group and the index. */
export function link(t: Table, i: i32): void {
  const e = entryAt(t, i);
  const mask = valueOf(t, e) + <usize>t.keyLen;
  let g = findGroup(t, mask);
  if (g == NO_GROUP) g = newGroup(t, mask, e.prio);
  const gp = groupAt(t, g);
  store<i32>(gp, load<i32>(gp, 4) + 1, 4);
  if (e.prio > load<i32>(gp)) {
    store<i32>(gp, e.prio);
    reorder(t, g);
  }
  e.group = g;
  e.hash = hashMasked(valueOf(t, e), mask, t.words, g);
  place(t, i);
}

/** Puts live entry `i` (its hash computed) into the index: on link, and when the index is re-made. */
export function place(t: Table, i: i32): void {
  const h = entryAt(t, i).hash;
  let s = h & t.slotMask;
  while (load<u32>(t.slots + (<usize>s << 3)) != 0) s = (s + 1) & t.slotMask;
  store<u32>(t.slots + (<usize>s << 3), <u32>(i + 1));
  store<u32>(t.slots + (<usize>s << 3), h, 4);
}

/** Removes entry `i` from the index (backward-shift deletion: no tombstones) and its group. */
export function unlink(t: Table, i: i32): void {
  const e = entryAt(t, i);
  let s = e.hash & t.slotMask;
  while (load<u32>(t.slots + (<usize>s << 3)) != <u32>(i + 1)) s = (s + 1) & t.slotMask;
  // Pull later members of the probe run back over the hole when that keeps them reachable.
  let hole = s;
  let j = (s + 1) & t.slotMask;
  while (true) {
    const occupant = load<u32>(t.slots + (<usize>j << 3));
    if (occupant == 0) break;
    const home = load<u32>(t.slots + (<usize>j << 3), 4) & t.slotMask;
    // Movable iff `home` is not cyclically within (hole, j].
    const inRange = hole <= j ? home > hole && home <= j : home > hole || home <= j;
    if (!inRange) {
      store<u64>(t.slots + (<usize>hole << 3), load<u64>(t.slots + (<usize>j << 3)));
      hole = j;
    }
    j = (j + 1) & t.slotMask;
  }
  store<u64>(t.slots + (<usize>hole << 3), 0);
  const gp = groupAt(t, e.group);
  const left = load<i32>(gp, 4) - 1;
  store<i32>(gp, left, 4);
  if (left == 0) dropGroup(t, e.group);
}

/** Mean distance of the entries from their home slots: 0 is perfect; a weak hash shows here first. */
export function meanProbeDistance(t: Table): f64 {
  let total: u64 = 0;
  let n = 0;
  for (let s: u32 = 0; s <= t.slotMask; s++) {
    if (load<u32>(t.slots + (<usize>s << 3)) == 0) continue;
    const home = load<u32>(t.slots + (<usize>s << 3), 4) & t.slotMask;
    total += <u64>((s - home) & t.slotMask);
    n++;
  }
  return n == 0 ? 0 : <f64>total / <f64>n;
}

/** The entry with exactly this value, mask and rank, or -1. */
export function find(t: Table, value: usize, mask: usize, rank: i32): i32 {
  const g = findGroup(t, mask);
  if (g == NO_GROUP) return -1;
  const h = hashMasked(value, mask, t.words, g);
  let s = h & t.slotMask;
  while (true) {
    const occupant = load<u32>(t.slots + (<usize>s << 3));
    if (occupant == 0) return -1;
    if (load<u32>(t.slots + (<usize>s << 3), 4) == h) {
      const i = <i32>occupant - 1;
      const e = entryAt(t, i);
      if (e.group == g && e.prio == rank && equalMasked(value, mask, valueOf(t, e), t.words)) return i;
    }
    s = (s + 1) & t.slotMask;
  }
}

/** The best entry for `key`: highest rank, then smallest index. */
export function lookup(t: Table, key: usize): i32 {
  let best = -1;
  let bestPrio = i32.MIN_VALUE;
  for (let k = 0; k < t.nOrder; k++) {
    const g = orderAt(t, k);
    if (groupMaxPrio(t, g) < bestPrio) break;
    const mask = groupMask(t, g);
    const h = hashMasked(key, mask, t.words, g);
    let s = h & t.slotMask;
    while (true) {
      const occupant = load<u32>(t.slots + (<usize>s << 3));
      if (occupant == 0) break;
      if (load<u32>(t.slots + (<usize>s << 3), 4) == h) {
        const i = <i32>occupant - 1;
        const e = entryAt(t, i);
        if (e.group == g && equalMasked(key, mask, valueOf(t, e), t.words)) {
          if (e.prio > bestPrio || (e.prio == bestPrio && i < best)) {
            best = i;
            bestPrio = e.prio;
          }
        }
      }
      s = (s + 1) & t.slotMask;
    }
  }
  return best;
}

/**
 * Exact tables (one group) and LPM tables (groups are prefix lengths, longest
 * first): a group holds one entry per masked key, so the first entry that
 * matches is the answer.
 */
export function lookupFirst(t: Table, key: usize): i32 {
  const words = t.words;
  for (let k = 0; k < t.nOrder; k++) {
    const g = orderAt(t, k);
    const mask = groupMask(t, g);
    const h = hashMasked(key, mask, words, g);
    let s = h & t.slotMask;
    while (true) {
      const slot = t.slots + (<usize>s << 3);
      const occupant = load<u32>(slot);
      if (occupant == 0) break;
      if (load<u32>(slot, 4) == h) {
        const i = <i32>occupant - 1;
        const e = entryAt(t, i);
        if (e.group == g && equalMasked(key, mask, valueOf(t, e), words)) return i;
      }
      s = (s + 1) & t.slotMask;
    }
  }
  return -1;
}


