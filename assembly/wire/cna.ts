// cna: strata's native header for abstract studies of the model, where names
// are plain numbers and a session is explicit.
//
//   ┌─────────┬─────────┬─────────────┬─────────────┬──────────────┐
//   │ src (4) │ dst (4) │ session (4) │ overlay (2) │ reserved (2) │   HEADER_LEN = 16
//   └─────────┴─────────┴─────────────┴─────────────┴──────────────┘
//
// `overlay` says what the payload is (0 = data), as an ethertype does.

import { setU16 } from "./bytes";
import { KEY_CNA_DST, KEY_CNA_OVERLAY, KEY_CNA_SESSION, KEY_CNA_SRC } from "../abi";

export namespace field {
  export const SRC: i32 = 0;
  export const DST: i32 = SRC + 4;
  export const SESSION: i32 = DST + 4;
  export const OVERLAY: i32 = SESSION + 4;
  export const RESERVED: i32 = OVERLAY + 2;
}
export const HEADER_LEN: i32 = field.RESERVED + 2;

/** Checks the length and writes the fields into the key vector; returns HEADER_LEN or -1. */
export function parse(p: usize, len: i32, key: usize): i32 {
  if (len < HEADER_LEN) return -1;
  // Key and wire are both big-endian and laid out alike: copy field by field.
  store<u32>(key + KEY_CNA_SRC, load<u32>(p + field.SRC));
  store<u32>(key + KEY_CNA_DST, load<u32>(p + field.DST));
  store<u32>(key + KEY_CNA_SESSION, load<u32>(p + field.SESSION));
  store<u16>(key + KEY_CNA_OVERLAY, load<u16>(p + field.OVERLAY));
  return HEADER_LEN;
}

/** Writes a header from key vector `key` at `p`. */
export function emit(p: usize, key: usize): void {
  store<u32>(p + field.SRC, load<u32>(key + KEY_CNA_SRC));
  store<u32>(p + field.DST, load<u32>(key + KEY_CNA_DST));
  store<u32>(p + field.SESSION, load<u32>(key + KEY_CNA_SESSION));
  store<u16>(p + field.OVERLAY, load<u16>(key + KEY_CNA_OVERLAY));
  setU16(p + field.RESERVED, 0);
}
