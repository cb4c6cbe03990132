// A match-action table in flat memory, and the one interface every match kind
// sits behind: create, insert, modify, remove, lookup.
//
// Keys are byte strings of `keyLen` bytes (a multiple of 8), big-endian fields
// at fixed offsets (a design's key vector, or a one-field key for transmit and
// send). A table declares its fields — (offset, length, match kind) — and an
// entry is value/mask over the whole key, plus lo/hi bounds for range fields.
//
// Tie-breaks, written once (P4Runtime): LPM — the longest prefix wins;
// ternary, range, optional — the highest priority wins, and between equal
// priorities the smaller entry index; exact — at most one entry can match.
//
// Nothing here allocates on the lookup path. Writes run at control time and
// may allocate (action data); capacity is fixed at creation: TableFull.
// Memory follows the entries in use, not the capacity: a table starts with room
// for INITIAL_ENTRIES and doubles (entries, hit counters, hash indexes) when a
// write finds no free entry, up to its capacity — so a description of a
// thousand small tables, each of the default capacity, stays small and the
// lines a packet touches stay close together.

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
import { hit, Hit, rowOf } from "./action";
import * as exact from "./exact";
import * as lpm from "./lpm";
import * as optional from "./optional";
import * as range from "./range";
import * as ternary from "./ternary";
import * as tss from "./tuple-space";

export { actionOf, Hit, MISS, rowOf, wordArg, wordCode, wordCount, wordOf } from "./action";
export { directRow } from "./exact";

/**
 * One declared key field.
 *
 *   ┌─────────────┬──────────┬──────────┐
 *   │ offset u16  │ len u16  │ kind u32 │   FIELD_LEN = 8
 *   └─────────────┴──────────┴──────────┘
 */
export const FIELD_LEN: i32 = 8;

/**
 * An entry: a fixed header, then value, mask (and for range tables lo, hi),
 * each `keyLen` bytes; entries are ENTRY_ALIGN-aligned, so the 32-byte header
 * (the action with it) is one cache line.
 *
 *   ┌──────────┬───────────┬──────────┬──────────┬─────────────────────────────────────────────┐
 *   │ prio i32 │ group i32 │ hash u32 │ next i32 │ action: code u16 count u16 arg arg2 data u32 │
 *   ├──────────┴───────────┴──────────┴──────────┴─────────────────────────────────────────────┤
 *   │ value[keyLen] │ mask[keyLen] │ lo[keyLen] │ hi[keyLen]                                   │
 *   └──────────────────────────────────────────────────────────────────────────────────────────┘
 *
 * `group` is -1 for a free entry; `next` links free entries. Hit counters are
 * a separate u64 array (`hits`, by entry index): a lookup writes there and
 * only reads the entries.
 */
@unmanaged export class Entry {
  prio: i32;
  group: i32;
  hash: u32;
  next: i32;
  code: u16;
  count: u16;
  arg: u32;
  arg2: u32;
  data: u32;
}
export const ENTRY_HEADER_LEN: i32 = <i32>offsetof<Entry>();
export const ENTRY_ALIGN: i32 = 32;
export const FREE: i32 = -1;

@unmanaged export class Table {
  id: i32;
  kind: i32;
  /** Which of the member's five tables (ROLE_*): decides the actions it may hold. */
  role: i32;
  keyLen: i32;
  /** u64 words of the key that any field touches: hashing and comparing stop there. */
  words: i32;
  /** No field but the in-link (key bytes 0–1): a lookup needs no parsed header. */
  inLinkOnly: bool;
  capacity: i32;
  /** Entries with memory now (≤ capacity): see grow(). */
  allocated: i32;
  count: i32;
  entrySize: i32;
  entries: usize;
  /** The heap block `entries` lies in (entries are ENTRY_ALIGN-aligned within it). */
  entriesBlock: usize;
  /** u64 hit count per entry. */
  hits: usize;
  freeHead: i32;
  fields: usize;
  nFields: i32;
  /** Union of the declared fields: keyLen bytes, 0xff where a field sits. */
  mask: usize;
  /** tuple-space index: (entry + 1 : u32, hash : u32) slots, a power of two. */
  slots: usize;
  slotMask: u32;
  /** tuple-space groups (one per distinct mask) and their visiting order. */
  groups: usize;
  groupSize: i32;
  groupFree: i32;
  groupsUsed: i32;
  order: usize;
  nOrder: i32;
  /** range: entry indices by priority. */
  sorted: usize;
  nSorted: i32;
  /** How lookups go: ROAD_* (chosen at creation from the kind and the fields). */
  road: i32;
  /** exact: how lookups go (exact.ts: EXACT_*), the keyless table's entry, a direct index by a 16-bit key (exact.ts directAt). */
  exactMode: i32;
  single: i32;
  direct: usize;
  /** exact, keys of at most KEYED_MAX_WORDS words: the keyed index (exact.ts), its slot mask and slot size (bytes, log2). */
  keyed: usize;
  keyedBlock: usize;
  keyedMask: u32;
  keyedShift: u32;
  /** The byte of the key the keyed index's words start at: 0, or for EXACT_WORD the one word the fields lie in. */
  keyedFrom: i32;
  /** plan.ts: whether every row is physical (a transmit table), as found after table write `physicalAt` (write.ts tableWrites; 0: not looked at). */
  physicalAt: u32;
  allPhysical: bool;
}

