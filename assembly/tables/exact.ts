// Exact match: every declared field must be given in full, so at most one
// entry matches a key. The tuple-space index (one group) is the authority for
// writes; lookups take a shorter road where the key allows:
//
//   EXACT_SINGLE  no key fields: the table holds at most one entry, `single`.
//   EXACT_DIRECT  the key is the first two bytes only (an in-link or out-link
//                 identifier): entries indexed by that 16-bit value, for values
//                 below DIRECT_LEN and the top DIRECT_TOP (`self`, `shared`);
//                 others go through the hash.
//   EXACT_DIRECT32 the key is the first four bytes (a send table's session):
//                 the same direct index, by that 32-bit value; others (at
//                 or above DIRECT_LEN, bar the top ones) go through the hash.
//   EXACT_WORD    the fields lie within one 8-byte word of the key (any word:
//                 a type, a VNI, a destination address): the keyed index with
//                 16-byte slots, holding that word.
//   EXACT_KEYED   the key lies within the first KEYED_MAX_WORDS words (any
//                 Ethernet, IPv4, GRE or VXLAN key): the keyed index with
//                 32-byte slots.
//   EXACT_HASHED  anything else (IPv6 keys): the general probe.
//
// The keyed index is open addressing over slots that hold the masked key
// itself, the entry index and, when it fits in a word, the entry's action, so
// a lookup reads one slot — one cache line — compares there and, for most
// rows, never reads the entry:
//
//   ┌──────────────────────────────┬─────────────────┬──────────────────┐
//   │ key & mask: u64 × words      │ entry + 1 : u32 │ action word: u32 │   16 bytes (1 word) or 32 (2–3 words)
//   └──────────────────────────────┴─────────────────┴──────────────────┘
//
// The action word is action.ts's; a lookup returns it with the row (a Hit).
// Whatever changes an entry's action calls actionChanged.
//
// It has at least twice as many slots (a power of two) as the table has
// entries with memory, and is re-made when the table grows; deletion shifts
// back (no tombstones).

import { ERR_BAD_MATCH_KEY, ERR_OK, KIND_EXACT } from "../abi";
import { actionWord, hit, Hit, MISS } from "./action";
import { getU16, getU32 } from "../wire/bytes";
import { checkCommon, entryAt, FREE, slotsFor, Table, valueOf } from "./table";
import { finish, hashMasked, round, seed } from "./hash";
import * as tss from "./tuple-space";

export const EXACT_SINGLE: i32 = 0;
export const EXACT_DIRECT: i32 = 1;
export const EXACT_WORD: i32 = 2;
export const EXACT_HASHED: i32 = 3;
export const EXACT_KEYED: i32 = 4;
export const EXACT_DIRECT32: i32 = 5;
/** Identifiers below this are direct-indexed: 4 KiB per table. */
const DIRECT_LEN: i32 = 1024;
/** And the top identifiers: PORT_SELF, PORT_SHARED, PORT_NONE (abi.ts). */
const DIRECT_TOP: u32 = 4;

/** The value a direct index goes by: the key's first two bytes (EXACT_DIRECT) or four (EXACT_DIRECT32), big-endian. */
@inline function directValue(t: Table, key: usize): u32 {
  return t.exactMode == EXACT_DIRECT ? getU16(key) : getU32(key);
}

/** Where the direct index (EXACT_DIRECT, EXACT_DIRECT32) keeps identifier `v`'s entry, or 0 if it does not. */
@inline export function directAt(t: Table, v: u32): usize {
  // 65532…65535 are the top slots whatever the key's width: an EXACT_DIRECT32 value there is stored and found there alike.
  if (v < <u32>DIRECT_LEN) return t.direct + (<usize>v << 2);
  if (v >= 0x10000 - DIRECT_TOP && v <= 0xffff) return t.direct + (<usize>(<u32>DIRECT_LEN + v - (0x10000 - DIRECT_TOP)) << 2);
  return 0;
}

