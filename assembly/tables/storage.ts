// The bottom layer of a table: its record, its declared fields, its entries
// (match and action), their hit counters and the free list. It knows nothing
// of how entries are found: a table's index (indexes/) keeps a record of its
// own right after the table's (indexAt), and table.ts says which.
//
// Keys are byte strings of `keyLen` bytes (a multiple of 8), big-endian fields
// at fixed offsets (a design's key vector, or a one-field key for transmit and
// send). A table declares its fields — (offset, length, match kind) — and an
// entry is value/mask over the whole key, plus lo/hi bounds for range fields.
//
// Memory follows the entries in use, not the capacity: a table starts with room
// for INITIAL_ENTRIES and doubles (grow) when a write finds no free entry, up
// to its capacity — so a description of a thousand small tables, each of the
// default capacity, stays small and the lines a packet touches stay close
// together. Nothing here allocates on the lookup path.

import { KIND_RANGE } from "../abi";

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
 * `prio` is the entry's rank (kinds/: a priority, a prefix length, or 0).
 * `group` is FREE for a free entry, else the index's (a tuple-space group, or
 * 0); `hash` is the index's too. `next` links free entries. Hit counters are a
 * separate u64 array (`hits`, by entry index): a lookup writes there and only
 * reads the entries.
 */
