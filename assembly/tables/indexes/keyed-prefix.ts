// The keyed index of LPM tables whose fields lie in the key's first MAX_WORDS
// words (any IPv4 key): entries grouped by prefix length (groups.ts), longest
// first, and open addressing (slots.ts) keyed by (group, key & group mask),
// each slot holding the masked words, the group, the entry and, when it fits,
// the entry's action word (action.ts). A lookup probes it once per prefix
// length, longest first, and for most rows reads one slot and never the entry
// (the tuple space reads a slot, then the entry to compare the key: two
// dependent misses):
//
//   ┌──────────┬──────────┬─────────────┬───────┬─────────────┬──────────────────┐
//   │ w0 u64   │ w1 u64   │ group+1 u32 │ (pad) │ entry+1 u32 │ action word u32  │   32 bytes
//   └──────────┴──────────┴─────────────┴───────┴─────────────┴──────────────────┘
//
// The record is a Grouped (groups.ts): the slots, then the groups.

import { actionWord, heldHit, Hit, MISS, rowOf } from "../action";
import { finish, round, seed } from "../hash";
import { entryAt, isLive, maskOf, Table, valueOf } from "../storage";
import { Index } from "./interface";
import { findGroup, groupedOf, groupMask, Grouped, join, leave, NO_GROUP, orderAt } from "./groups";
import * as groups from "./groups";
import { emptyFrom, meanDistance, shiftBack, slotAt, slotOf, tooFew } from "./slots";
import * as slots from "./slots";

export const RECORD_LEN: usize = offsetof<Grouped>();

/** Keys of up to this many u64 words get the keyed index. */
export const MAX_WORDS: i32 = 2;
const SLOT_SHIFT: u32 = 5;
const GROUP: usize = 16;
const ENTRY: usize = 24;
const ACTION: usize = 28;

export function make(t: Table): void {
  groups.make(t, SLOT_SHIFT);
}

/** The home slot of masked words (x0, x1) in group `g`. */
@inline function home(r: Grouped, g: i32, x0: u64, x1: u64): u32 {
  return finish(round(round(seed(g), x0), x1)) & r.mask;
}

/** A slot's home: from the words and group it holds. */
function slotHome(t: Table, slot: usize): u32 {
  return home(groupedOf(t), <i32>load<u32>(slot, GROUP) - 1, load<u64>(slot), load<u64>(slot, 8));
}

/** Entry `i`'s home slot: its value is stored masked, the unused word is zero. */
function entryHome(t: Table, r: Grouped, i: i32): u32 {
  const e = entryAt(t, i);
  const v = valueOf(t, e);
  return home(r, e.group, load<u64>(v), t.words > 1 ? load<u64>(v, 8) : 0);
}

/** Entry `i`'s slot (its group set). */
function put(t: Table, r: Grouped, i: i32): void {
  const slot = emptyFrom(r, entryHome(t, r, i), ENTRY);
  const e = entryAt(t, i);
  const v = valueOf(t, e);
  store<u64>(slot, load<u64>(v));
  store<u64>(slot, t.words > 1 ? load<u64>(v, 8) : 0, 8);
  store<u32>(slot, <u32>e.group + 1, GROUP);
  store<u32>(slot, <u32>(i + 1), ENTRY);
  store<u32>(slot, actionWord(e), ACTION);
}

export function place(t: Table, i: i32): void {
  const r = groupedOf(t);
  const e = entryAt(t, i);
  e.group = join(t, r, maskOf(t, e), e.prio);
  put(t, r, i);
}

/** The table grew: more slots, every live entry put again. */
export function grown(t: Table): void {
  const r = groupedOf(t);
  if (!tooFew(r, t.allocated)) return;
  slots.make(r, t.allocated, SLOT_SHIFT);
  for (let i = 0; i < t.allocated; i++) if (isLive(t, i)) put(t, r, i);
}

export function unplace(t: Table, i: i32): void {
  const r = groupedOf(t);
  shiftBack(t, r, slotOf(r, entryHome(t, r, i), ENTRY, i), ENTRY, slotHome);
  leave(r, entryAt(t, i).group);
}

/** Entry `i`'s action changed: its slot's word follows. */
export function actionSet(t: Table, i: i32): void {
  const r = groupedOf(t);
  store<u32>(slotAt(r, slotOf(r, entryHome(t, r, i), ENTRY, i)), actionWord(entryAt(t, i)), ACTION);
}

export function probeDistance(t: Table): f64 {
  return meanDistance(t, groupedOf(t), ENTRY, slotHome);
}

/**
 * The first of the groups at positions k … end − 1 of the order (longest
 * prefix first) that holds key words (k0, k1), masked by the group's mask,
 * with its action word when it fits; or a miss. One loop inside the other, as
 * the packet path wants it: a group's miss goes straight on to the next group.
 */
@inline function search(t: Table, r: Grouped, k0: u64, k1: u64, k: i32, end: i32): Hit {
  for (; k < end; k++) {
    const g = orderAt(r, k);
    const mask = groupMask(r, g);
    const x0 = k0 & load<u64>(mask);
    const x1 = t.words > 1 ? k1 & load<u64>(mask, 8) : 0;
    const tag = <u32>g + 1;
    let s = home(r, g, x0, x1);
    while (true) {
      const slot = r.at + ((<usize>s) << SLOT_SHIFT); // slotAt, with the shift a constant
      const held = load<u64>(slot, ENTRY);
      if (<u32>held == 0) break;
      if (load<u64>(slot) == x0 && load<u64>(slot, 8) == x1 && load<u32>(slot, GROUP) == tag) return heldHit(held);
      s = (s + 1) & r.mask;
    }
  }
  return MISS;
}

/** The entry with exactly this value and mask (the rank follows from the mask), or −1. */
export function find(t: Table, value: usize, mask: usize, lo: usize, hi: usize, rank: i32): i32 {
  const r = groupedOf(t);
  const g = findGroup(t, r, mask);
  if (g == NO_GROUP) return -1;
  let k = 0;
  while (orderAt(r, k) != g) k++;
  return rowOf(search(t, r, load<u64>(value), t.words > 1 ? load<u64>(value, 8) : 0, k, k + 1));
}

/** The longest prefix matching `key`, with its action word when it fits, or a miss. */
export function lookup(t: Table, key: usize): Hit {
  const r = groupedOf(t);
  return search(t, r, load<u64>(key), load<u64>(key, 8), 0, r.nOrder);
}

export const index = new Index(
  RECORD_LEN,
  make,
  groups.free,
  grown,
  place,
  unplace,
  actionSet,
  find,
  lookup,
  probeDistance,
);
