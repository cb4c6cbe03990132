// TCP, read-only: strata matches its ports and never rewrites them.
//
//   ┌───────────┬───────────┬─────────┬─────────┬──────────────────────────┐
//   │ sport (2) │ dport (2) │ seq (4) │ ack (4) │ offset, flags, window, … │   HEADER_LEN = 20 (no options)
//   └───────────┴───────────┴─────────┴─────────┴──────────────────────────┘
//
// Ports sit where UDP's and SCTP's do, so the IPv4 key builder reads all three
// at field.SRC_PORT here, as the four bytes they are, once PORTS_LEN bytes are present.

import { getU16 } from "./bytes";

export namespace field {
  export const SRC_PORT: i32 = 0;
  export const DST_PORT: i32 = SRC_PORT + 2;
  export const SEQ: i32 = DST_PORT + 2;
  export const ACK: i32 = SEQ + 4;
  export const DATA_OFFSET: i32 = ACK + 4;
}
export const HEADER_LEN: i32 = 20;
export const PORTS_LEN: i32 = field.DST_PORT + 2;
export const PROTOCOL: u32 = 6;

@inline export function srcPort(p: usize): u32 {
  return getU16(p + field.SRC_PORT);
}
@inline export function dstPort(p: usize): u32 {
  return getU16(p + field.DST_PORT);
}
