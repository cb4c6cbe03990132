// DIR-16-8-8: an IPv4 LPM table's lookups by the address's leading bits, one to
// three dependent reads whatever the prefix lengths present (keyed-prefix.ts,
// whose index stays the authority for writes, keeps it beside its slots). A
// cell is a u32:
//
//   0            no prefix covers it: a miss
//   entry + 1    the longest prefix covering it (bit 31 clear)
//   CHUNK | n    chunk n of 256 cells: the next 8 bits of the address decide
//
// The first level is 65,536 cells (256 KiB), by the address's top 16 bits; a
// cell there becomes a chunk when a prefix longer than /16 lands under it, and
// a chunk's cell a chunk of its own when a prefix longer than /24 does. So a
// chunk exists only while some prefix longer than its parent's level lies
// under it (a delete that leaves a chunk's 256 cells one leaf folds it back
// into its parent's cell): at most two chunks per prefix longer than /16, and
// the memory follows the prefixes, not the address space. (DIR-24-8's first
// level alone would be 64 MiB for every table.)
//
// An insert writes the cells its prefix covers where what they hold is no
// longer than it; a delete writes the cells that hold it with the longest
// shorter prefix covering it (the caller finds it in the keyed index). Neither
// rebuilds: a write costs the cells its prefix covers (a /24 one cell, a /8
// 256 and the chunks under them). The action words, as action.ts packs them,
// are kept by entry (`words`) so that a lookup need not read the entry.

import { hit, Hit, MISS } from "../action";

export const CHUNK: u32 = 0x80000000;
const CHUNK_CELLS: i32 = 256;
const CHUNK_SHIFT: u32 = 10; // 256 cells of 4 bytes
const L1_CELLS: i32 = 65536;
/** Chunks a slab holds: memory is taken 64 KiB at a time, never moved. */
const SLAB_CHUNKS: i32 = 64;

@unmanaged
export class Dir {
  /** The first level: L1_CELLS cells; 0 while the table has no DIR. */
  l1: usize;
  /** The slabs chunks are cut from (SLAB_CHUNKS each, 1 KiB-aligned), by their blocks: `slabs` of them, room for
   * `slabRoom`. */
  slabBlocks: usize;
  slabs: i32;
  slabRoom: i32;
  /** Chunks cut from the last slab so far. */
  cut: i32;
  /** The free chunks, linked through their first cell (a chunk's cell, or 0). */
  freeChunk: u32;
  /** Action words by entry (action.ts actionWord), `allocated` of them. */
  words: usize;
  allocated: i32;
  /** The address's byte offset in the key. */
  at: i32;
}

/** The lengths of the prefixes the cells hold: the entries' ranks, read at write time. */
export type LengthOf = (entryPlus1: u32) => i32;

/** A chunk's cells: a chunk's cell holds its address, 1 KiB-aligned, shifted down (linear memory is under 4 GiB). */
@inline function chunkAt(cell: u32): usize {
  return (<usize>(cell & ~CHUNK)) << CHUNK_SHIFT;
}

/** The longest prefix holding the address in `key`, with its action word; or a miss. */
@inline export function lookup(d: Dir, key: usize): Hit {
  const a = bswap<u32>(load<u32>(key + <usize>d.at));
  let c = load<u32>(d.l1 + ((<usize>(a >>> 16)) << 2));
  if (c & CHUNK) {
    c = load<u32>(chunkAt(c) + ((<usize>((a >>> 8) & 0xff)) << 2));
    if (c & CHUNK) c = load<u32>(chunkAt(c) + ((<usize>(a & 0xff)) << 2));
  }
  if (c == 0) return MISS;
  return hit(<i32>(c - 1), load<u32>(d.words + ((<usize>(c - 1)) << 2)));
}

/** Makes the first level (all misses) and room for `allocated` entries' words; the address at byte `at`. */
export function make(d: Dir, at: i32, allocated: i32): void {
  d.at = at;
  d.l1 = heap.alloc((<usize>L1_CELLS) << 2);
  memory.fill(d.l1, 0, (<usize>L1_CELLS) << 2);
  d.slabBlocks = 0;
  d.slabs = 0;
  d.slabRoom = 0;
  d.cut = SLAB_CHUNKS;
  d.freeChunk = 0;
  d.words = 0;
  d.allocated = 0;
  resize(d, allocated);
}

export function free(d: Dir): void {
  if (d.l1 == 0) return;
  for (let s = 0; s < d.slabs; s++) heap.free(load<usize>(d.slabBlocks + ((<usize>s) << alignof<usize>())));
  if (d.slabBlocks != 0) heap.free(d.slabBlocks);
  heap.free(d.l1);
  heap.free(d.words);
  d.l1 = 0;
  d.slabBlocks = 0;
  d.words = 0;
}

/** The table's entries grew to `allocated`: the words follow (the cells name entries by index, which growth keeps). */
export function resize(d: Dir, allocated: i32): void {
  const words = heap.alloc((<usize>allocated) << 2);
  memory.fill(words, 0, (<usize>allocated) << 2);
  if (d.words != 0) {
    memory.copy(words, d.words, (<usize>d.allocated) << 2);
    heap.free(d.words);
  }
  d.words = words;
  d.allocated = allocated;
}

export function setWord(d: Dir, i: i32, word: u32): void {
  store<u32>(d.words + ((<usize>i) << 2), word);
}

