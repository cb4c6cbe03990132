// IPv4 (RFC 791). Options are skipped by IHL, never interpreted.
//
//   ┌─────────┬──────────┬───────────┬────────┬─────────────┬─────────┬───────────┬──────────────┬─────────┬─────────┐
//   │ ver|ihl │ dscp|ecn │ total len │ id (2) │ flags|frag  │ ttl (1) │ proto (1) │ checksum (2) │ src (4) │ dst (4) │
//   │   (1)   │   (1)    │    (2)    │        │ offset (2)  │         │           │              │         │         │
//   └─────────┴──────────┴───────────┴────────┴─────────────┴─────────┴───────────┴──────────────┴─────────┴─────────┘
//   HEADER_LEN = 20, then IHL × 4 − 20 bytes of options.

import { getU16, getU32, getU8, setU16, setU8 } from "./bytes";
import { onesSum } from "./checksum";
import * as tcp from "./tcp";
import * as udp from "./udp";
import {
  KEY_IPV4_DPORT,
  KEY_IPV4_DSCP,
  KEY_IPV4_DST,
  KEY_IPV4_PROTO,
  KEY_IPV4_SPORT,
  KEY_IPV4_SRC,
  KEY_IPV4_TTL,
} from "../abi";

export namespace field {
  export const VER_IHL: i32 = 0;
  export const DSCP_ECN: i32 = VER_IHL + 1;
  export const TOTAL_LEN: i32 = DSCP_ECN + 1;
  export const IDENT: i32 = TOTAL_LEN + 2;
  export const FLAGS_FRAG: i32 = IDENT + 2;
  export const TTL: i32 = FLAGS_FRAG + 2;
  export const PROTOCOL: i32 = TTL + 1;
  export const CHECKSUM: i32 = PROTOCOL + 1;
  export const SRC: i32 = CHECKSUM + 2;
  export const DST: i32 = SRC + 4;
}
export const HEADER_LEN: i32 = field.DST + 4;
export const VERSION: u32 = 4;
const FRAG_OFFSET_MASK: u32 = 0x1fff;
const MORE_FRAGMENTS: u32 = 0x2000;
/** ~m + m' of RFC 1624 when the TTL goes down by one: see decrementTtl. */
const TTL_DECREMENT_SUM: u32 = 0xfeff;
const SCTP: u32 = 132;
const UDP_LITE: u32 = 136;

@inline export function version(p: usize): u32 {
  return getU8(p + field.VER_IHL) >> 4;
}
/** Header length in bytes, options included. */
@inline export function headerLen(p: usize): i32 {
  return (<i32>(getU8(p + field.VER_IHL) & 0xf)) << 2;
}
@inline export function totalLen(p: usize): u32 {
  return getU16(p + field.TOTAL_LEN);
}
@inline export function ttl(p: usize): u32 {
  return getU8(p + field.TTL);
}
@inline export function protocol(p: usize): u32 {
  return getU8(p + field.PROTOCOL);
}
@inline export function srcAddr(p: usize): u32 {
  return getU32(p + field.SRC);
}
@inline export function dstAddr(p: usize): u32 {
  return getU32(p + field.DST);
}

/** The packet length the header states (total length), or −1 when too few bytes hold it. */
export function statedLen(p: usize, len: i32): i32 {
  return len < field.TOTAL_LEN + 2 ? -1 : <i32>totalLen(p);
}

/** Whether `proto` carries 16-bit ports in its first four bytes. */
@inline function hasPorts(proto: u32): bool {
  // A switch: TCP and UDP are found after a test or two, where || would test all four every time.
  switch (proto) {
    case tcp.PROTOCOL:
    case udp.PROTOCOL:
    case SCTP:
    case UDP_LITE:
      return true;
  }
  return false;
}

/**
 * Checks the header at `p` (`len` captured bytes): version 4, IHL ≥ 5 and
 * within the bytes, total length ≥ the header. Returns the header length (with
 * options), or -1. A capture cut short after the header is accepted. The
 * designs that start with IPv4 (ipv4, gre, vxlan) all check it this way.
 */
export function check(p: usize, len: i32): i32 {
  if (len < HEADER_LEN) return -1;
  const hlen = headerLen(p);
  if (version(p) != VERSION || hlen < HEADER_LEN) return -1;
  if (hlen > len || <i32>totalLen(p) < hlen) return -1;
  return hlen;
}

/** Whether the packet is a fragment (more fragments follow, or it is not the first): its payload is not whole. */
@inline export function isFragment(p: usize): bool {
  return (getU16(p + field.FLAGS_FRAG) & (MORE_FRAGMENTS | FRAG_OFFSET_MASK)) != 0;
}

@inline export function dscp(p: usize): u32 {
  return getU8(p + field.DSCP_ECN) >> 2;
}

/**
 * Checks the header at `p` (`len` captured bytes) and writes its fields into
 * the key vector. Returns the header length (with options), or -1 if it is not
 * a well-formed IPv4 header (see `check`).
 */