@unmanaged
export class Entry {
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

/**
 * A table: what a lookup reads first, then the rest; its index's record
 * (indexes/: up to the room table.ts asks for) follows it.
 *
 *   ┌──────────┬───────────┬──────────────┬─────────────┬───────────────┬──────────┬─────────┬────────────────┐
 *   │ road i32 │ words i32 │ mask usize   │ entries     │ entrySize i32 │ hits     │ id kind │ … nFields      │
 *   ├──────────┴───────────┴──────────────┴─────────────┴───────────────┴──────────┴─────────┴────────────────┤
 *   │ the index's record (indexAt)                                                                          │
 *   └───────────────────────────────────────────────────────────────────────────────────────────────────────┘
 */
@unmanaged
export class Table {
  /** How lookups go: table.ts's ROAD_*, chosen at creation from the kind and the fields. */
  road: i32;
  /** u64 words of the key that any field touches: hashing and comparing stop there. */
  words: i32;
  /** Union of the declared fields: keyLen bytes, 0xff where a field sits. */
  mask: usize;
  /** ENTRY_ALIGN-aligned, within the heap block `entriesBlock`. */
  entries: usize;
  entrySize: i32;
  /** u64 hit count per entry. */
  hits: usize;
  id: i32;
  kind: i32;
  /** Which of the member's five tables (ROLE_*): decides the actions it may hold. */
  role: i32;
  keyLen: i32;
  /** No field but the in-link (key bytes 0–1): a lookup needs no parsed header. */
  inLinkOnly: bool;
  capacity: i32;
  /** Entries with memory now (≤ capacity): see grow(). */
  allocated: i32;
  /** Live entries. */
  count: i32;
  freeHead: i32;
  entriesBlock: usize;
  fields: usize;
  nFields: i32;
}
/** Where a table's index record starts: right after the table's. */
const TABLE_LEN: usize = (offsetof<Table>() + 7) & ~(<usize>7);

@inline export function indexAt(t: Table): usize {
  return changetype<usize>(t) + TABLE_LEN;
}
@inline export function entryAt(t: Table, i: i32): Entry {
  return changetype<Entry>(t.entries + <usize>(i * t.entrySize));
}
@inline export function hitsAt(t: Table, i: i32): u64 {
  return load<u64>(t.hits + ((<usize>i) << 3));
}
@inline export function countHit(t: Table, i: i32): void {
  const p = t.hits + ((<usize>i) << 3);
  store<u64>(p, load<u64>(p) + 1);
}
@inline export function isLive(t: Table, i: i32): bool {
  return entryAt(t, i).group != FREE;
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

/** Entries a table has memory for at creation. */
export const INITIAL_ENTRIES: i32 = 16;

/**
 * A `role` table of `kind` with `keyLen`-byte keys (a multiple of 8), room for
 * `capacity` entries and `indexLen` bytes of index record (zeroed); `fields`
 * holds `nFields` FIELD_LEN records, copied. Null if the layout is
 * inconsistent (a programmer error).
 */
export function create(
  id: i32,
  role: i32,
  kind: i32,
  keyLen: i32,
  capacity: i32,
  fields: usize,
  nFields: i32,
  indexLen: usize,
): Table | null {
  if (keyLen <= 0 || keyLen & 7 || capacity <= 0 || nFields < 0) return null;
  const t = changetype<Table>(heap.alloc(TABLE_LEN + indexLen));
  memory.fill(changetype<usize>(t), 0, TABLE_LEN + indexLen);
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
    if (off + len > keyLen || len == 0) {
      destroy(t);
      return null;
    }
    memory.fill(t.mask + <usize>off, 0xff, <usize>len);
    if (off + len > last) last = off + len;
  }
  t.words = (last + 7) >> 3;
  t.inLinkOnly = last == 0 || (t.words == 1 && (load<u64>(t.mask) & ~(<u64>0xffff)) == 0);
  t.entrySize = (ENTRY_HEADER_LEN + keyLen * (kind == KIND_RANGE ? 4 : 2) + ENTRY_ALIGN - 1) & ~(ENTRY_ALIGN - 1);
  t.freeHead = -1;
  allocateEntries(t, capacity < INITIAL_ENTRIES ? capacity : INITIAL_ENTRIES);
  return t;
}

/** Frees the table's storage — its record, entries, counters and every entry's action data — once its index has let go.
 * */
export function destroy(t: Table): void {
  for (let i = 0; i < t.allocated; i++) {
    const e = entryAt(t, i);
    if (e.group != FREE && e.data != 0) heap.free(<usize>e.data);
  }
  heap.free(t.fields);
  heap.free(t.mask);
  if (t.entriesBlock != 0) heap.free(t.entriesBlock); // `entries` is an aligned pointer into it
  if (t.hits != 0) heap.free(t.hits);
  heap.free(changetype<usize>(t));
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
  const entries = (block + <usize>(ENTRY_ALIGN - 1)) & ~(<usize>(ENTRY_ALIGN - 1));
  memory.fill(entries, 0, <usize>(n * t.entrySize));
  const hits = heap.alloc((<usize>n) << 3);
  memory.fill(hits, 0, (<usize>n) << 3);
  if (old > 0) {
    memory.copy(entries, t.entries, <usize>(old * t.entrySize));
    memory.copy(hits, t.hits, (<usize>old) << 3);
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

/** Doubles the table's entries, up to its capacity; false when it is at capacity. The caller re-makes its index. */
export function grow(t: Table): bool {
  if (t.allocated >= t.capacity) return false;
  allocateEntries(t, t.allocated * 2 < t.capacity ? t.allocated * 2 : t.capacity);
  return true;
}

/**
 * Writes entry `i`'s match (value, mask, and for a range table lo, hi) and
 * rank; its action and hit count start at zero.
 */
export function writeMatch(t: Table, i: i32, value: usize, mask: usize, lo: usize, hi: usize, rank: i32): void {
  const e = entryAt(t, i);
  e.prio = rank;
  store<u64>(t.hits + ((<usize>i) << 3), 0);
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
  }
}

/** Takes entry `i` off the free list (the head after an insert's grow or an undo, but it need not be); it is live from
 * now. */
export function takeFree(t: Table, i: i32): bool {
  if (t.freeHead == i) {
    t.freeHead = entryAt(t, i).next;
  } else {
    let p = t.freeHead;
    while (p >= 0 && entryAt(t, p).next != i) p = entryAt(t, p).next;
    if (p < 0) return false;
    entryAt(t, p).next = entryAt(t, i).next;
  }
  entryAt(t, i).group = 0;
  t.count++;
  return true;
}

/** Returns live entry `i` to the free list (the head: the next insert takes it back). */
export function giveBack(t: Table, i: i32): void {
  const e = entryAt(t, i);
  e.group = FREE;
  e.next = t.freeHead;
  t.freeHead = i;
  t.count--;
}
