// UDP. strata matches the ports of any UDP packet (read-only in ipv4) and
// writes a whole UDP header only under VXLAN.
//
//   ┌───────────┬───────────┬──────────┬──────────────┐
//   │ sport (2) │ dport (2) │ len (2)  │ checksum (2) │   HEADER_LEN = 8
//   └───────────┴───────────┴──────────┴──────────────┘

import { getU16, setU16 } from "./bytes";

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

/**
 * Writes a header at `p` in front of `payloadLen` bytes, checksum 0: "no
 * checksum", which UDP over IPv4 allows (RFC 768) and tunnels use (RFC 7348 §5).
 * `ports` is sport then dport as on the wire (as a key vector holds them), loaded
 * as one u32: stored as it is.
 */
export function emit(p: usize, ports: u32, payloadLen: i32): void {
  if (field.DST_PORT != field.SRC_PORT + 2) unreachable();
  store<u32>(p + field.SRC_PORT, ports);
  setU16(p + field.LENGTH, <u32>(HEADER_LEN + payloadLen));
  setU16(p + field.CHECKSUM, 0);
}
