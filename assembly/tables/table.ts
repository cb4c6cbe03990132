// A match-action table: the top of the table engine, and what the rest of the
// data plane uses (pipeline/, write.ts, index.ts). It dispatches, and holds no
// entries itself. The layers, each importing only those below it:
//
//   table.ts        create, insert, modify, remove, undo, lookup: chooses a
//                   table's road and calls its kind and its index
//   indexes/        how entries are found, behind one interface
//                   (interface.ts): direct, keyed, keyed-prefix, tuple-space,
//                   range; slots.ts and groups.ts beneath them
//   kinds/          match kinds: what a match may be (check), how entries rank
//   storage.ts      the table and entry records, hit counters, the free list;
//   action.ts       an action as one word, a lookup's answer (Hit);
//   keys.ts, hash.ts key bytes, the hash
//
// Tie-breaks, written once (P4Runtime): LPM — the longest prefix wins;
// ternary, range, optional — the highest priority wins, and between equal
// priorities the smaller entry index; exact — at most one entry can match.
//
// Writes run at control time and may allocate (action data, growth);
// capacity is fixed at creation: TableFull. Nothing allocates on the lookup
// path.

import {
  ERR_BAD_MATCH_KEY,
  ERR_DUPLICATE_ENTRY,
  ERR_NOT_FOUND,
  ERR_OK,
  ERR_TABLE_FULL,
  KIND_EXACT,
  KIND_LPM,
  KIND_OPTIONAL,
  KIND_RANGE,
  KIND_TERNARY,
} from "../abi";
import { setU16, setU32 } from "../wire/bytes";
import { Hit, hit, rowOf } from "./action";
import * as direct from "./indexes/direct";
import { directAt, singleRow } from "./indexes/direct";
import { Index } from "./indexes/interface";
import * as keyed from "./indexes/keyed";
import * as prefix from "./indexes/keyed-prefix";
import * as rangeIndex from "./indexes/range";
import * as tss from "./indexes/tuple-space";
import { withinFields } from "./keys";
import * as exact from "./kinds/exact";
import * as lpm from "./kinds/lpm";
import * as optional from "./kinds/optional";
import * as range from "./kinds/range";
import * as ternary from "./kinds/ternary";
import * as storage from "./storage";
import { countHit, entryAt, Table } from "./storage";

export { actionOf, hit, Hit, MISS, rowOf, wordArg, wordCode, wordCount, wordOf } from "./action";
export { directRow, singleRow } from "./indexes/direct";
export { countHit, Entry, entryAt, FIELD_LEN, FREE, hitsAt, Table } from "./storage";

// ── Roads: how a table's lookups go, chosen at creation ─────────────────────

/** Exact, keyless: the one row (direct.ts). */
export const ROAD_SINGLE: i32 = 0;
/** Exact, a 16-bit identifier: the direct array (direct.ts). */
export const ROAD_DIRECT: i32 = 1;
/** Exact, a 32-bit identifier (a session): the direct array (direct.ts). */
export const ROAD_DIRECT32: i32 = 2;
/** Exact, fields within one word: the keyed index, one word a slot (keyed.ts). */
export const ROAD_WORD: i32 = 3;
/** Exact, fields within keyed.MAX_WORDS words: the keyed index (keyed.ts). */
export const ROAD_KEYED: i32 = 4;
/** LPM, fields within keyed-prefix.MAX_WORDS words: the keyed index by prefix (keyed-prefix.ts). */
export const ROAD_PREFIX: i32 = 5;
/** Exact or LPM on wider keys: the tuple space, the first match (tuple-space.ts). */
export const ROAD_FIRST: i32 = 6;
/** Ternary and optional: the tuple space, the best match (tuple-space.ts). */
export const ROAD_BEST: i32 = 7;
/** Range: entries in rank order (indexes/range.ts). */
export const ROAD_RANGE: i32 = 8;

/** Each road's index, by road. */
const INDEXES: StaticArray<Index> = [
  direct.index,
  direct.index,
  direct.index,
  keyed.index,
  keyed.index,
  prefix.index,
  tss.first,
  tss.best,
  rangeIndex.index,
];

@inline function indexOf(t: Table): Index {
  return unchecked(INDEXES[t.road]);
}