/** The row the direct index holds for identifier `v`, or −1: no row, or `v` is one the hash holds (directAt). */
@inline export function directRow(t: Table, v: u32): i32 {
  const at = directAt(t, v);
  return at != 0 ? load<i32>(at) : -1;
}

/** Keys of up to this many u64 words sit in the keyed index's slots. */
const KEYED_MAX_WORDS: i32 = 3;
/** Where a slot keeps its entry: after KEYED_MAX_WORDS words, or after one. */
const SLOT_ENTRY_WIDE: usize = 24;
const SLOT_ENTRY_WORD: usize = 8;
/** The action word follows the entry. */
const SLOT_ACTION: usize = 4;

export function check(t: Table, value: usize, mask: usize): i32 {
  const common = checkCommon(t, value, mask);
  if (common != ERR_OK) return common;
  return memory.compare(mask, t.mask, <usize>t.keyLen) == 0 ? ERR_OK : ERR_BAD_MATCH_KEY;
}

/** Chooses the lookup road from the declared fields (at creation). */
export function prepare(t: Table): void {
  t.single = -1;
  const firstWord = load<u64>(t.mask);
  if (t.words == 0) {
    t.exactMode = EXACT_SINGLE;
  } else if (t.words == 1 && ((firstWord & ~(<u64>0xffff)) == 0 || firstWord == 0xffffffff)) {
    t.exactMode = (firstWord & ~(<u64>0xffff)) == 0 ? EXACT_DIRECT : EXACT_DIRECT32;
    const bytes = <usize>(<u32>DIRECT_LEN + DIRECT_TOP) << 2;
    t.direct = heap.alloc(bytes);
    memory.fill(t.direct, 0xff, bytes); // −1: no entry
  } else if (onlyWord(t) >= 0) {
    t.exactMode = EXACT_WORD;
    t.keyedFrom = onlyWord(t) << 3;
    t.keyedShift = 4;
    makeKeyed(t);
  } else if (t.words <= KEYED_MAX_WORDS) {
    t.exactMode = EXACT_KEYED;
    t.keyedFrom = 0;
    t.keyedShift = 5;
    makeKeyed(t);
  } else {
    t.exactMode = EXACT_HASHED;
  }
}

/** A keyed index sized for the entries the table has memory for (empty), of 1 << t.keyedShift-byte slots: exact's, and LPM's (lpm.ts). */
export function makeKeyed(t: Table): void {
  const n = slotsFor(t.allocated);
  if (t.keyedBlock != 0) heap.free(t.keyedBlock);
  t.keyedMask = n - 1;
  const bytes = <usize>n << t.keyedShift;
  // One slot never straddles two cache lines: 32-byte aligned.
  t.keyedBlock = heap.alloc(bytes + 32);
  t.keyed = (t.keyedBlock + 31) & ~(<usize>31);
  memory.fill(t.keyed, 0, bytes);
}

/** The table grew (table.ts grow): the keyed index is re-made for its new size, every live entry placed again. */
export function resize(t: Table): void {
  if (t.exactMode != EXACT_WORD && t.exactMode != EXACT_KEYED) return;
  if (slotsFor(t.allocated) <= t.keyedMask + 1) return;
  makeKeyed(t);
  for (let i = 0; i < t.allocated; i++) if (entryAt(t, i).group != FREE) placed(t, i);
}

/** The one word of the key the fields lie in, or −1 when they span several. */
function onlyWord(t: Table): i32 {
  let found = -1;
  for (let w = 0; w < t.words; w++) {
    if (load<u64>(t.mask + (<usize>w << 3)) == 0) continue;
    if (found >= 0) return -1;
    found = w;
  }
  return found;
}

/** Words of the key a keyed slot holds, from byte `keyedFrom` of the key on. */
@inline function slotWords(t: Table): i32 {
  return t.exactMode == EXACT_WORD ? 1 : t.words;
}

/**
 * The keyed index's home slot for the key words at `words` (a slot's, or a
 * key's from byte keyedFrom on), masked by the table's mask.
 */
@inline function keyedHash(t: Table, words: usize): u32 {
  return hashMasked(words, t.mask + <usize>t.keyedFrom, slotWords(t), 0) & t.keyedMask;
}