/** Bytes the DIR holds: its first level, its slabs and its words. */
export function bytes(d: Dir): usize {
  if (d.l1 == 0) return 0;
  return (
    ((<usize>L1_CELLS) << 2) + <usize>d.slabs * ((<usize>SLAB_CHUNKS + 1) << CHUNK_SHIFT) + ((<usize>d.allocated) << 2)
  );
}

/** A chunk whose 256 cells all hold `leaf`, as a cell (CHUNK | its address >> 10). */
function newChunk(d: Dir, leaf: u32): u32 {
  let cell = d.freeChunk;
  if (cell != 0) {
    d.freeChunk = load<u32>(chunkAt(cell));
  } else {
    if (d.cut == SLAB_CHUNKS) newSlab(d);
    const slab = load<usize>(d.slabBlocks + ((<usize>(d.slabs - 1)) << alignof<usize>()));
    const first = (slab + (((<usize>1) << CHUNK_SHIFT) - 1)) & ~(((<usize>1) << CHUNK_SHIFT) - 1);
    cell = CHUNK | (<u32>((first >> CHUNK_SHIFT) + <usize>d.cut));
    d.cut++;
  }
  const at = chunkAt(cell);
  for (let k = 0; k < CHUNK_CELLS; k++) store<u32>(at + ((<usize>k) << 2), leaf);
  return cell;
}

/** A slab more: room for SLAB_CHUNKS chunks 1 KiB-aligned. */
function newSlab(d: Dir): void {
  if (d.slabs == d.slabRoom) {
    const room = d.slabRoom == 0 ? 16 : d.slabRoom * 2;
    const blocks = heap.alloc((<usize>room) << alignof<usize>());
    if (d.slabBlocks != 0) {
      memory.copy(blocks, d.slabBlocks, (<usize>d.slabs) << alignof<usize>());
      heap.free(d.slabBlocks);
    }
    d.slabBlocks = blocks;
    d.slabRoom = room;
  }
  const block = heap.alloc((<usize>SLAB_CHUNKS + 1) << CHUNK_SHIFT);
  store<usize>(d.slabBlocks + ((<usize>d.slabs) << alignof<usize>()), block);
  d.slabs++;
  d.cut = 0;
}

function freeChunk(d: Dir, cell: u32): void {
  store<u32>(chunkAt(cell), d.freeChunk);
  d.freeChunk = cell;
}

/**
 * The cell at `at`, all of whose addresses a prefix of length `len` covers:
 * inserting (old = CHUNK), it takes `v` where it holds no longer prefix;
 * deleting, it takes `v` where it holds `old`. A chunk's cells the same way.
 */
function paint(d: Dir, at: usize, len: i32, old: u32, v: u32, lengthOf: LengthOf): void {
  const c = load<u32>(at);
  if (c & CHUNK) {
    const chunk = chunkAt(c);
    for (let k = 0; k < CHUNK_CELLS; k++) paint(d, chunk + ((<usize>k) << 2), len, old, v, lengthOf);
  } else if (old == CHUNK ? c == 0 || lengthOf(c) <= len : c == old) {
    store<u32>(at, v);
  }
}

/** Paints `n` cells from `at` on. */
function paintRun(d: Dir, at: usize, n: i32, len: i32, old: u32, v: u32, lengthOf: LengthOf): void {
  for (let k = 0; k < n; k++) paint(d, at + ((<usize>k) << 2), len, old, v, lengthOf);
}

/** The chunk in the cell at `at` (one made of its leaf if it holds a leaf): the chunk's cells' address. */
function chunkIn(d: Dir, at: usize): usize {
  let c = load<u32>(at);
  if (!(c & CHUNK)) {
    c = newChunk(d, c);
    store<u32>(at, c);
  }
  return chunkAt(c);
}

/** The cell at `at` holds a chunk whose cells are one leaf: the leaf goes back into the cell, the chunk is freed. */
function fold(d: Dir, at: usize): void {
  const c = load<u32>(at);
  if (!(c & CHUNK)) return;
  const chunk = chunkAt(c);
  const leaf = load<u32>(chunk);
  if (leaf & CHUNK) return;
  for (let k = 1; k < CHUNK_CELLS; k++) if (load<u32>(chunk + ((<usize>k) << 2)) != leaf) return;
  store<u32>(at, leaf);
  freeChunk(d, c);
}

/**
 * Writes prefix `a`/`len` (a masked): inserting, `v` = its entry + 1 and `old`
 * = CHUNK; deleting, `old` = its entry + 1 and `v` the longest shorter prefix
 * covering it (entry + 1, or 0).
 */
export function write(d: Dir, a: u32, len: i32, old: u32, v: u32, lengthOf: LengthOf): void {
  const l1 = d.l1 + ((<usize>(a >>> 16)) << 2);
  if (len <= 16) {
    paintRun(d, l1, 1 << (16 - len), len, old, v, lengthOf);
    return;
  }
  const l2 = chunkIn(d, l1) + ((<usize>((a >>> 8) & 0xff)) << 2);
  if (len <= 24) paintRun(d, l2, 1 << (24 - len), len, old, v, lengthOf);
  else paintRun(d, chunkIn(d, l2) + ((<usize>(a & 0xff)) << 2), 1 << (32 - len), len, old, v, lengthOf);
  if (old == CHUNK) return;
  if (len > 24) fold(d, l2);
  fold(d, l1);
}