/** Room for the largest index's record. */
function indexRoom(): usize {
  let room: usize = 0;
  for (let r = 0; r < INDEXES.length; r++) room = max(room, unchecked(INDEXES[r]).recordLen);
  return room;
}

/** The road a table of `t.kind` with `t`'s fields takes. */
function roadFor(t: Table): i32 {
  switch (t.kind) {
    case KIND_EXACT: {
      if (t.words == 0) return ROAD_SINGLE;
      const bits = direct.identifierBits(t);
      if (bits != 0) return bits == 16 ? ROAD_DIRECT : ROAD_DIRECT32;
      if (keyed.oneWord(t) >= 0) return ROAD_WORD;
      return t.words <= keyed.MAX_WORDS ? ROAD_KEYED : ROAD_FIRST;
    }
    case KIND_LPM:
      return t.words <= prefix.MAX_WORDS ? ROAD_PREFIX : ROAD_FIRST;
    case KIND_RANGE:
      return ROAD_RANGE;
  }
  return ROAD_BEST;
}

/**
 * Creates a `role` table of `kind` with `keyLen`-byte keys (a multiple of 8)
 * and room for `capacity` entries; `fields` holds `nFields` FIELD_LEN records,
 * copied. Returns null if the layout is inconsistent (a programmer error).
 */
export function create(
  id: i32,
  role: i32,
  kind: i32,
  keyLen: i32,
  capacity: i32,
  fields: usize,
  nFields: i32,
): Table | null {
  const t = storage.create(id, role, kind, keyLen, capacity, fields, nFields, indexRoom());
  if (t == null) return null;
  t.road = roadFor(t);
  indexOf(t).make(t);
  return t;
}

/** Frees the table: its index, its entries, their action data. */
export function destroy(t: Table): void {
  indexOf(t).free(t);
  storage.destroy(t);
}

// ── Match kinds ────────────────────────────────────────────────────────────

/** Validates an entry's match for this table's kind; ERR_OK or ERR_BAD_MATCH_KEY. */
function check(t: Table, value: usize, mask: usize, lo: usize, hi: usize): i32 {
  if (!withinFields(t, value, mask)) return ERR_BAD_MATCH_KEY;
  switch (t.kind) {
    case KIND_EXACT:
      return exact.check(t, value, mask);
    case KIND_LPM:
      return lpm.check(t, value, mask);
    case KIND_TERNARY:
      return ternary.check(t, value, mask);
    case KIND_OPTIONAL:
      return optional.check(t, value, mask);
    case KIND_RANGE:
      return range.check(t, value, mask, lo, hi);
  }
  return ERR_BAD_MATCH_KEY;
}

/** The rank an entry takes: LPM ranks by prefix length; exact has none; the others by priority. */
function rank(t: Table, mask: usize, prio: i32): i32 {
  if (t.kind == KIND_LPM) return lpm.rank(t, mask);
  if (t.kind == KIND_EXACT) return 0;
  return prio;
}

// ── Lookups ────────────────────────────────────────────────────────────────

/**
 * The entry matching `key` best, with its action word where the index holds
 * it (action.ts: a Hit), or a miss. Counts a hit.
 */
@inline export function lookup(t: Table, key: usize): Hit {
  const h = lookupUncounted(t, key);
  const row = rowOf(h);
  if (row >= 0) countHit(t, row);
  return h;
}

/**
 * lookup without counting the hit: for a step, which counts it itself
 * (steps.ts; a plan may settle the row without a lookup). The keyless, in-link and one-word roads are
 * taken inline; the others through a call.
 */
@inline export function lookupUncounted(t: Table, key: usize): Hit {
  const road = t.road;
  return road == ROAD_WORD
    ? keyed.lookupWord(t, key)
    : road == ROAD_SINGLE
      ? hit(singleRow(t), 0)
      : road == ROAD_DIRECT
        ? direct.lookup16(t, key)
        : lookupOther(t, key);
}

/** Every road but the inline ones; counts no hit. */
function lookupOther(t: Table, key: usize): Hit {
  switch (t.road) {
    case ROAD_PREFIX:
      return prefix.lookup(t, key);
    case ROAD_KEYED:
      return keyed.lookupWide(t, key);
  }
  return indexOf(t).lookup(t, key);
}

/**
 * lookupUncounted for a one-field key given as a number, `bytes` wide
 * (transmit: out-link, 2; send: session, 4): from the direct array without a
 * key when it holds the value, else by the key built in `scratch`.
 */
