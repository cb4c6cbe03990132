// The index of range tables: ranges do not hash, so entries are kept in rank
// order (highest priority first, then the smaller index) and a lookup takes
// the first that matches: its range fields within lo … hi (big-endian bytes
// compare as numbers), its other fields by mask.
//
// The record (the list grows with the table's entries):
//
//   ┌──────────────┬──────────┐
//   │ sorted usize │ n i32    │   sorted: entry indices, i32 each
//   └──────────────┴──────────┘

import { KIND_RANGE } from "../../abi";
import { Hit, hit } from "../action";
import { compareBytes, equalMasked } from "../keys";
import { Index } from "./interface";
import { entryAt, fieldKind, fieldLen, fieldOffset, hiOf, indexAt, loOf, maskOf, Table, valueOf } from "../storage";

@unmanaged
class Sorted {
  sorted: usize;
  n: i32;
}
export const RECORD_LEN: usize = offsetof<Sorted>();

@inline function recordOf(t: Table): Sorted {
  return changetype<Sorted>(indexAt(t));
}
@inline function sortedAt(r: Sorted, k: i32): i32 {
  return load<i32>(r.sorted + ((<usize>k) << 2));
}
@inline function setSortedAt(r: Sorted, k: i32, i: i32): void {
  store<i32>(r.sorted + ((<usize>k) << 2), i);
}

export function make(t: Table): void {
  recordOf(t).sorted = heap.alloc((<usize>t.allocated) << 2);
}

export function free(t: Table): void {
  heap.free(recordOf(t).sorted);
}

/** The table grew: room in the list for every entry. */
export function grown(t: Table): void {
  const r = recordOf(t);
  const sorted = heap.alloc((<usize>t.allocated) << 2);
  memory.copy(sorted, r.sorted, (<usize>r.n) << 2);
  heap.free(r.sorted);
  r.sorted = sorted;
}

/** Whether entry `a` ranks before entry `b`: higher priority, then smaller index. */
@inline function before(t: Table, a: i32, b: i32): bool {
  const pa = entryAt(t, a).prio;
  const pb = entryAt(t, b).prio;
  return pa > pb || (pa == pb && a < b);
}

export function place(t: Table, i: i32): void {
  const r = recordOf(t);
  let k = r.n;
  while (k > 0 && before(t, i, sortedAt(r, k - 1))) {
    setSortedAt(r, k, sortedAt(r, k - 1));
    k--;
  }
  setSortedAt(r, k, i);
  r.n++;
}

export function unplace(t: Table, i: i32): void {
  const r = recordOf(t);
  let k = 0;
  while (sortedAt(r, k) != i) k++;
  for (; k + 1 < r.n; k++) setSortedAt(r, k, sortedAt(r, k + 1));
  r.n--;
}

/** This index holds no actions. */
export function actionSet(t: Table, i: i32): void {}

/** Not hashed: no distance. */
export function probeDistance(t: Table): f64 {
  return -1;
}

/** Bounds compare on the range fields only: bytes elsewhere are not part of the entry. */
function rangesEqual(t: Table, a: usize, b: usize): bool {
  for (let f = 0; f < t.nFields; f++) {
    if (fieldKind(t, f) != KIND_RANGE) continue;
    const off = <usize>fieldOffset(t, f);
    if (memory.compare(a + off, b + off, <usize>fieldLen(t, f)) != 0) return false;
  }
  return true;
}

/** The entry with exactly this match and priority, or −1. */
export function find(t: Table, value: usize, mask: usize, lo: usize, hi: usize, prio: i32): i32 {
  const r = recordOf(t);
  const n = <usize>t.keyLen;
  for (let k = 0; k < r.n; k++) {
    const i = sortedAt(r, k);
    const e = entryAt(t, i);
    if (
      e.prio == prio &&
      memory.compare(valueOf(t, e), value, n) == 0 &&
      memory.compare(maskOf(t, e), mask, n) == 0 &&
      rangesEqual(t, loOf(t, e), lo) &&
      rangesEqual(t, hiOf(t, e), hi)
    ) {
      return i;
    }
  }
  return -1;
}

function inRanges(t: Table, key: usize, lo: usize, hi: usize): bool {
  for (let f = 0; f < t.nFields; f++) {
    if (fieldKind(t, f) != KIND_RANGE) continue;
    const off = <usize>fieldOffset(t, f);
    const len = fieldLen(t, f);
    if (compareBytes(key + off, lo + off, len) < 0 || compareBytes(key + off, hi + off, len) > 0) return false;
  }
  return true;
}

export function lookup(t: Table, key: usize): Hit {
  const r = recordOf(t);
  for (let k = 0; k < r.n; k++) {
    const i = sortedAt(r, k);
    const e = entryAt(t, i);
    if (equalMasked(key, maskOf(t, e), valueOf(t, e), t.words) && inRanges(t, key, loOf(t, e), hiOf(t, e)))
      return hit(i, 0);
  }
  return hit(-1, 0);
}

export const index = new Index(RECORD_LEN, make, free, grown, place, unplace, actionSet, find, lookup, probeDistance);
