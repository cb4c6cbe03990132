// The keyed index of exact tables whose fields lie within the key's first
// MAX_WORDS words (every Ethernet, IPv4, GRE and VXLAN key): open addressing
// (slots.ts) over slots that hold the masked key itself, the entry and, when
// it fits in a word (action.ts), the entry's action, so a lookup reads one
// slot — one cache line — compares there and, for most rows, never reads the
// entry:
//
//   ┌──────────────────────────────┬─────────────────┬──────────────────┐
//   │ key & mask: u64 × words      │ entry + 1 : u32 │ action word: u32 │   16 bytes (one word) or 32 (2–3 words)
//   └──────────────────────────────┴─────────────────┴──────────────────┘
//
// (the entry and the action word, read as one u64, are the lookup's Hit plus one).
//
// When the fields lie within one word (any word: a type, a VNI, a destination
// address), a slot holds that word alone (ROAD_WORD in table.ts); else the
// first `words` words. The direct index (direct.ts) keeps the identifiers it
// has no room for in one of these.
//
// The record:
//
//   ┌───────┬──────────┬───────────┬───────────────────────┐
//   │ Slots │ from i32 │ words i32 │ mask0 mask1 mask2 u64 │   from: the byte of the key the slot's words start at
//   └───────┴──────────┴───────────┴───────────────────────┘
//
// mask0–2: the table's mask over the slot's words (from `from` on; 0 past
// `words`), copied here at make so that a lookup reads them beside `from`,
// not through the table's mask.

import { actionWord, heldHit, Hit, MISS, rowOf } from "../action";
import { finish, hashMasked, round, seed } from "../hash";
import { isTableMask } from "../keys";
import { entryAt, indexAt, isLive, Table, valueOf } from "../storage";
import { Index } from "./interface";
import { emptyFrom, meanDistance, shiftBack, Slots, slotAt, slotOf, tooFew } from "./slots";
import * as slots from "./slots";

@unmanaged
export class Keyed extends Slots {
  from: i32;
  words: i32;
  mask0: u64;
  mask1: u64;
  mask2: u64;
}
export const RECORD_LEN: usize = offsetof<Keyed>();

/** Keys of up to this many u64 words sit in the slots. */
export const MAX_WORDS: i32 = 3;
/** Where a slot keeps its entry: after one word, or after MAX_WORDS. */
const ENTRY_WORD: usize = 8;
const ENTRY_WIDE: usize = 24;
/** The action word follows the entry. */
const ACTION: usize = 4;

@inline function recordOf(t: Table): Keyed {
  return changetype<Keyed>(indexAt(t));
}

/** The one word of the key the fields lie in, or −1 when they span several (or none). */
export function oneWord(t: Table): i32 {
  let found = -1;
  for (let w = 0; w < t.words; w++) {
    if (load<u64>(t.mask + ((<usize>w) << 3)) == 0) continue;
    if (found >= 0) return -1;
    found = w;
  }
  return found;
}

export function make(t: Table): void {
  const r = recordOf(t);
  const w = oneWord(t);
  r.from = w >= 0 ? w << 3 : 0;
  r.words = w >= 0 ? 1 : t.words;
  const m = t.mask + <usize>r.from;
  r.mask0 = load<u64>(m);
  r.mask1 = r.words > 1 ? load<u64>(m, 8) : 0;
  r.mask2 = r.words > 2 ? load<u64>(m, 16) : 0;
  slots.make(r, t.allocated, r.words == 1 ? 4 : 5);
}

export function free(t: Table): void {
  slots.free(recordOf(t));
}

@inline function entryOffset(r: Keyed): usize {
  return r.words == 1 ? ENTRY_WORD : ENTRY_WIDE;
}

/** The home slot of the key words at `words` (a slot's, or a key's from byte `from` on), masked by the table's mask. */
@inline function home(t: Table, r: Keyed, words: usize): u32 {
  return hashMasked(words, t.mask + <usize>r.from, r.words, 0) & r.mask;
}

function slotHome(t: Table, slot: usize): u32 {
  return home(t, recordOf(t), slot);
}

