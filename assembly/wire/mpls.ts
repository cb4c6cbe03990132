// MPLS: one label stack entry (RFC 3032). A label stack is mpls networks
// layered on each other, each pushing and popping its own entry; the entry of
// a network that carries another mpls network has S = 0 (its send rows write
// `s: 0`), the last one S = 1.
//
//   ┌─────────────────────────────────────────┐
//   │ label:20 tc:3 s:1 ttl:8  (one word)     │   HEADER_LEN = 4
//   └─────────────────────────────────────────┘
//
// There is no length field: an MPLS packet ends where its frame ends.

import { getU24, getU32, getU8, setU24, setU32, setU8 } from "./bytes";
import { KEY_MPLS_LABEL, KEY_MPLS_S, KEY_MPLS_TC, KEY_MPLS_TTL } from "../abi";

export namespace field {
  export const ENTRY: i32 = 0;
  /** The TTL is the entry's last byte. */
  export const TTL: i32 = ENTRY + 3;
}
export const HEADER_LEN: i32 = field.ENTRY + 4;

const LABEL_SHIFT: u32 = 12;
const LABEL_MASK: u32 = 0xfffff;
const TC_SHIFT: u32 = 9;
const TC_MASK: u32 = 0x7;
const S_SHIFT: u32 = 8;
const TTL_MASK: u32 = 0xff;

/** Writes the entry's fields into the key vector; HEADER_LEN, or -1 if fewer bytes are captured. */
export function parse(p: usize, len: i32, key: usize): i32 {
  if (len < HEADER_LEN) return -1;
  const e = getU32(p + field.ENTRY);
  setU24(key + KEY_MPLS_LABEL, e >> LABEL_SHIFT);
  setU8(key + KEY_MPLS_TC, (e >> TC_SHIFT) & TC_MASK);
  setU8(key + KEY_MPLS_S, (e >> S_SHIFT) & 1);
  setU8(key + KEY_MPLS_TTL, e & TTL_MASK);
  return HEADER_LEN;
}

/** Writes the entry for fields `key` at `p`. */
export function emit(p: usize, key: usize): void {
  const label = getU24(key + KEY_MPLS_LABEL) & LABEL_MASK;
  const tc = (<u32>load<u8>(key + KEY_MPLS_TC)) & TC_MASK;
  const s = (<u32>load<u8>(key + KEY_MPLS_S)) & 1;
  setU32(
    p + field.ENTRY,
    (label << LABEL_SHIFT) | (tc << TC_SHIFT) | (s << S_SHIFT) | (<u32>load<u8>(key + KEY_MPLS_TTL)),
  );
}

/** Forwarding's side effect: TTL − 1 (no checksum to fix). False, changing nothing, if it would reach 0. */
export function decrementTtl(p: usize): bool {
  const t = getU8(p + field.TTL);
  if (t <= 1) return false;
  setU8(p + field.TTL, t - 1);
  return true;
}
