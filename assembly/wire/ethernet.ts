// Ethernet II, with optional 802.1Q / 802.1ad tags.
//
//   ┌─────────┬─────────┬──────────┐
//   │ dst (6) │ src (6) │ type (2) │   HEADER_LEN = 14
//   └─────────┴─────────┴──────────┘
//
// A tag is 4 bytes in the place of `type`: a TPID (0x8100 customer, 0x88a8 or
// 0x9100 service) then a TCI (pcp:3 dei:1 vid:12). The real ethertype follows
// the last tag. Parsing accepts up to MAX_TAGS tags.

import { getU16, getU48, setU16 } from "./bytes";
import {
  KEY_ETHERNET_DST,
  KEY_ETHERNET_IVID,
  KEY_ETHERNET_PCP,
  KEY_ETHERNET_SRC,
  KEY_ETHERNET_TYPE,
  KEY_ETHERNET_VID,
} from "../abi";

export namespace field {
  export const DST: i32 = 0;
  export const SRC: i32 = DST + 6;
  export const TYPE: i32 = SRC + 6;
}
export const HEADER_LEN: i32 = field.TYPE + 2;

export namespace tag {
  export const TPID: i32 = 0;
  export const TCI: i32 = TPID + 2;
}
export const TAG_LEN: i32 = tag.TCI + 2;
export const MAX_TAGS: i32 = 2;

export const TPID_CUSTOMER: u32 = 0x8100;
export const TPID_SERVICE: u32 = 0x88a8;
export const TPID_SERVICE_OLD: u32 = 0x9100;

@inline function isTpid(t: u32): bool {
  return t == TPID_CUSTOMER || t == TPID_SERVICE || t == TPID_SERVICE_OLD;
}
/**
 * isTpid of a type as loaded from the wire (little-endian), without swapping it: the constants are swapped, and the
 * two that differ in one bit (0x8100 and 0x9100: 0x0081 and 0x0091 as loaded) are tested as one.
 */
@inline function isTpidWire(t: u32): bool {
  if ((wire16(TPID_CUSTOMER) | TPID_PAIR_BIT) != wire16(TPID_SERVICE_OLD)) unreachable();
  return (t & ~TPID_PAIR_BIT) == wire16(TPID_CUSTOMER) || t == wire16(TPID_SERVICE);
}
/** The one bit in which 0x8100 and 0x9100 differ, as loaded from the wire. */
const TPID_PAIR_BIT: u32 = 0x0010;
/** IPv4's ethertype, the common case: tested first. */
const ETHERTYPE_IPV4: u32 = 0x0800;
@inline function wire16(v: u32): u32 {
  return ((v & 0xff) << 8) | (v >> 8);
}

@inline export function dstAddr(p: usize): u64 {
  return getU48(p + field.DST);
}
@inline export function srcAddr(p: usize): u64 {
  return getU48(p + field.SRC);
}

/**
 * Checks the frame at `p` (`len` bytes) and writes its fields into the key
 * vector at `key`, the in-link (the first two bytes) as `inLink` (0 unless
 * given: the steps give the packet's, written with dst in one store).
 * Returns the header length including tags, or -1 if the frame is too short
 * for its header.
 *
 * The key's words are written whole: a lookup that loads a word right after
 * then takes it from that one store, where a word put together from several
 * smaller stores waits for all of them to reach the cache.
 */
@inline export function parse(p: usize, len: i32, key: usize, inLink: u32 = 0): i32 {
  if (len < HEADER_LEN) return -1;
  // Word 0: the in-link, then dst; word 1: src, then the type as it follows src on the wire (a tag's TPID
  // when tagged: put right below); word 2: vid, pcp, ivid and padding, zero unless tags say otherwise.
  if (KEY_ETHERNET_DST != 2 || KEY_ETHERNET_SRC != 8 || KEY_ETHERNET_TYPE != 14 || KEY_ETHERNET_VID != 16)
    unreachable();
  store<u64>(key, (load<u64>(p + field.DST) << 16) | (<u64>bswap<u16>(<u16>inLink)));
  store<u64>(key, load<u64>(p + field.SRC), 8);
  store<u64>(key, 0, 16);
  let at = field.TYPE;
  const wireType = <u32>load<u16>(p + at);
  if (wireType == wire16(ETHERTYPE_IPV4)) return HEADER_LEN; // untagged IPv4: one test
  if (!isTpidWire(wireType)) return HEADER_LEN;
  let type = getU16(p + at);
  let tags = 0;
  while (isTpid(type) && tags < MAX_TAGS) {
    if (at + TAG_LEN + 2 > len) return -1;
    const tci = getU16(p + at + tag.TCI);
    if (tags == 0) {
      setU16(key + KEY_ETHERNET_VID, tci & 0xfff);
      store<u8>(key + KEY_ETHERNET_PCP, <u8>(tci >> 13));
    } else {
      setU16(key + KEY_ETHERNET_IVID, tci & 0xfff);
    }
    at += TAG_LEN;
    type = getU16(p + at);
    tags++;
  }
  store<u16>(key + KEY_ETHERNET_TYPE, load<u16>(p + at));
  return at + 2;
}

/** Bytes `emit` writes for the header fields in key vector `key`: tags only where a tag field is set. */
export function emitLen(key: usize): i32 {
  return HEADER_LEN + (tagged(key) ? TAG_LEN : 0) + (innerTagged(key) ? TAG_LEN : 0);
}

// Whether a tag field is set does not depend on its byte order: tested as stored, with no swap.

/** The fields in key vector `key` ask for a tag: vid, pcp or ivid set. */
@inline function tagged(key: usize): bool {
  return (
    (load<u16>(key + KEY_ETHERNET_VID) | load<u8>(key + KEY_ETHERNET_PCP) | load<u16>(key + KEY_ETHERNET_IVID)) != 0
  );
}

/** The fields in key vector `key` ask for an inner tag too: ivid set. */
@inline function innerTagged(key: usize): bool {
  return load<u16>(key + KEY_ETHERNET_IVID) != 0;
}

/** Writes the header described by key vector `key` at `p` (emitLen(key) bytes). */
export function emit(p: usize, key: usize): void {
  // dst and src, big-endian in the key as on the wire: 12 bytes copied as they are.
  store<u64>(p + field.DST, load<u64>(key + KEY_ETHERNET_DST));
  store<u32>(p + field.DST + 8, load<u32>(key + KEY_ETHERNET_DST + 8));
  let at = field.TYPE;
  if (tagged(key)) {
    const inner = innerTagged(key);
    const pcp = <u32>load<u8>(key + KEY_ETHERNET_PCP);
    // Double-tagged: a service tag outside, the customer tag inside (802.1ad).
    setU16(p + at + tag.TPID, inner ? TPID_SERVICE : TPID_CUSTOMER);
    setU16(p + at + tag.TCI, (pcp << 13) | getU16(key + KEY_ETHERNET_VID));
    at += TAG_LEN;
    if (inner) {
      setU16(p + at + tag.TPID, TPID_CUSTOMER);
      setU16(p + at + tag.TCI, getU16(key + KEY_ETHERNET_IVID));
      at += TAG_LEN;
    }
  }
  store<u16>(p + at, load<u16>(key + KEY_ETHERNET_TYPE)); // big-endian in both
}
