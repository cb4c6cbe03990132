// IPv6 fixed header (RFC 8200). Extension headers are payload to strata.
//
//   ┌──────────────────────────┬─────────────────┬──────────┬──────────┬──────────┬──────────┐
//   │ ver:4 tc:8 flow:20 (4)   │ payload len (2) │ next (1) │ hlim (1) │ src (16) │ dst (16) │   HEADER_LEN = 40
//   └──────────────────────────┴─────────────────┴──────────┴──────────┴──────────┴──────────┘

import { getU16, getU32, getU8, setU16, setU32, setU8 } from "./bytes";
import { KEY_IPV6_DST, KEY_IPV6_FLOW, KEY_IPV6_HLIM, KEY_IPV6_NEXT, KEY_IPV6_SRC } from "../abi";

export namespace field {
  export const VER_TC_FLOW: i32 = 0;
  export const PAYLOAD_LEN: i32 = VER_TC_FLOW + 4;
  export const NEXT: i32 = PAYLOAD_LEN + 2;
  export const HOP_LIMIT: i32 = NEXT + 1;
  export const SRC: i32 = HOP_LIMIT + 1;
  export const DST: i32 = SRC + 16;
}
export const HEADER_LEN: i32 = field.DST + 16;
export const VERSION: u32 = 6;
const FLOW_MASK: u32 = 0xfffff;

@inline export function version(p: usize): u32 {
  return getU8(p + field.VER_TC_FLOW) >> 4;
}
@inline export function flowLabel(p: usize): u32 {
  return getU32(p + field.VER_TC_FLOW) & FLOW_MASK;
}
@inline export function hopLimit(p: usize): u32 {
  return getU8(p + field.HOP_LIMIT);
}

/** The packet length the header states (fixed header + payload length), or −1 when too few bytes hold it. */
export function statedLen(p: usize, len: i32): i32 {
  return len < field.PAYLOAD_LEN + 2 ? -1 : HEADER_LEN + <i32>getU16(p + field.PAYLOAD_LEN);
}

/** Checks the header and writes its fields into the key vector; returns HEADER_LEN or -1. */
export function parse(p: usize, len: i32, key: usize): i32 {
  if (len < HEADER_LEN || version(p) != VERSION) return -1;
  memory.copy(key + KEY_IPV6_SRC, p + field.SRC, 16);
  memory.copy(key + KEY_IPV6_DST, p + field.DST, 16);
  store<u8>(key + KEY_IPV6_NEXT, load<u8>(p + field.NEXT));
  store<u8>(key + KEY_IPV6_HLIM, load<u8>(p + field.HOP_LIMIT));
  const flow = flowLabel(p);
  // 20 bits in 3 big-endian bytes.
  setU16(key + KEY_IPV6_FLOW, flow >> 8);
  store<u8>(key + KEY_IPV6_FLOW + 2, <u8>flow);
  return HEADER_LEN;
}

/** Writes a header from key vector `key` at `p`, for a payload of `payloadLen` bytes. */
export function emit(p: usize, key: usize, payloadLen: i32, hlim: u32): void {
  const flow = (getU16(key + KEY_IPV6_FLOW) << 8) | (<u32>load<u8>(key + KEY_IPV6_FLOW + 2));
  setU32(p + field.VER_TC_FLOW, (VERSION << 28) | (flow & FLOW_MASK));
  setU16(p + field.PAYLOAD_LEN, <u32>payloadLen);
  setU8(p + field.NEXT, <u32>load<u8>(key + KEY_IPV6_NEXT));
  setU8(p + field.HOP_LIMIT, hlim);
  memory.copy(p + field.SRC, key + KEY_IPV6_SRC, 16);
  memory.copy(p + field.DST, key + KEY_IPV6_DST, 16);
}

/** Forwarding's side effect: hop limit − 1. Returns false, changing nothing, if it would reach 0. */
export function decrementHopLimit(p: usize): bool {
  const h = hopLimit(p);
  if (h <= 1) return false;
  setU8(p + field.HOP_LIMIT, h - 1);
  return true;
}
