// UDP, read-only: strata matches its ports and never rewrites them.
//
//   ┌───────────┬───────────┬──────────┬──────────────┐
//   │ sport (2) │ dport (2) │ len (2)  │ checksum (2) │   HEADER_LEN = 8
//   └───────────┴───────────┴──────────┴──────────────┘

import { getU16 } from "./bytes";

export namespace field {
  export const SRC_PORT: i32 = 0;
  export const DST_PORT: i32 = SRC_PORT + 2;
  export const LENGTH: i32 = DST_PORT + 2;
  export const CHECKSUM: i32 = LENGTH + 2;
}
export const HEADER_LEN: i32 = field.CHECKSUM + 2;
export const PROTOCOL: u32 = 17;

@inline export function srcPort(p: usize): u32 {
  return getU16(p + field.SRC_PORT);
}
@inline export function dstPort(p: usize): u32 {
  return getU16(p + field.DST_PORT);
}