export function parse(p: usize, len: i32, key: usize): i32 {
  const hlen = check(p, len);
  if (hlen < 0) return -1;
  const proto = protocol(p);
  // sport then dport, big-endian both, as the key holds them: their four bytes as they are (0 without ports).
  let ports: u32 = 0;
  const firstFragment = (getU16(p + field.FLAGS_FRAG) & FRAG_OFFSET_MASK) == 0;
  if (firstFragment && hasPorts(proto) && hlen + tcp.PORTS_LEN <= len) ports = load<u32>(p + hlen + tcp.field.SRC_PORT);
  // The key's words written whole (see ethernet.ts parse): word 0 the in-link (0: keyFor writes it), src and
  // dst's first half; word 1 dst's second half, proto, ttl, dscp, sport and dport's first byte; word 2 its second.
  if (KEY_IPV4_SRC != 2 || KEY_IPV4_DST != 6 || KEY_IPV4_PROTO != 10 || KEY_IPV4_TTL != 11 || KEY_IPV4_DSCP != 12)
    unreachable();
  if (KEY_IPV4_SPORT != 13 || KEY_IPV4_DPORT != 15 || field.DST != field.SRC + 4) unreachable();
  if (tcp.field.DST_PORT != tcp.field.SRC_PORT + 2) unreachable();
  const addresses = load<u64>(p + field.SRC); // src then dst, big-endian both, as the key holds them
  store<u64>(key, addresses << 16);
  const w1 =
    (addresses >> 48) |
    ((<u64>proto) << 16) |
    ((<u64>ttl(p)) << 24) |
    ((<u64>dscp(p)) << 32) |
    ((<u64>(ports & 0xffffff)) << 40);
  store<u64>(key, w1, 8);
  store<u64>(key, <u64>(ports >>> 24), 16);
  return hlen;
}

/** The header checksum of the `hlen` bytes at `p`, with its own field taken as zero. */
export function headerChecksum(p: usize, hlen: i32): u32 {
  const stored = getU16(p + field.CHECKSUM);
  // Summing the header with the stored value included and then removing it is one pass.
  const sum = onesSum(p, hlen, 0) + (~stored & 0xffff);
  return ~((sum & 0xffff) + (sum >>> 16)) & 0xffff;
}

/** Writes a 20-byte header from key vector `key` at `p`, for a payload of `payloadLen` bytes. */
export function emit(p: usize, key: usize, payloadLen: i32, ttlValue: u32): void {
  if (KEY_IPV4_DST != KEY_IPV4_SRC + 4) unreachable();
  emitFields(
    p,
    load<u64>(key + KEY_IPV4_SRC),
    <u32>load<u8>(key + KEY_IPV4_PROTO),
    <u32>load<u8>(key + KEY_IPV4_DSCP),
    ttlValue,
    payloadLen,
  );
}

/**
 * Writes a 20-byte header at `p` in front of `payloadLen` bytes: no options, not
 * a fragment, identification 0, the total length and the checksum right.
 * `addresses` is src then dst as on the wire (as a key vector holds them),
 * loaded as one u64: stored as it is.
 */
export function emitFields(p: usize, addresses: u64, proto: u32, dscpValue: u32, ttlValue: u32, payloadLen: i32): void {
  const verIhl = (VERSION << 4) | (<u32>(HEADER_LEN >> 2));
  const tos = (dscpValue << 2) & 0xff;
  const total = (<u32>(HEADER_LEN + payloadLen)) & 0xffff;
  const ttlProto = ((ttlValue & 0xff) << 8) | (proto & 0xff);
  setU8(p + field.VER_IHL, verIhl);
  setU8(p + field.DSCP_ECN, tos);
  setU16(p + field.TOTAL_LEN, total);
  setU16(p + field.IDENT, 0);
  setU16(p + field.FLAGS_FRAG, 0);
  setU16(p + field.TTL, ttlProto); // TTL, then protocol
  if (field.DST != field.SRC + 4) unreachable();
  store<u64>(p + field.SRC, addresses);
  const src = srcAddr(p);
  const dst = dstAddr(p);
  // The checksum from the words just written (identification and fragment words are 0).
  let sum = ((verIhl << 8) | tos) + total + ttlProto + (src >>> 16) + (src & 0xffff) + (dst >>> 16) + (dst & 0xffff);
  sum = (sum & 0xffff) + (sum >>> 16);
  sum = (sum & 0xffff) + (sum >>> 16);
  setU16(p + field.CHECKSUM, ~sum & 0xffff);
}

/**
 * Forwarding's side effect: TTL − 1, checksum updated incrementally (RFC 1624:
 * HC' = ~(~HC + ~m + m')). Returns false, changing nothing, if the TTL would reach 0.
 */
export function decrementTtl(p: usize): bool {
  const t = ttl(p);
  if (t <= 1) return false;
  setU8(p + field.TTL, t - 1);
  // m is the TTL/protocol word, m' = m − 0x100: ~m + m' is 0xfeff whatever m is, and ~HC + 0xfeff is at most
  // 0x1fefe, which one end-around carry folds to 16 bits.
  let sum = (~getU16(p + field.CHECKSUM) & 0xffff) + TTL_DECREMENT_SUM;
  sum = (sum & 0xffff) + (sum >>> 16);
  setU16(p + field.CHECKSUM, ~sum & 0xffff);
  return true;
}
