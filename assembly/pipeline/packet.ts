// Packet descriptors and the buffers they point into.
//
// A packet's bytes live either in the input staging area the TypeScript side
// filled or in a slot of the buffer pool. Copies made by replication share
// bytes; the first write to shared or read-only bytes copies them into a slot
// of the packet's own (copy-on-write). An input packet whose staging bytes are
// its own (the batch's packets lie apart: run.ts inputWritable) holds them as
// slot INPUT_OWN and is written in place (a TTL, a header pushed where one was
// popped); replication makes them shared, read-only (slot −1), as the staging
// bytes of a batch not known to lie apart are. `base` is where the bytes it may
// write start (its slot's, or its own first byte in the staging area): the room
// in front is data − base.
//
// A descriptor, followed by the key vector of the member that last parsed it:
//
//   ┌────────────┬─────────┬─────────────┬──────────┬────────────┬────────────┬─────────────┬──────────┐
//   │ data usize │ len u32 │ origLen u32 │ slot i32 │ member i32 │ inLink u32 │ outLink u32 │ link i32 │
//   ├────────────┼─────────┼─────────────┼──────────┼────────────┼────────────┼─────────────┼──────────┤
//   │ stage i32  │ hops u32│ packet u32  │ copy u32 │ session u32│ keyMember  │ hdrLen u32  │ via i32  │
//   ├────────────┼─────────┴──┬──────────┴────────────────────────────────────────────────────────────┤
//   │ tsSec u32  │ tsNsec u32 │ base usize │ key[KEY_MAX_LEN], on a word                              │
//   └────────────┴────────────┴────────────┴──────────────────────────────────────────────────────────┘
//
// len, origLen and tsSec, tsNsec are pairs in the order of a pcap record's header (incl_len, orig_len; ts_sec,
// ts_nsec): a recording takes each pair with one load (recording.ts recordingAppend).

import { KEY_MAX_LEN, STAGE_LINK, STAGE_TRANSMIT } from "../abi";

@unmanaged
export class Packet {
  data: usize;
  len: u32;
  origLen: u32;
  slot: i32;
  member: i32;
  /** The link identifier it arrived on at `member` (LINK_SELF when the member sends it, LINK_SHARED when handed over
   * by SharedForward; at send, the virtual link's): what acquire, forward and receive look up. */
  inLink: u32;
  /** The link identifier it leaves `member` on: what forward chooses and transmit looks up (and a link crossing
   * names). */
  outLink: u32;
  link: i32;
  stage: i32;
  hops: u32;
  /** Input packet number, and which copy of it this is (0 = the original). */
  packet: u32;
  copy: u32;
  session: u32;
  /** Member whose key vector `key` holds; −1 = none (must parse). */
  keyMember: i32;
  /** Bytes of keyMember's header at `data`, as parsed with the key. */
  hdrLen: u32;
  /** Layering: the underlay member whose send table takes the packet after its virtual link (−1: none). */
  via: i32;
  /** The input packet's time: whole seconds (a pcap record's ts_sec), and nanoseconds. */
  tsSec: u32;
  tsNsec: u32;
  /** Where the bytes the packet may write start: its slot's first byte, or its own in the staging area. */
  base: usize;
}
/** Where the pairs a pcap record's header takes whole are (see the drawing). */
export const PACKET_LENS: usize = offsetof<Packet>("len");
export const PACKET_TIME: usize = offsetof<Packet>("tsSec");
if (offsetof<Packet>("origLen") != PACKET_LENS + 4 || offsetof<Packet>("tsNsec") != PACKET_TIME + 4)
  ERROR("Packet: len, origLen and tsSec, tsNsec must each be a pair of u32, in that order");
/** Where the descriptor's fields are, for the TypeScript side (tests read a paused run's packet: run.ts heldPacket). */
export const PACKET_MEMBER: i32 = offsetof<Packet>("member");
export const PACKET_IN_LINK: i32 = offsetof<Packet>("inLink");
export const PACKET_OUT_LINK: i32 = offsetof<Packet>("outLink");
export const PACKET_LINK: i32 = offsetof<Packet>("link");
export const PACKET_STAGE: i32 = offsetof<Packet>("stage");
/** Where the key vector starts: after the fields, on a whole word (lookups load it a word at a time). */
const KEY_AT: usize = (offsetof<Packet>() + 7) & ~7;
export const PACKET_SIZE: i32 = <i32>KEY_AT + KEY_MAX_LEN;

@inline export function keyOf(d: Packet): usize {
  return changetype<usize>(d) + KEY_AT;
}

/** The link identifier step `stage` has in hand: the out-link at transmit and on the link, else the in-link. */
@inline export function linkIdAt(d: Packet, stage: i32): u32 {
  return stage == STAGE_TRANSMIT || stage == STAGE_LINK ? d.outLink : d.inLink;
}

/**
 * Copies `len` bytes. Small copies go 16 bytes at a time (SIMD): an engine may
 * make memory.copy a call out of generated code, dear for a 64-byte frame.
 */
@inline export function copyBytes(to: usize, from: usize, len: u32): void {
  if (len <= 256) {
    let i: usize = 0;
    for (; i + 16 <= <usize>len; i += 16) v128.store(to + i, v128.load(from + i));
    for (; i + 8 <= <usize>len; i += 8) store<u64>(to + i, load<u64>(from + i));
    for (; i < <usize>len; i++) store<u8>(to + i, load<u8>(from + i));
  } else {
    memory.copy(to, from, <usize>len);
  }
}

