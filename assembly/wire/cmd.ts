// Cisco MetaData (CMD) as GRE carries it (GRE protocol type 0x8909): a shim
// that tags the packet with a Security Group Tag (Cisco TrustSec inline
// tagging) and then names the real protocol — what an 802.1Q tag is to an
// Ethernet frame. Read as Wireshark's packet-cisco-metadata.c reads it under
// GRE; only the one-option form (an SGT) is known.
//
//   ┌──────────┬─────────┬─────────┬──────────────┬─────────┐
//   │ type (2) │ ver (1) │ len (1) │ opt type (2) │ sgt (2) │   HEADER_LEN = 8
//   └──────────┴─────────┴─────────┴──────────────┴─────────┘

import { getU16, getU8 } from "./bytes";

export namespace field {
  export const TYPE: i32 = 0;
  export const VERSION: i32 = TYPE + 2;
  export const LENGTH: i32 = VERSION + 1;
  export const OPTION_TYPE: i32 = LENGTH + 1;
  export const SGT: i32 = OPTION_TYPE + 2;
}
export const HEADER_LEN: i32 = field.SGT + 2;
/** The GRE protocol type (an ethertype) that announces a CMD shim. */
export const GRE_TYPE: u32 = 0x8909;
const KNOWN_VERSION: u32 = 1;
/** Options after the fixed part: one, the SGT. */
const ONE_OPTION: u32 = 1;

/** The protocol after the shim. */
@inline export function type(p: usize): u32 {
  return getU16(p + field.TYPE);
}

/** Whether the HEADER_LEN bytes at `p` are a CMD shim of the one known form. */
export function valid(p: usize): bool {
  return getU8(p + field.VERSION) == KNOWN_VERSION && getU8(p + field.LENGTH) == ONE_OPTION;
}
