// The direct index: exact tables whose key is an identifier — or nothing —
// find the row by the key's value itself.
//
//   keyless      no fields: the table holds at most one row, `single`.
//   16-bit       the key is its first two bytes (an in-link or out-link
//                identifier): rows by that value, for values below DIRECT_LEN
//                and the top DIRECT_TOP (`self`, `shared`).
//   32-bit       the key is its first four bytes (a send table's session):
//                the same array, by that value.
//
// Identifiers the array has no room for go to a keyed index of the key's first
// word (keyed.ts), whose record comes first:
//
//   ┌───────────────────────┬────────────┬──────────────┬───────────┐
//   │ Keyed (other values)  │ single i32 │ direct usize │ wide bool │   direct: i32 row per identifier (−1: none)
//   └───────────────────────┴────────────┴──────────────┴───────────┘

import { Hit, hit, rowOf } from "../action";
import { getU16, getU32 } from "../../wire/bytes";
import { isTableMask } from "../keys";
import { entryAt, indexAt, isLive, Table, valueOf } from "../storage";
import { Index } from "./interface";
import * as keyed from "./keyed";
import { Keyed } from "./keyed";

@unmanaged
class Direct extends Keyed {
  single: i32;
  direct: usize;
  wide: bool;
}
export const RECORD_LEN: usize = offsetof<Direct>();

/** Identifiers below this are direct-indexed: 4 KiB per table. */
const DIRECT_LEN: i32 = 1024;
/** And the top identifiers: LINK_SELF, LINK_SHARED, LINK_NONE (abi.ts). */
const DIRECT_TOP: u32 = 4;

@inline function recordOf(t: Table): Direct {
  return changetype<Direct>(indexAt(t));
}

/** Whether the key is an identifier of two bytes (16) or four (32), or else none (0). */
export function identifierBits(t: Table): i32 {
  const first = load<u64>(t.mask);
  if (t.words != 1) return 0;
  return (first & ~(<u64>0xffff)) == 0 ? 16 : first == 0xffffffff ? 32 : 0;
}

export function make(t: Table): void {
  const r = recordOf(t);
  r.single = -1;
  if (t.words == 0) return;
  r.wide = identifierBits(t) == 32;
  const bytes = (<usize>(<u32>DIRECT_LEN + DIRECT_TOP)) << 2;
  r.direct = heap.alloc(bytes);
  memory.fill(r.direct, 0xff, bytes); // −1: no row
  keyed.make(t);
}

export function free(t: Table): void {
  const r = recordOf(t);
  if (r.direct == 0) return;
  heap.free(r.direct);
  keyed.free(t);
}

/** The table's one row, or −1 (keyless tables). */
@inline export function singleRow(t: Table): i32 {
  return recordOf(t).single;
}

/** Where the array keeps identifier `v`'s row, or 0 if it does not. */
@inline export function directAt(t: Table, v: u32): usize {
  const direct = recordOf(t).direct;
  // 65532…65535 are the top slots whatever the key's width: a 32-bit value there is stored and found there alike.
  if (v < <u32>DIRECT_LEN) return direct + ((<usize>v) << 2);
  if (v >= 0x10000 - DIRECT_TOP && v <= 0xffff)
    return direct + ((<usize>(<u32>DIRECT_LEN + v - (0x10000 - DIRECT_TOP))) << 2);
  return 0;
}

/** The row the array holds for identifier `v`, or −1: no row, or `v` is one the keyed index holds. */
@inline export function directRow(t: Table, v: u32): i32 {
  const at = directAt(t, v);
  return at != 0 ? load<i32>(at) : -1;
}

/** The identifier in a key (or an entry's value). */
@inline function identifier(t: Table, key: usize): u32 {
  return recordOf(t).wide ? getU32(key) : getU16(key);
}

export function place(t: Table, i: i32): void {
  if (t.words == 0) {
    recordOf(t).single = i;
    return;
  }
  const at = directAt(t, identifier(t, valueOf(t, entryAt(t, i))));
  if (at != 0) store<i32>(at, i);
  else keyed.place(t, i);
}

export function unplace(t: Table, i: i32): void {
  if (t.words == 0) {
    recordOf(t).single = -1;
    return;
  }
  const at = directAt(t, identifier(t, valueOf(t, entryAt(t, i))));
  if (at != 0) store<i32>(at, -1);
  else keyed.unplace(t, i);
}

/** The table grew: the keyed index's entries placed again if it was re-made. */
export function grown(t: Table): void {
  if (t.words == 0 || !keyed.remade(t)) return;
  for (let i = 0; i < t.allocated; i++) if (isLive(t, i) && !inArray(t, i)) keyed.place(t, i);
}

/** Whether live entry `i` is in the array (else in the keyed index). */
@inline function inArray(t: Table, i: i32): bool {
  return directAt(t, identifier(t, valueOf(t, entryAt(t, i)))) != 0;
}

/** Entry `i`'s action changed: the keyed index follows, if it holds the row. */
export function actionSet(t: Table, i: i32): void {
  if (t.words > 0 && !inArray(t, i)) keyed.actionSet(t, i);
}

export function probeDistance(t: Table): f64 {
  return t.words == 0 ? 0 : keyed.probeDistance(t);
}

/** 16-bit identifiers: the array, or the keyed index. */
@inline export function lookup16(t: Table, key: usize): Hit {
  const at = directAt(t, getU16(key));
  return at != 0 ? hit(load<i32>(at), 0) : keyed.lookup(t, key);
}

export function lookup(t: Table, key: usize): Hit {
  if (t.words == 0) return hit(recordOf(t).single, 0);
  const at = directAt(t, identifier(t, key));
  return at != 0 ? hit(load<i32>(at), 0) : keyed.lookup(t, key);
}

/** The entry of exactly this value and mask (the index holds only entries of the table's mask), or −1. */
export function find(t: Table, value: usize, mask: usize, lo: usize, hi: usize, rank: i32): i32 {
  return isTableMask(t, mask) ? rowOf(lookup(t, value)) : -1;
}

export const index = new Index(RECORD_LEN, make, free, grown, place, unplace, actionSet, find, lookup, probeDistance);