/** Bytes every packet buffer and record buffer has past its end: copyRecord moves whole 64-byte blocks. */
export const SLACK: usize = 64;

/**
 * Copies a packet's `len` bytes into a record in whole 64-byte blocks (four
 * SIMD moves): up to 63 bytes past the end are read and written, which the
 * buffers' SLACK allows and the next record overwrites — no loop for the tail.
 */
@inline export function copyRecord(to: usize, from: usize, len: u32): void {
  if (len <= 256) {
    for (let i: usize = 0; i < <usize>len; i += 64) {
      v128.store(to + i, v128.load(from + i));
      v128.store(to + i, v128.load(from + i, 16), 16);
      v128.store(to + i, v128.load(from + i, 32), 32);
      v128.store(to + i, v128.load(from + i, 48), 48);
    }
  } else {
    memory.copy(to, from, <usize>len);
  }
}

@inline export function copyPacket(to: Packet, from: Packet): void {
  copyBytes(changetype<usize>(to), changetype<usize>(from), <u32>PACKET_SIZE);
}

// ── The buffer pool ────────────────────────────────────────────────────────

let pool: usize = 0;
let slotLen: i32 = 0;
let nSlots: i32 = 0;
let refs: usize = 0; // u16 per slot
let freeSlots: usize = 0; // stack of free slot indices
let nFree: i32 = 0;
/** The slot of staging bytes an input packet holds alone, and may write; −1: shared or not its own, read-only. */
export const INPUT_OWN: i32 = -2;
export const READ_ONLY: i32 = -1;
/** Bytes kept free in front of a packet copied into a slot, for pushed headers. */
export let headroom: i32 = 256;

export function poolInit(count: i32, len: i32, room: i32): void {
  if (pool != 0) {
    heap.free(pool);
    heap.free(refs);
    heap.free(freeSlots);
  }
  nSlots = count;
  slotLen = len;
  headroom = room;
  pool = heap.alloc(<usize>count * <usize>len + SLACK);
  refs = heap.alloc(<usize>(count * 2) + 2);
  freeSlots = heap.alloc(<usize>(count * 4) + 4);
  memory.fill(refs, 0, <usize>(count * 2));
  nFree = count;
  for (let i = 0; i < count; i++) store<i32>(freeSlots + ((<usize>i) << 2), count - 1 - i);
}

@inline function slotBase(s: i32): usize {
  return pool + <usize>s * <usize>slotLen;
}

/** The packet's bytes are its own staging bytes at `data`, written in place when `writable` (INPUT_OWN), else
 * read-only. */
@inline export function holdInput(d: Packet, writable: bool): void {
  d.base = d.data;
  d.slot = writable ? INPUT_OWN : READ_ONLY;
}

/** One more descriptor shares the packet's bytes: a slot's count goes up; staging bytes become read-only. */
@inline export function share(d: Packet): void {
  if (d.slot >= 0) store<u16>(refs + ((<usize>d.slot) << 1), load<u16>(refs + ((<usize>d.slot) << 1)) + 1);
  else d.slot = READ_ONLY;
}

/** The descriptor no longer needs its bytes. */
export function release(d: Packet): void {
  if (d.slot < 0) return;
  const r = refs + ((<usize>d.slot) << 1);
  const n = load<u16>(r) - 1;
  store<u16>(r, n);
  if (n == 0) {
    store<i32>(freeSlots + ((<usize>nFree) << 2), d.slot);
    nFree++;
  }
  d.slot = READ_ONLY;
}

/** Bytes the packet may write in front of its data (after `own`). */
@inline export function roomBefore(d: Packet): i32 {
  return <i32>(d.data - d.base);
}

/** Results of `own`. */
export const OWN_OK: i32 = 0;
export const OWN_TOO_LONG: i32 = 1;
export const OWN_NO_BUFFER: i32 = 2;

/**
 * Makes the packet's bytes its own and writable, with at least `room` bytes
 * free in front of them. Copies only when they are shared, read-only or short
 * of room.
 */
@inline export function own(d: Packet, room: i32): i32 {
  const s = d.slot;
  if ((s == INPUT_OWN || (s >= 0 && load<u16>(refs + ((<usize>s) << 1)) == 1)) && <i32>(d.data - d.base) >= room) {
    return OWN_OK;
  }
  return ownCopy(d, room);
}

/** own, when the bytes must be copied into a slot of their own. */
function ownCopy(d: Packet, room: i32): i32 {
  const front = room > headroom ? room : headroom;
  if (<i32>d.len + front > slotLen) return OWN_TOO_LONG;
  if (nFree == 0) return OWN_NO_BUFFER;
  nFree--;
  const s = load<i32>(freeSlots + ((<usize>nFree) << 2));
  store<u16>(refs + ((<usize>s) << 1), 1);
  const to = slotBase(s) + <usize>front;
  // Whole blocks when the slot has room past the packet for the last one.
  if (<i32>d.len + front + <i32>SLACK <= slotLen) copyRecord(to, d.data, d.len);
  else copyBytes(to, d.data, d.len);
  release(d);
  d.slot = s;
  d.base = slotBase(s);
  d.data = to;
  return OWN_OK;
}