@inline export function entryAt(t: Table, i: i32): Entry {
  return changetype<Entry>(t.entries + <usize>(i * t.entrySize));
}
@inline export function hitsAt(t: Table, i: i32): u64 {
  return load<u64>(t.hits + (<usize>i << 3));
}
@inline export function countHit(t: Table, i: i32): void {
  const p = t.hits + (<usize>i << 3);
  store<u64>(p, load<u64>(p) + 1);
}
@inline export function valueOf(t: Table, e: Entry): usize {
  return changetype<usize>(e) + ENTRY_HEADER_LEN;
}
@inline export function maskOf(t: Table, e: Entry): usize {
  return changetype<usize>(e) + ENTRY_HEADER_LEN + <usize>t.keyLen;
}
@inline export function loOf(t: Table, e: Entry): usize {
  return changetype<usize>(e) + ENTRY_HEADER_LEN + <usize>(2 * t.keyLen);
}
@inline export function hiOf(t: Table, e: Entry): usize {
  return changetype<usize>(e) + ENTRY_HEADER_LEN + <usize>(3 * t.keyLen);
}
@inline export function fieldOffset(t: Table, f: i32): i32 {
  return <i32>load<u16>(t.fields + <usize>(f * FIELD_LEN));
}
@inline export function fieldLen(t: Table, f: i32): i32 {
  return <i32>load<u16>(t.fields + <usize>(f * FIELD_LEN), 2);
}
@inline export function fieldKind(t: Table, f: i32): i32 {
  return load<i32>(t.fields + <usize>(f * FIELD_LEN), 4);
}

function nextPow2(n: u32): u32 {
  return n <= 1 ? 1 : 1 << (32 - clz(n - 1));
}

/** Entries a table has memory for at creation. */
export const INITIAL_ENTRIES: i32 = 16;

/** Hash-index slots for `entries` entries: a power of two, at least twice as many, at least 16. */
export function slotsFor(entries: i32): u32 {
  return nextPow2(<u32>entries * 2 < 16 ? 16 : <u32>entries * 2);
}

/**
 * Gives the table memory for `n` entries (n > allocated): the live ones are
 * copied, the new ones (allocated … n−1) join the free list in index order —
 * the order a table made whole at creation would hand them out in, since the
 * list is empty whenever the table grows.
 */
function allocateEntries(t: Table, n: i32): void {
  const old = t.allocated;
  const block = heap.alloc(<usize>(n * t.entrySize + ENTRY_ALIGN));
  const entries = (block + <usize>(ENTRY_ALIGN - 1)) & ~<usize>(ENTRY_ALIGN - 1);
  memory.fill(entries, 0, <usize>(n * t.entrySize));
  const hits = heap.alloc(<usize>n << 3);
  memory.fill(hits, 0, <usize>n << 3);
  if (old > 0) {
    memory.copy(entries, t.entries, <usize>(old * t.entrySize));
    memory.copy(hits, t.hits, <usize>old << 3);
    heap.free(t.entriesBlock);
    heap.free(t.hits);
  }
  t.entries = entries;
  t.entriesBlock = block;
  t.hits = hits;
  t.allocated = n;
  for (let i = old; i < n; i++) {
    const e = entryAt(t, i);
    e.group = FREE;
    e.next = i + 1 < n ? i + 1 : t.freeHead;
  }
  if (old < n) t.freeHead = old;
}