@inline export function lookupIdUncounted(t: Table, id: u32, bytes: i32, scratch: usize): Hit {
  const road = t.road;
  const at = road == ROAD_DIRECT || road == ROAD_DIRECT32 ? directAt(t, id) : 0;
  if (at == 0) return lookupIdByKey(t, id, bytes, scratch);
  return hit(load<i32>(at), 0);
}

/** lookupIdUncounted when the direct array does not hold `id`: by its key, through a call (it is rare). */
function lookupIdByKey(t: Table, id: u32, bytes: i32, scratch: usize): Hit {
  return lookupUncounted(t, idKey(scratch, id, bytes));
}

/** The one-field key for `id` in `scratch`: big-endian, `bytes` wide, the rest of the word zero. */
function idKey(scratch: usize, id: u32, bytes: i32): usize {
  store<u64>(scratch, 0);
  if (bytes == 2) setU16(scratch, id);
  else setU32(scratch, id);
  return scratch;
}

/** Mean distance of the entries of a hashed index from their home slots (−1: not hashed). */
export function probeDistance(t: Table): f64 {
  return indexOf(t).probeDistance(t);
}

/** Bytes of the table's DIR-16-8-8 (indexes/dir.ts), 0 if it has none. */
export function dirBytes(t: Table): usize {
  return t.road == ROAD_PREFIX ? prefix.dirBytes(t) : 0;
}

// ── Writes ─────────────────────────────────────────────────────────────────

/** Index of the live entry with this match (and, where it ranks by it, priority), or -ERR_NOT_FOUND. */
export function locate(t: Table, value: usize, mask: usize, lo: usize, hi: usize, prio: i32): i32 {
  const i = indexOf(t).find(t, value, mask, lo, hi, rank(t, mask, prio));
  return i >= 0 ? i : -ERR_NOT_FOUND;
}

/**
 * Inserts an entry with no action yet (setAction gives it one); returns its
 * index (≥ 0) or −error.
 */
export function insert(t: Table, value: usize, mask: usize, lo: usize, hi: usize, prio: i32): i32 {
  const bad = check(t, value, mask, lo, hi);
  if (bad != ERR_OK) return -bad;
  const r = rank(t, mask, prio);
  const index = indexOf(t);
  if (index.find(t, value, mask, lo, hi, r) >= 0) return -ERR_DUPLICATE_ENTRY;
  if (t.freeHead < 0) {
    if (!storage.grow(t)) return -ERR_TABLE_FULL;
    index.grown(t);
  }
  const i = t.freeHead;
  storage.takeFree(t, i);
  storage.writeMatch(t, i, value, mask, lo, hi, r);
  index.place(t, i);
  return i;
}

/** Gives live entry `i` an action; `data` is a heap block the entry owns from now (0: none). */
export function setAction(t: Table, i: i32, code: u16, count: u16, arg: u32, arg2: u32, data: usize): void {
  const e = entryAt(t, i);
  e.code = code;
  e.count = count;
  e.arg = arg;
  e.arg2 = arg2;
  e.data = <u32>data;
  indexOf(t).actionSet(t, i);
}

/** Removes live entry `i` from the index and returns it to the free list (its bytes kept: restoreEntry). */
export function remove(t: Table, i: i32): void {
  indexOf(t).unplace(t, i);
  storage.giveBack(t, i);
}

/** A copy of entry `i`'s bytes (a heap block), for restoreAction or restoreEntry. */
export function save(t: Table, i: i32): usize {
  const copy = heap.alloc(<usize>t.entrySize);
  memory.copy(copy, changetype<usize>(entryAt(t, i)), <usize>t.entrySize);
  return copy;
}

/** Undoes setAction: live entry `i` gets its saved action back (its match is unchanged). */
export function restoreAction(t: Table, i: i32, saved: usize): void {
  memory.copy(changetype<usize>(entryAt(t, i)), saved, <usize>t.entrySize);
  indexOf(t).actionSet(t, i);
}

/** Undoes remove: entry `i`, free since, is taken back from the free list with its saved bytes. */
export function restoreEntry(t: Table, i: i32, saved: usize): void {
  storage.takeFree(t, i);
  memory.copy(changetype<usize>(entryAt(t, i)), saved, <usize>t.entrySize);
  indexOf(t).place(t, i);
}