/** Slot `s` of a keyed index (exact's or LPM's: 1 << keyedShift bytes each). */
@inline export function slotAt(t: Table, s: u32): usize {
  return t.keyed + (<usize>s << t.keyedShift);
}

@inline function slotEntry(t: Table, slot: usize): usize {
  return slot + (t.exactMode == EXACT_WORD ? SLOT_ENTRY_WORD : SLOT_ENTRY_WIDE);
}

/** Entry `i` is now in the table. */
export function placed(t: Table, i: i32): void {
  const mode = t.exactMode;
  if (mode == EXACT_SINGLE) {
    t.single = i;
  } else if (mode == EXACT_DIRECT || mode == EXACT_DIRECT32) {
    const at = directAt(t, directValue(t, valueOf(t, entryAt(t, i))));
    if (at != 0) store<i32>(at, i);
  } else if (mode == EXACT_WORD || mode == EXACT_KEYED) {
    const value = valueOf(t, entryAt(t, i)) + <usize>t.keyedFrom; // stored masked
    let s = keyedHash(t, value);
    while (load<u32>(slotEntry(t, slotAt(t, s))) != 0) s = (s + 1) & t.keyedMask;
    const slot = slotAt(t, s);
    for (let w = 0; w < slotWords(t); w++) store<u64>(slot + (<usize>w << 3), load<u64>(value + (<usize>w << 3)));
    store<u32>(slotEntry(t, slot), <u32>(i + 1));
    store<u32>(slotEntry(t, slot) + SLOT_ACTION, actionWord(entryAt(t, i)));
  }
}

/** Entry `i`'s action was set or restored: its slot's action word follows. */
export function actionChanged(t: Table, i: i32): void {
  if (t.exactMode != EXACT_WORD && t.exactMode != EXACT_KEYED) return;
  let s = keyedHash(t, valueOf(t, entryAt(t, i)) + <usize>t.keyedFrom);
  while (load<u32>(slotEntry(t, slotAt(t, s))) != <u32>(i + 1)) s = (s + 1) & t.keyedMask;
  store<u32>(slotEntry(t, slotAt(t, s)) + SLOT_ACTION, actionWord(entryAt(t, i)));
}

/** Entry `i` has left the table. */
export function removed(t: Table, i: i32): void {
  const mode = t.exactMode;
  if (mode == EXACT_SINGLE) {
    t.single = -1;
  } else if (mode == EXACT_DIRECT || mode == EXACT_DIRECT32) {
    const at = directAt(t, directValue(t, valueOf(t, entryAt(t, i))));
    if (at != 0) store<i32>(at, -1);
  } else if (mode == EXACT_WORD || mode == EXACT_KEYED) {
    let s = keyedHash(t, valueOf(t, entryAt(t, i)) + <usize>t.keyedFrom);
    while (load<u32>(slotEntry(t, slotAt(t, s))) != <u32>(i + 1)) s = (s + 1) & t.keyedMask;
    shiftBack(t, s, slotEntry(t, 0), slotHome);
  }
}

/** A keyed slot's home slot, from the key words it holds: exact's here, LPM's in lpm.ts. */
export type SlotHome = (t: Table, slot: usize) => u32;

function slotHome(t: Table, slot: usize): u32 {
  return keyedHash(t, slot);
}

/**
 * Empties slot `s` of a keyed index (exact's or LPM's) by backward-shift
 * deletion: later slots of its probe run are pulled back over the hole when
 * that keeps them reachable, so no tombstones. A slot holds its entry + 1 at
 * byte `entryOffset` (0: empty).
 */
export function shiftBack(t: Table, s: u32, entryOffset: usize, home: SlotHome): void {
  const size = <usize>1 << t.keyedShift;
  let hole = s;
  let j = (s + 1) & t.keyedMask;
  while (true) {
    const slot = slotAt(t, j);
    if (load<u32>(slot + entryOffset) == 0) break;
    const h = home(t, slot);
    // Movable iff its home is not cyclically within (hole, j].
    const inRange = hole <= j ? h > hole && h <= j : h > hole || h <= j;
    if (!inRange) {
      memory.copy(slotAt(t, hole), slot, size);
      hole = j;
    }
    j = (j + 1) & t.keyedMask;
  }
  memory.fill(slotAt(t, hole), 0, size);
}

