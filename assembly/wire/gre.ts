// The gre design: an IPv4 header (protocol 47) and a GRE header, pushed and
// popped as one. GRE is RFC 2784 with RFC 2890's key and sequence number.
//
//   ┌───────────────────┬───────────────────┬────────────────────────────┬──────────┬───────────────┐
//   │ flags|version (2) │ protocol type (2) │ checksum, reserved1 (4)?   │ key (4)? │ sequence (4)? │   BASE_LEN = 4
//   └───────────────────┴───────────────────┴────────────────────────────┴──────────┴───────────────┘
//   flags: C (checksum present) 0x8000, K (key present) 0x2000, S (sequence present) 0x1000;
//   each optional word is there only when its bit is set, in this order.
//
// Reading: the IPv4 header must be valid (ipv4.check), not a fragment (strata
// does not reassemble), protocol 47; GRE version 0, with none of the RFC 1701
// bits RFC 2784 makes a receiver discard (routing present, strict source
// route, recursion ≥ 4). Checksum and sequence are skipped, never checked;
// the key is read. A Cisco MetaData shim (cmd.ts) after the GRE header is
// skipped like an Ethernet tag: `type` is then the protocol it names.
// Version 1 (PPTP's enhanced GRE, RFC 2637) is refused: its "key" is a
// payload length and call id, and strata has no PPP design to hand it to.
//
// Writing: a 20-byte IPv4 header (total length and checksum right), then
// flags with K set and the key iff `keyed` is 1, version 0, the type.

import { getU16, getU32, setU16, setU32, setU8 } from "./bytes";
import * as cmd from "./cmd";
import * as ipv4 from "./ipv4";
import {
  KEY_GRE_DSCP,
  KEY_GRE_DST,
  KEY_GRE_KEY,
  KEY_GRE_KEYED,
  KEY_GRE_LEN,
  KEY_GRE_SRC,
  KEY_GRE_TTL,
  KEY_GRE_TYPE,
} from "../abi";

export namespace field {
  export const FLAGS_VERSION: i32 = 0;
  export const PROTOCOL_TYPE: i32 = FLAGS_VERSION + 2;
}
export const BASE_LEN: i32 = field.PROTOCOL_TYPE + 2;
/** Each optional word: checksum with reserved1, key, sequence number. */
export const WORD_LEN: i32 = 4;
/** The IPv4 protocol number of GRE. */
export const PROTOCOL: u32 = 47;

export const FLAG_CHECKSUM: u32 = 0x8000;
export const FLAG_KEY: u32 = 0x2000;
export const FLAG_SEQUENCE: u32 = 0x1000;
/** Routing present, strict source route, the high recursion bit: RFC 2784 §2.3 says discard. */
const FLAGS_REFUSED: u32 = 0x4000 | 0x0800 | 0x0400;
const VERSION_MASK: u32 = 0x0007;
const VERSION: u32 = 0;

/**
 * Checks the IPv4 + GRE header at `p` (`len` captured bytes) and writes its
 * fields into the key vector. Returns both headers' length (with a CMD shim),
 * or -1 if the packet is not IPv4 carrying GRE version 0.
 */
export function parse(p: usize, len: i32, key: usize): i32 {
  const ip = ipv4.check(p, len);
  if (ip < 0 || ipv4.protocol(p) != PROTOCOL || ipv4.isFragment(p) || ip + BASE_LEN > len) return -1;
  const g = p + <usize>ip;
  const flags = getU16(g + field.FLAGS_VERSION);
  if ((flags & VERSION_MASK) != VERSION || (flags & FLAGS_REFUSED) != 0) return -1;
  let at = BASE_LEN;
  if (flags & FLAG_CHECKSUM) at += WORD_LEN;
  const keyAt = at;
  if (flags & FLAG_KEY) at += WORD_LEN;
  if (flags & FLAG_SEQUENCE) at += WORD_LEN;
  if (ip + at > len) return -1;
  let type = getU16(g + field.PROTOCOL_TYPE);
  if (type == cmd.GRE_TYPE) {
    if (ip + at + cmd.HEADER_LEN > len || !cmd.valid(g + <usize>at)) return -1;
    type = cmd.type(g + <usize>at);
    at += cmd.HEADER_LEN;
  }
  const keyed = (flags & FLAG_KEY) != 0;
  store<u64>(key + KEY_GRE_LEN - 8, 0); // the last word's padding
  setU32(key + KEY_GRE_SRC, ipv4.srcAddr(p));
  setU32(key + KEY_GRE_DST, ipv4.dstAddr(p));
  setU8(key + KEY_GRE_TTL, ipv4.ttl(p));
  setU8(key + KEY_GRE_DSCP, ipv4.dscp(p));
  setU16(key + KEY_GRE_TYPE, type);
  setU32(key + KEY_GRE_KEY, keyed ? getU32(g + <usize>keyAt) : 0);
  setU8(key + KEY_GRE_KEYED, keyed ? 1 : 0);
  return ip + at;
}

@inline function keyed(key: usize): bool {
  return load<u8>(key + KEY_GRE_KEYED) != 0;
}

/** Bytes `emit` writes for header fields `key`: the key word only when keyed. */
export function emitLen(key: usize): i32 {
  return ipv4.HEADER_LEN + BASE_LEN + (keyed(key) ? WORD_LEN : 0);
}

/** Writes the IPv4 and GRE headers for fields `key` at `p`, in front of `payloadLen` bytes. */
export function emit(p: usize, key: usize, payloadLen: i32): void {
  const greLen = emitLen(key) - ipv4.HEADER_LEN;
  if (KEY_GRE_DST != KEY_GRE_SRC + 4) unreachable();
  ipv4.emitFields(
    p,
    load<u64>(key + KEY_GRE_SRC), // src then dst, as on the wire
    PROTOCOL,
    <u32>load<u8>(key + KEY_GRE_DSCP),
    <u32>load<u8>(key + KEY_GRE_TTL),
    greLen + payloadLen,
  );
  const g = p + <usize>ipv4.HEADER_LEN;
  setU16(g + field.FLAGS_VERSION, (keyed(key) ? FLAG_KEY : 0) | VERSION);
  setU16(g + field.PROTOCOL_TYPE, getU16(key + KEY_GRE_TYPE));
  if (keyed(key)) setU32(g + <usize>BASE_LEN, getU32(key + KEY_GRE_KEY));
}
