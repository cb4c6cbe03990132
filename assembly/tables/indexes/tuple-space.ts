// Tuple-space search: the index of ternary and optional tables, and of exact
// and LPM tables whose keys are too wide for a keyed index (keyed.ts,
// keyed-prefix.ts).
//
// Entries are grouped by mask (groups.ts). All groups share one
// open-addressing index (slots.ts) keyed by (group, key & group mask), whose
// 8-byte slots hold the entry and its hash (also kept in the entry, `hash`):
//
//   ┌─────────────────┬────────────┐
//   │ entry + 1 : u32 │ hash : u32 │
//   └─────────────────┴────────────┘
//
// A lookup visits the groups in rank order and probes each once; reading a
// slot, then the entry to compare the key. lookupBest (ternary, optional)
// stops when no later group could beat the best match so far; lookupFirst
// (exact: one group; LPM: a group per prefix length, longest first) takes the
// first match, since a group there holds one entry per masked key.

import { Hit, hit, MISS } from "../action";
import { hashMasked } from "../hash";
import { equalMasked } from "../keys";
import { entryAt, isLive, maskOf, Table, valueOf } from "../storage";
import { Index } from "./interface";
import { findGroup, groupedOf, groupMask, groupMaxPrio, Grouped, join, leave, NO_GROUP, orderAt } from "./groups";
import * as groups from "./groups";
import { emptyFrom, meanDistance, shiftBack, slotAt, slotOf, tooFew } from "./slots";
import * as slots from "./slots";

export const RECORD_LEN: usize = offsetof<Grouped>();
const SLOT_SHIFT: u32 = 3;
const SLOT_HASH: usize = 4;

export function make(t: Table): void {
  groups.make(t, SLOT_SHIFT);
}

/** Entry `i`'s slot, from the hash it keeps. */
function put(t: Table, i: i32): void {
  const r = groupedOf(t);
  const h = entryAt(t, i).hash;
  const slot = emptyFrom(r, h & r.mask, 0);
  store<u32>(slot, <u32>(i + 1));
  store<u32>(slot, h, SLOT_HASH);
}

/** The table grew: more slots, every live entry put again. */
export function grown(t: Table): void {
  if (!tooFew(groupedOf(t), t.allocated)) return;
  slots.make(groupedOf(t), t.allocated, SLOT_SHIFT);
  for (let i = 0; i < t.allocated; i++) if (isLive(t, i)) put(t, i);
}

export function place(t: Table, i: i32): void {
  const e = entryAt(t, i);
  const mask = maskOf(t, e);
  const g = join(t, groupedOf(t), mask, e.prio);
  e.group = g;
  e.hash = hashMasked(valueOf(t, e), mask, t.words, g);
  put(t, i);
}

function slotHome(t: Table, slot: usize): u32 {
  return load<u32>(slot, SLOT_HASH) & groupedOf(t).mask;
}

export function unplace(t: Table, i: i32): void {
  const r = groupedOf(t);
  const e = entryAt(t, i);
  shiftBack(t, r, slotOf(r, e.hash & r.mask, 0, i), 0, slotHome);
  leave(r, e.group);
}

/** This index holds no actions. */
export function actionSet(t: Table, i: i32): void {}

export function probeDistance(t: Table): f64 {
  return meanDistance(t, groupedOf(t), 0, slotHome);
}

/** The entry with exactly this value, mask and rank, or -1. */
export function find(t: Table, value: usize, mask: usize, lo: usize, hi: usize, rank: i32): i32 {
  const r = groupedOf(t);
  const g = findGroup(t, r, mask);
  if (g == NO_GROUP) return -1;
  const h = hashMasked(value, mask, t.words, g);
  let s = h & r.mask;
  while (true) {
    const slot = slotAt(r, s);
    const occupant = load<u32>(slot);
    if (occupant == 0) return -1;
    if (load<u32>(slot, SLOT_HASH) == h) {
      const i = <i32>occupant - 1;
      const e = entryAt(t, i);
      if (e.group == g && e.prio == rank && equalMasked(value, mask, valueOf(t, e), t.words)) return i;
    }
    s = (s + 1) & r.mask;
  }
}

/**
 * Probes group `g` for `key`: the first entry that matches (`first`), or the
 * best of them and `best` (−1: none) — higher rank, then the smaller index.
 */
@inline function probe(t: Table, r: Grouped, g: i32, key: usize, first: bool, best: i32): i32 {
  const mask = groupMask(r, g);
  const h = hashMasked(key, mask, t.words, g);
  let s = h & r.mask;
  while (true) {
    const slot = r.at + ((<usize>s) << SLOT_SHIFT); // slotAt, with the shift a constant
    const occupant = load<u32>(slot);
    if (occupant == 0) return best;
    if (load<u32>(slot, SLOT_HASH) == h) {
      const i = <i32>occupant - 1;
      const e = entryAt(t, i);
      if (e.group == g && equalMasked(key, mask, valueOf(t, e), t.words)) {
        if (first) return i;
        if (best < 0 || e.prio > entryAt(t, best).prio || (e.prio == entryAt(t, best).prio && i < best)) best = i;
      }
    }
    s = (s + 1) & r.mask;
  }
}

/** The best entry for `key`: highest rank, then smallest index. */
export function lookupBest(t: Table, key: usize): Hit {
  const r = groupedOf(t);
  let best = -1;
  for (let k = 0; k < r.nOrder; k++) {
    const g = orderAt(r, k);
    if (best >= 0 && groupMaxPrio(r, g) < entryAt(t, best).prio) break;
    best = probe(t, r, g, key, false, best);
  }
  return hit(best, 0);
}

/** The first entry `key` matches, the groups in rank order: for groups that hold one entry per masked key. */
export function lookupFirst(t: Table, key: usize): Hit {
  const r = groupedOf(t);
  for (let k = 0; k < r.nOrder; k++) {
    const i = probe(t, r, orderAt(r, k), key, true, -1);
    if (i >= 0) return hit(i, 0);
  }
  return MISS;
}

/** Ternary and optional tables: the best entry wins. */
export const best = new Index(
  RECORD_LEN,
  make,
  groups.free,
  grown,
  place,
  unplace,
  actionSet,
  find,
  lookupBest,
  probeDistance,
);
/** Exact and LPM tables: a group holds one entry per masked key, so the first wins. */
export const first = new Index(
  RECORD_LEN,
  make,
  groups.free,
  grown,
  place,
  unplace,
  actionSet,
  find,
  lookupFirst,
  probeDistance,
);