/** Mean distance of a keyed index's entries from their home slots (see tuple-space.ts meanProbeDistance). */
export function probeDistance(t: Table, entryOffset: usize, home: SlotHome): f64 {
  let total: u64 = 0;
  let n = 0;
  for (let s: u32 = 0; s <= t.keyedMask; s++) {
    const slot = slotAt(t, s);
    if (load<u32>(slot + entryOffset) == 0) continue;
    total += <u64>((s - home(t, slot)) & t.keyedMask);
    n++;
  }
  return n == 0 ? 0 : <f64>total / <f64>n;
}

/** Whether lookups go through the keyed index. */
export function isKeyed(t: Table): bool {
  return t.kind == KIND_EXACT && (t.exactMode == EXACT_WORD || t.exactMode == EXACT_KEYED);
}

/** Mean distance of the keyed index's entries from their home slots. */
export function keyedProbeDistance(t: Table): f64 {
  return probeDistance(t, slotEntry(t, 0), slotHome);
}

/** EXACT_WORD: one masked word (at byte keyedFrom), compared in the slot. */
@inline export function lookupWord(t: Table, key: usize): Hit {
  const from = <usize>t.keyedFrom;
  const x = load<u64>(key + from) & load<u64>(t.mask + from);
  let s = finish(round(seed(0), x)) & t.keyedMask;
  while (true) {
    const slot = t.keyed + (<usize>s << 4);
    const e = load<u32>(slot, SLOT_ENTRY_WORD);
    if (e == 0) return MISS;
    if (load<u64>(slot) == x) return hit(<i32>e - 1, load<u32>(slot, SLOT_ENTRY_WORD + SLOT_ACTION));
    s = (s + 1) & t.keyedMask;
  }
}

/** EXACT_KEYED: two or three masked words, compared in the slot (unused words are zero on both sides). */
function lookupKeyed(t: Table, key: usize): Hit {
  const m = t.mask;
  const x0 = load<u64>(key) & load<u64>(m);
  const x1 = load<u64>(key, 8) & load<u64>(m, 8);
  const x2 = t.words > 2 ? load<u64>(key, 16) & load<u64>(m, 16) : 0;
  let h = round(round(seed(0), x0), x1);
  if (t.words > 2) h = round(h, x2);
  let s = finish(h) & t.keyedMask;
  while (true) {
    const slot = t.keyed + (<usize>s << 5);
    const e = load<u32>(slot, SLOT_ENTRY_WIDE);
    if (e == 0) return MISS;
    if (load<u64>(slot) == x0 && load<u64>(slot, 8) == x1 && load<u64>(slot, 16) == x2) {
      return hit(<i32>e - 1, load<u32>(slot, SLOT_ENTRY_WIDE + SLOT_ACTION));
    }
    s = (s + 1) & t.keyedMask;
  }
}

/** EXACT_DIRECT: the in-link or out-link identifier indexes the entry, or else the hash. */
@inline export function lookupDirect(t: Table, key: usize): Hit {
  const at = directAt(t, getU16(key));
  return hit(at != 0 ? load<i32>(at) : tss.lookupFirst(t, key), 0);
}

/** Any exact road (table.ts lookup takes the common ones inline). */
export function lookup(t: Table, key: usize): Hit {
  const mode = t.exactMode;
  if (mode == EXACT_WORD) return lookupWord(t, key);
  if (mode == EXACT_SINGLE) return hit(t.single, 0);
  if (mode == EXACT_DIRECT || mode == EXACT_DIRECT32) {
    const at = directAt(t, directValue(t, key));
    if (at != 0) return hit(load<i32>(at), 0);
  } else if (mode == EXACT_KEYED) {
    return lookupKeyed(t, key);
  }
  return hit(tss.lookupFirst(t, key), 0);
}
