// Exact match: every declared field must be given in full, so at most one
// entry matches a key. The tuple-space index (one group) is the authority;
// lookups take a shorter road where the key allows:
//
//   EXACT_SINGLE  no key fields: the table holds at most one entry, `single`.
//   EXACT_DIRECT  the key is the first two bytes only (an in-link or out-link
//                 identifier): entries indexed by that 16-bit value, for values
//                 below DIRECT_LEN; larger ones go through the hash.
//   EXACT_WORD    the key lies within the first 8 bytes: one hash, one compare.
//   EXACT_HASHED  anything else: the general probe.

import { ERR_BAD_MATCH_KEY, ERR_OK } from "../abi";
import { getU16 } from "../wire/bytes";
import { checkCommon, entryAt, Table, valueOf } from "./table";
import * as tss from "./tuple-space";

export const EXACT_SINGLE: i32 = 0;
export const EXACT_DIRECT: i32 = 1;
export const EXACT_WORD: i32 = 2;
export const EXACT_HASHED: i32 = 3;
/** Identifiers below this are direct-indexed: 4 KiB per table. */
const DIRECT_LEN: i32 = 1024;

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
  } else if (t.words == 1 && (firstWord & ~(<u64>0xffff)) == 0) {
    t.exactMode = EXACT_DIRECT;
    t.directLen = DIRECT_LEN;
    t.direct = heap.alloc(<usize>(DIRECT_LEN << 2));
    memory.fill(t.direct, 0xff, <usize>(DIRECT_LEN << 2)); // −1: no entry
  } else if (t.words == 1) {
    t.exactMode = EXACT_WORD;
  } else {
    t.exactMode = EXACT_HASHED;
  }
}

/** Entry `i` is now in the table. */
export function placed(t: Table, i: i32): void {
  if (t.exactMode == EXACT_SINGLE) {
    t.single = i;
  } else if (t.exactMode == EXACT_DIRECT) {
    const v = <i32>getU16(valueOf(t, entryAt(t, i)));
    if (v < t.directLen) store<i32>(t.direct + (<usize>v << 2), i);
  }
}

/** Entry `i` has left the table. */
export function removed(t: Table, i: i32): void {
  if (t.exactMode == EXACT_SINGLE) {
    t.single = -1;
  } else if (t.exactMode == EXACT_DIRECT) {
    const v = <i32>getU16(valueOf(t, entryAt(t, i)));
    if (v < t.directLen) store<i32>(t.direct + (<usize>v << 2), -1);
  }
}

export function lookup(t: Table, key: usize): i32 {
  const mode = t.exactMode;
  if (mode == EXACT_SINGLE) return t.single;
  if (mode == EXACT_DIRECT) {
    const v = <i32>getU16(key);
    if (v < t.directLen) return load<i32>(t.direct + (<usize>v << 2));
  } else if (mode == EXACT_WORD) {
    return tss.lookupWord(t, key);
  }
  return tss.lookupFirst(t, key);
}