/** Doubles the table's entries (up to its capacity) and re-makes its hash indexes; false when it is at capacity. */
function grow(t: Table): bool {
  if (t.allocated >= t.capacity) return false;
  const n = t.allocated * 2 < t.capacity ? t.allocated * 2 : t.capacity;
  allocateEntries(t, n);
  if (t.kind != KIND_RANGE && slotsFor(n) > t.slotMask + 1) {
    const nSlots = slotsFor(n);
    heap.free(t.slots);
    t.slots = heap.alloc(<usize>(nSlots * 8));
    memory.fill(t.slots, 0, <usize>(nSlots * 8));
    t.slotMask = nSlots - 1;
    for (let i = 0; i < t.allocated; i++) if (entryAt(t, i).group != FREE) tss.place(t, i);
  }
  if (t.kind == KIND_EXACT) exact.resize(t);
  else if (t.kind == KIND_LPM) lpm.resize(t);
  return true;
}

/**
 * Creates a `role` table of `kind` with `keyLen`-byte keys (a multiple of 8)
 * and room for `capacity` entries; `fields` holds `nFields` FIELD_LEN records,
 * copied. Returns null if the layout is inconsistent (a programmer error).
 */
export function create(id: i32, role: i32, kind: i32, keyLen: i32, capacity: i32, fields: usize, nFields: i32): Table | null {
  if (keyLen <= 0 || keyLen & 7 || capacity <= 0 || nFields < 0) return null;
  const t = changetype<Table>(heap.alloc(offsetof<Table>()));
  memory.fill(changetype<usize>(t), 0, offsetof<Table>());
  t.id = id;
  t.role = role;
  t.kind = kind;
  t.keyLen = keyLen;
  t.capacity = capacity;
  t.fields = heap.alloc(<usize>(nFields * FIELD_LEN) + 1);
  memory.copy(t.fields, fields, <usize>(nFields * FIELD_LEN));
  t.nFields = nFields;
  t.mask = heap.alloc(<usize>keyLen);
  memory.fill(t.mask, 0, <usize>keyLen);
  let last = 0;
  for (let f = 0; f < nFields; f++) {
    const off = fieldOffset(t, f);
    const len = fieldLen(t, f);
    if (off + len > keyLen || len == 0) return null;
    memory.fill(t.mask + <usize>off, 0xff, <usize>len);
    if (off + len > last) last = off + len;
  }
  t.words = (last + 7) >> 3;
  t.inLinkOnly = last == 0 || (t.words == 1 && (load<u64>(t.mask) & ~(<u64>0xffff)) == 0);
  t.entrySize = (ENTRY_HEADER_LEN + keyLen * (kind == KIND_RANGE ? 4 : 2) + ENTRY_ALIGN - 1) & ~(ENTRY_ALIGN - 1);
  t.allocated = 0;
  t.freeHead = -1;
  allocateEntries(t, capacity < INITIAL_ENTRIES ? capacity : INITIAL_ENTRIES);
  if (kind == KIND_RANGE) {
    t.sorted = heap.alloc(<usize>(capacity * 4));
  } else {
    const nSlots = slotsFor(t.allocated);
    t.slots = heap.alloc(<usize>(nSlots * 8));
    memory.fill(t.slots, 0, <usize>(nSlots * 8));
    t.slotMask = nSlots - 1;
    // Exact has one group; LPM at most one per prefix length; others one per distinct mask.
    const maxGroups = kind == KIND_EXACT ? 1 : capacity;
    t.groupSize = tss.GROUP_HEADER_LEN + keyLen;
    t.groups = heap.alloc(<usize>(maxGroups * t.groupSize));
    t.order = heap.alloc(<usize>(maxGroups * 4));
    t.groupFree = -1;
  }
  if (kind == KIND_EXACT) exact.prepare(t);
  else if (kind == KIND_LPM) lpm.prepare(t);
  t.road = kind == KIND_EXACT ? t.exactMode : kind == KIND_LPM ? ROAD_LPM : kind == KIND_RANGE ? ROAD_RANGE : ROAD_TUPLES;
  return t;
}

// ── Keys ───────────────────────────────────────────────────────────────────

/** Whether every byte set in `a` (keyLen bytes) is also set in `b`. */
export function maskWithin(a: usize, b: usize, keyLen: i32): bool {
  for (let i = 0; i < keyLen; i += 8) {
    const x = load<u64>(a + <usize>i);
    if ((x & load<u64>(b + <usize>i)) != x) return false;
  }
  return true;
}

/** Whether key bytes [off, off+len) of `a` are all 0x00 or all 0xff: "exact or absent". */
export function fieldAllOrNothing(m: usize, off: i32, len: i32): i32 {
  const first = load<u8>(m + <usize>off);
  if (first != 0 && first != 0xff) return -1;
  for (let i = 1; i < len; i++) if (load<u8>(m + <usize>(off + i)) != first) return -1;
  return first == 0xff ? 1 : 0;
}