/** The slot that holds entry `i`. */
function slotOfEntry(t: Table, r: Keyed, i: i32): u32 {
  return slotOf(r, home(t, r, valueOf(t, entryAt(t, i)) + <usize>r.from), entryOffset(r), i);
}

function put(t: Table, r: Keyed, i: i32): void {
  const value = valueOf(t, entryAt(t, i)) + <usize>r.from; // stored masked
  const slot = emptyFrom(r, home(t, r, value), entryOffset(r));
  for (let w = 0; w < r.words; w++) store<u64>(slot + ((<usize>w) << 3), load<u64>(value + ((<usize>w) << 3)));
  store<u32>(slot + entryOffset(r), <u32>(i + 1));
  store<u32>(slot + entryOffset(r), actionWord(entryAt(t, i)), ACTION);
}

export function place(t: Table, i: i32): void {
  put(t, recordOf(t), i);
}

/** Whether the table grew past the slots: if so they are re-made, empty, for the caller to place its entries again. */
export function remade(t: Table): bool {
  const r = recordOf(t);
  if (!tooFew(r, t.allocated)) return false;
  slots.make(r, t.allocated, r.shift);
  return true;
}

/** The table grew: more slots, every live entry put again. */
export function grown(t: Table): void {
  if (remade(t)) for (let i = 0; i < t.allocated; i++) if (isLive(t, i)) place(t, i);
}

export function unplace(t: Table, i: i32): void {
  const r = recordOf(t);
  shiftBack(t, r, slotOfEntry(t, r, i), entryOffset(r), slotHome);
}

/** Entry `i`'s action changed: its slot's word follows. */
export function actionSet(t: Table, i: i32): void {
  const r = recordOf(t);
  store<u32>(slotAt(r, slotOfEntry(t, r, i)) + entryOffset(r), actionWord(entryAt(t, i)), ACTION);
}

export function probeDistance(t: Table): f64 {
  return meanDistance(t, recordOf(t), entryOffset(recordOf(t)), slotHome);
}

/** The entry of exactly this value and mask (the index holds only entries of the table's mask), or −1. */
export function find(t: Table, value: usize, mask: usize, lo: usize, hi: usize, rank: i32): i32 {
  return isTableMask(t, mask) ? rowOf(lookup(t, value)) : -1;
}

/** One masked word (at byte `from`), compared in the slot. */
@inline export function lookupWord(t: Table, key: usize): Hit {
  const r = recordOf(t);
  const from = <usize>r.from;
  const x = load<u64>(key + from) & r.mask0;
  let s = finish(round(seed(0), x)) & r.mask;
  while (true) {
    const slot = r.at + ((<usize>s) << 4);
    const held = load<u64>(slot, ENTRY_WORD);
    if (<u32>held == 0) return MISS;
    if (load<u64>(slot) == x) return heldHit(held);
    s = (s + 1) & r.mask;
  }
}

/** Two or three masked words, compared in the slot (unused words are zero on both sides). */
export function lookupWide(t: Table, key: usize): Hit {
  const r = recordOf(t);
  const x0 = load<u64>(key) & r.mask0;
  const x1 = load<u64>(key, 8) & r.mask1;
  const x2 = r.words > 2 ? load<u64>(key, 16) & r.mask2 : 0;
  let h = round(round(seed(0), x0), x1);
  if (r.words > 2) h = round(h, x2);
  let s = finish(h) & r.mask;
  while (true) {
    const slot = r.at + ((<usize>s) << 5);
    const held = load<u64>(slot, ENTRY_WIDE);
    if (<u32>held == 0) return MISS;
    if (load<u64>(slot) == x0 && load<u64>(slot, 8) == x1 && load<u64>(slot, 16) == x2) return heldHit(held);
    s = (s + 1) & r.mask;
  }
}

export function lookup(t: Table, key: usize): Hit {
  return recordOf(t).words == 1 ? lookupWord(t, key) : lookupWide(t, key);
}

export const index = new Index(RECORD_LEN, make, free, grown, place, unplace, actionSet, find, lookup, probeDistance);
