// Range match: range fields match lo ≤ field ≤ hi (big-endian bytes compare
// as numbers); other fields match by mask as in a ternary table. Ranges do not
// hash, so entries are kept in priority order and the first match wins.

import { ERR_BAD_MATCH_KEY, ERR_OK, KIND_EXACT, KIND_OPTIONAL, KIND_RANGE } from "../abi";
import {
  checkCommon,
  compareBytes,
  entryAt,
  fieldAllOrNothing,
  fieldKind,
  fieldLen,
  fieldOffset,
  hiOf,
  loOf,
  maskOf,
  Table,
  valueOf,
} from "./table";
import { equalMasked } from "./tuple-space";

export function check(t: Table, value: usize, mask: usize, lo: usize, hi: usize): i32 {
  const common = checkCommon(t, value, mask);
  if (common != ERR_OK) return common;
  for (let f = 0; f < t.nFields; f++) {
    const off = fieldOffset(t, f);
    const len = fieldLen(t, f);
    const kind = fieldKind(t, f);
    const given = fieldAllOrNothing(mask, off, len);
    if (kind == KIND_RANGE) {
      if (given != 0) return ERR_BAD_MATCH_KEY; // the bounds say it, not the mask
      if (compareBytes(lo + <usize>off, hi + <usize>off, len) > 0) return ERR_BAD_MATCH_KEY;
    } else if ((kind == KIND_EXACT && given != 1) || (kind == KIND_OPTIONAL && given < 0)) {
      return ERR_BAD_MATCH_KEY;
    }
  }
  return ERR_OK;
}

@inline function sortedAt(t: Table, k: i32): i32 {
  return load<i32>(t.sorted + (<usize>k << 2));
}

/** Whether entry `a` ranks before entry `b`: higher priority, then smaller index. */
@inline function before(t: Table, a: i32, b: i32): bool {
  const pa = entryAt(t, a).prio;
  const pb = entryAt(t, b).prio;
  return pa > pb || (pa == pb && a < b);
}

export function link(t: Table, i: i32): void {
  let k = t.nSorted;
  while (k > 0 && before(t, i, sortedAt(t, k - 1))) {
    store<i32>(t.sorted + (<usize>k << 2), sortedAt(t, k - 1));
    k--;
  }
  store<i32>(t.sorted + (<usize>k << 2), i);
  t.nSorted++;
  entryAt(t, i).group = 0;
}

export function unlink(t: Table, i: i32): void {
  let k = 0;
  while (sortedAt(t, k) != i) k++;
  for (; k + 1 < t.nSorted; k++) store<i32>(t.sorted + (<usize>k << 2), sortedAt(t, k + 1));
  t.nSorted--;
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

export function find(t: Table, value: usize, mask: usize, lo: usize, hi: usize, prio: i32): i32 {
  const n = <usize>t.keyLen;
  for (let k = 0; k < t.nSorted; k++) {
    const i = sortedAt(t, k);
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

/** Bounds compare on the range fields only: bytes elsewhere are not part of the entry. */
function rangesEqual(t: Table, a: usize, b: usize): bool {
  for (let f = 0; f < t.nFields; f++) {
    if (fieldKind(t, f) != KIND_RANGE) continue;
    const off = <usize>fieldOffset(t, f);
    if (memory.compare(a + off, b + off, <usize>fieldLen(t, f)) != 0) return false;
  }
  return true;
}

export function lookup(t: Table, key: usize): i32 {
  for (let k = 0; k < t.nSorted; k++) {
    const i = sortedAt(t, k);
    const e = entryAt(t, i);
    if (equalMasked(key, maskOf(t, e), valueOf(t, e), t.words) && inRanges(t, key, loOf(t, e), hiOf(t, e))) return i;
  }
  return -1;
}
