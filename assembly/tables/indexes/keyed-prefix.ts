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
// The record is a Grouped (groups.ts): the slots, then the groups; then a Dir
// (dir.ts). A table whose one field is a 4-byte LPM field (an IPv4 address:
// no in-link, no other field beside it) has, from DIR_FROM entries on, its
// lookups answered by the DIR-16-8-8 there instead, one to three reads
// whatever the lengths; the slots stay the authority for its writes (find,
// duplicates) and give a delete the shorter prefix that takes its place.

import { KIND_LPM } from "../../abi";
import { actionWord, heldHit, Hit, MISS, rowOf } from "../action";
import { finish, round, seed } from "../hash";
import { entryAt, fieldKind, fieldLen, fieldOffset, indexAt, isLive, maskOf, Table, valueOf } from "../storage";
import * as dir from "./dir";
import { CHUNK, Dir } from "./dir";
import { Index } from "./interface";
import { findGroup, groupedOf, groupMask, groupMaxPrio, Grouped, join, leave, NO_GROUP, orderAt } from "./groups";
import * as groups from "./groups";
import { emptyFrom, meanDistance, shiftBack, slotAt, slotOf, tooFew } from "./slots";
import * as slots from "./slots";

export const RECORD_LEN: usize = offsetof<Grouped>() + offsetof<Dir>();

/** Entries (allocated) from which an IPv4 table's lookups go by the DIR: below, its 256 KiB first level outweighs
 * them. */
export const DIR_FROM: i32 = 1024;

/** Keys of up to this many u64 words get the keyed index. */
export const MAX_WORDS: i32 = 2;
const SLOT_SHIFT: u32 = 5;
const GROUP: usize = 16;
const ENTRY: usize = 24;
const ACTION: usize = 28;

export function make(t: Table): void {
  groups.make(t, SLOT_SHIFT);
}

@inline function dirOf(t: Table): Dir {
  return changetype<Dir>(indexAt(t) + offsetof<Grouped>());
}

/** Whether the table's one field is a 4-byte LPM field: then it may have a DIR. */
function addressOnly(t: Table): bool {
  return t.nFields == 1 && fieldKind(t, 0) == KIND_LPM && fieldLen(t, 0) == 4;
}

function free(t: Table): void {
  groups.free(t);
  dir.free(dirOf(t));
}

/** Bytes of the table's DIR (0: none). */
export function dirBytes(t: Table): usize {
  return dir.bytes(dirOf(t));
}

/** Entry `i`'s address (big-endian in its value), as a number. */
function addressOf(t: Table, i: i32): u32 {
  return bswap<u32>(load<u32>(valueOf(t, entryAt(t, i)) + <usize>fieldOffset(t, 0)));
}

// The table a DIR write reads the prefix lengths of (dir.ts LengthOf takes no table).
let lengthsOf: Table = changetype<Table>(0);
function lengthOf(entryPlus1: u32): i32 {
  return entryAt(lengthsOf, <i32>entryPlus1 - 1).prio;
}

/** Entry `i` (its action's word too) into the DIR. */
function dirPut(t: Table, d: Dir, i: i32): void {
  lengthsOf = t;
  dir.setWord(d, i, actionWord(entryAt(t, i)));
  dir.write(d, addressOf(t, i), entryAt(t, i).prio, CHUNK, <u32>(i + 1), lengthOf);
}

/** Entry `i` out of the DIR: its cells to the longest shorter prefix that covers it, or a miss. */
function dirTake(t: Table, d: Dir, i: i32): void {
  lengthsOf = t;
  const e = entryAt(t, i);
  const v = valueOf(t, e);
  const shorter = rowOf(covering(t, groupedOf(t), load<u64>(v), t.words > 1 ? load<u64>(v, 8) : 0, e.prio));
  dir.write(d, addressOf(t, i), e.prio, <u32>(i + 1), <u32>(shorter + 1), lengthOf);
}

/** The table reached DIR_FROM entries: its DIR made, every live entry in it (once: later writes are one row each). */
function dirMake(t: Table, d: Dir): void {
  dir.make(d, fieldOffset(t, 0), t.allocated);
  for (let i = 0; i < t.allocated; i++) if (isLive(t, i)) dirPut(t, d, i);
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
  const d = dirOf(t);
  if (d.l1 != 0) dirPut(t, d, i);
}

/** The table grew: more slots, every live entry put again; the DIR's words follow, or it is made. */
export function grown(t: Table): void {
  const r = groupedOf(t);
  const d = dirOf(t);
  if (d.l1 != 0) dir.resize(d, t.allocated);
  else if (t.allocated >= DIR_FROM && addressOnly(t)) dirMake(t, d);
  if (!tooFew(r, t.allocated)) return;
  slots.make(r, t.allocated, SLOT_SHIFT);
  for (let i = 0; i < t.allocated; i++) if (isLive(t, i)) put(t, r, i);
}

export function unplace(t: Table, i: i32): void {
  const r = groupedOf(t);
  const d = dirOf(t);
  if (d.l1 != 0) dirTake(t, d, i);
  shiftBack(t, r, slotOf(r, entryHome(t, r, i), ENTRY, i), ENTRY, slotHome);
  leave(r, entryAt(t, i).group);
}

/** Entry `i`'s action changed: its slot's word follows. */
export function actionSet(t: Table, i: i32): void {
  const r = groupedOf(t);
  store<u32>(slotAt(r, slotOf(r, entryHome(t, r, i), ENTRY, i)), actionWord(entryAt(t, i)), ACTION);
  const d = dirOf(t);
  if (d.l1 != 0) dir.setWord(d, i, actionWord(entryAt(t, i)));
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

/** The longest prefix shorter than `below` that holds key words (k0, k1): for a delete, what takes its place. */
function covering(t: Table, r: Grouped, k0: u64, k1: u64, below: i32): Hit {
  for (let k = 0; k < r.nOrder; k++) {
    if (groupMaxPrio(r, orderAt(r, k)) >= below) continue;
    const h = search(t, r, k0, k1, k, k + 1);
    if (rowOf(h) >= 0) return h;
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
  const d = dirOf(t);
  if (d.l1 != 0) return dir.lookup(d, key);
  const r = groupedOf(t);
  return search(t, r, load<u64>(key), load<u64>(key, 8), 0, r.nOrder);
}

export const index = new Index(RECORD_LEN, make, free, grown, place, unplace, actionSet, find, lookup, probeDistance);