/** The prefix length of the mask bytes [off, off+len), or -1 if they are not a prefix mask. */
export function prefixLen(m: usize, off: i32, len: i32): i32 {
  let bits = 0;
  let i = 0;
  while (i < len && load<u8>(m + <usize>(off + i)) == 0xff) {
    bits += 8;
    i++;
  }
  if (i < len) {
    const b = <u32>load<u8>(m + <usize>(off + i));
    const ones = clz<u32>(~(b << 24));
    if (((b << ones) & 0xff) != 0) return -1; // ones not contiguous from the top
    bits += ones;
    i++;
    for (; i < len; i++) if (load<u8>(m + <usize>(off + i)) != 0) return -1;
  }
  return bits;
}

/** Big-endian comparison of `len` bytes. */
export function compareBytes(a: usize, b: usize, len: i32): i32 {
  for (let i = 0; i < len; i++) {
    const x = load<u8>(a + <usize>i);
    const y = load<u8>(b + <usize>i);
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

/** Checks what every kind requires: the mask within the declared fields, no value bits outside it. */
export function checkCommon(t: Table, value: usize, mask: usize): i32 {
  if (!maskWithin(mask, t.mask, t.keyLen)) return ERR_BAD_MATCH_KEY;
  if (!maskWithin(value, mask, t.keyLen)) return ERR_BAD_MATCH_KEY;
  return ERR_OK;
}

// ── The interface ──────────────────────────────────────────────────────────

/** Validates an entry's match for this table's kind; ERR_OK or ERR_BAD_MATCH_KEY. */
function check(t: Table, value: usize, mask: usize, lo: usize, hi: usize): i32 {
  switch (t.kind) {
    case KIND_EXACT: return exact.check(t, value, mask);
    case KIND_LPM: return lpm.check(t, value, mask);
    case KIND_TERNARY: return ternary.check(t, value, mask);
    case KIND_OPTIONAL: return optional.check(t, value, mask);
    case KIND_RANGE: return range.check(t, value, mask, lo, hi);
  }
  return ERR_BAD_MATCH_KEY;
}

/** The priority an entry ranks by: LPM ranks by prefix length; exact has none. */
function rank(t: Table, mask: usize, prio: i32): i32 {
  if (t.kind == KIND_LPM) return lpm.rank(t, mask);
  if (t.kind == KIND_EXACT) return 0;
  return prio;
}

/** The entry with exactly this match (and, where it ranks by it, priority), or -1. */
export function find(t: Table, value: usize, mask: usize, lo: usize, hi: usize, prio: i32): i32 {
  if (t.kind == KIND_RANGE) return range.find(t, value, mask, lo, hi, prio);
  return tss.find(t, value, mask, rank(t, mask, prio));
}

// Roads: how a lookup goes. The exact ones are exact.ts's modes; the most
// common (a keyless table, a one-word key, an in-link) are taken inline on the
// packet path.
export const ROAD_SINGLE: i32 = exact.EXACT_SINGLE;
export const ROAD_WORD: i32 = exact.EXACT_WORD;
export const ROAD_DIRECT: i32 = exact.EXACT_DIRECT;
export const ROAD_DIRECT32: i32 = exact.EXACT_DIRECT32;
export const ROAD_LPM: i32 = 8;
export const ROAD_TUPLES: i32 = 9; // ternary, optional
export const ROAD_RANGE: i32 = 10;

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

/** lookup without counting the hit: for a caller that may yet leave the packet to another path (fast.ts). */
@inline export function lookupUncounted(t: Table, key: usize): Hit {
  const road = t.road;
  return road == ROAD_WORD ? exact.lookupWord(t, key) : road == ROAD_SINGLE ? hit(t.single, 0) : road == ROAD_DIRECT ? exact.lookupDirect(t, key) : lookupOther(t, key);
}

/**
 * lookup for a one-field key given as a number, `bytes` wide (transmit:
 * out-link, 2; send: session, 4): from the direct index without a key when it
 * holds the value, else by the key built in `scratch`.
 */
@inline export function lookupId(t: Table, id: u32, bytes: i32, scratch: usize): Hit {
  const road = t.road;
  const at = road == ROAD_DIRECT || road == ROAD_DIRECT32 ? exact.directAt(t, id) : 0;
  if (at == 0) return lookup(t, idKey(scratch, id, bytes));
  const e = load<i32>(at);
  if (e >= 0) countHit(t, e);
  return hit(e, 0);
}

/** The one-field key for `id` in `scratch`: big-endian, `bytes` wide, the rest of the word zero. */
function idKey(scratch: usize, id: u32, bytes: i32): usize {
  store<u64>(scratch, 0);
  if (bytes == 2) setU16(scratch, id);
  else setU32(scratch, id);
  return scratch;
}

/** Every road but the inline ones; counts no hit. */
function lookupOther(t: Table, key: usize): Hit {
  switch (t.road) {
    case ROAD_LPM: return lpm.lookup(t, key);
    case ROAD_RANGE: return hit(range.lookup(t, key), 0);
    case ROAD_TUPLES: return hit(tss.lookup(t, key), 0);
  }
  return exact.lookup(t, key);
}

/**
 * Inserts an entry; returns its index (≥ 0) or −error. The action is set by
 * the caller on the returned entry.
 */
export function insert(t: Table, value: usize, mask: usize, lo: usize, hi: usize, prio: i32): i32 {
  const bad = check(t, value, mask, lo, hi);
  if (bad != ERR_OK) return -bad;
  const r = rank(t, mask, prio);
  if (find(t, value, mask, lo, hi, prio) >= 0) return -ERR_DUPLICATE_ENTRY;
  if (t.freeHead < 0 && !grow(t)) return -ERR_TABLE_FULL;
  const i = t.freeHead;
  takeFree(t, i);
  placeEntry(t, i, value, mask, lo, hi, r);
  return i;
}

/** Puts entry `i` (already taken from the free list) into the table's index. */
export function placeEntry(t: Table, i: i32, value: usize, mask: usize, lo: usize, hi: usize, r: i32): void {
  const e = entryAt(t, i);
  e.prio = r;
  store<u64>(t.hits + (<usize>i << 3), 0);
  e.code = 0;
  e.count = 0;
  e.arg = 0;
  e.arg2 = 0;
  e.data = 0;
  memory.copy(valueOf(t, e), value, <usize>t.keyLen);
  memory.copy(maskOf(t, e), mask, <usize>t.keyLen);
  if (t.kind == KIND_RANGE) {
    memory.copy(loOf(t, e), lo, <usize>t.keyLen);
    memory.copy(hiOf(t, e), hi, <usize>t.keyLen);
    range.link(t, i);
  } else {
    tss.link(t, i);
  }
  placed(t, i);
  t.count++;
}

/** Puts back entry `i` whose bytes were restored by the caller (undo of a removal). */
export function relink(t: Table, i: i32): void {
  if (t.kind == KIND_RANGE) range.link(t, i);
  else tss.link(t, i);
  placed(t, i);
  t.count++;
}

/** Entry `i` (linked) goes into the lookup index its kind keeps beside the tuple-space one, if any. */
function placed(t: Table, i: i32): void {
  if (t.kind == KIND_EXACT) exact.placed(t, i);
  else if (t.kind == KIND_LPM) lpm.placed(t, i);
}

/** Entry `i`'s action was set or restored: an index that holds actions follows (write.ts). */
export function actionChanged(t: Table, i: i32): void {
  if (t.kind == KIND_EXACT) exact.actionChanged(t, i);
  else if (t.kind == KIND_LPM) lpm.actionChanged(t, i);
}

/** Removes entry `i` from the index and returns it to the free list. */
export function removeAt(t: Table, i: i32): void {
  if (t.kind == KIND_LPM) lpm.removed(t, i); // while its group is live
  if (t.kind == KIND_RANGE) range.unlink(t, i);
  else tss.unlink(t, i);
  if (t.kind == KIND_EXACT) exact.removed(t, i);
  const e = entryAt(t, i);
  e.group = FREE;
  e.next = t.freeHead;
  t.freeHead = i;
  t.count--;
}

/** Takes entry `i` off the free list (it is the head after an exact undo, but need not be). */
export function takeFree(t: Table, i: i32): bool {
  if (t.freeHead == i) {
    t.freeHead = entryAt(t, i).next;
    entryAt(t, i).group = 0;
    return true;
  }
  let p = t.freeHead;
  while (p >= 0) {
    const pe = entryAt(t, p);
    if (pe.next == i) {
      pe.next = entryAt(t, i).next;
      entryAt(t, i).group = 0;
      return true;
    }
    p = pe.next;
  }
  return false;
}

/** Index of the live entry with this match, or -ERR_NOT_FOUND. */
export function locate(t: Table, value: usize, mask: usize, lo: usize, hi: usize, prio: i32): i32 {
  const i = find(t, value, mask, lo, hi, prio);
  return i >= 0 ? i : -ERR_NOT_FOUND;
}
