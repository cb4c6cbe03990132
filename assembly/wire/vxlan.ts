// The vxlan design: IPv4 (protocol 17), UDP and a VXLAN header (RFC 7348),
// pushed and popped as one.
//
//   ┌───────────┬──────────────┬─────────┬──────────────┐
//   │ flags (1) │ reserved (3) │ vni (3) │ reserved (1) │   HEADER_LEN = 8
//   └───────────┴──────────────┴─────────┴──────────────┘
//   flags: I (a valid VNI) 0x08; the other bits and the reserved bytes are ignored on receipt.
//
// Reading: a valid IPv4 header (ipv4.check), not a fragment, protocol 17, the
// UDP and VXLAN headers within the captured bytes, the I flag set. Any UDP
// port is accepted: `dport` is a field rows match (4789 is IANA's, Linux
// defaults to 8472), so a row says which port is VXLAN.
//
// Writing: IPv4 (total length and checksum right), UDP (length right,
// checksum 0, as RFC 7348 §5 recommends for IPv4), flags I, the VNI.

import { setU32 } from "./bytes";
import * as ipv4 from "./ipv4";
import * as udp from "./udp";
import {
  KEY_VXLAN_DPORT,
  KEY_VXLAN_DSCP,
  KEY_VXLAN_DST,
  KEY_VXLAN_LEN,
  KEY_VXLAN_SPORT,
  KEY_VXLAN_SRC,
  KEY_VXLAN_TTL,
  KEY_VXLAN_VNI,
} from "../abi";

export namespace field {
  export const FLAGS: i32 = 0;
  export const RESERVED1: i32 = FLAGS + 1;
  export const VNI: i32 = RESERVED1 + 3;
  export const RESERVED2: i32 = VNI + 3;
}
export const HEADER_LEN: i32 = field.RESERVED2 + 1;
export const FLAG_VNI: u32 = 0x08;
/** IANA's VXLAN port. */
export const PORT: u32 = 4789;
/** IPv4, UDP and VXLAN headers, with no IPv4 options. */
export const EMIT_LEN: i32 = ipv4.HEADER_LEN + udp.HEADER_LEN + HEADER_LEN;

/**
 * Checks the IPv4 + UDP + VXLAN headers at `p` (`len` captured bytes) and
 * writes their fields into the key vector. Returns the three headers' length,
 * or -1 if the packet is not VXLAN.
 */
export function parse(p: usize, len: i32, key: usize): i32 {
  const ip = ipv4.check(p, len);
  if (ip < 0 || ipv4.protocol(p) != udp.PROTOCOL || ipv4.isFragment(p)) return -1;
  const hlen = ip + udp.HEADER_LEN + HEADER_LEN;
  if (hlen > len) return -1;
  const u = p + <usize>ip;
  const v = u + <usize>udp.HEADER_LEN;
  if (((<u32>load<u8>(v + field.FLAGS)) & FLAG_VNI) == 0) return -1;
  // The key's words written whole (see ethernet.ts parse): word 0 the in-link (0: keyFor writes it), src and
  // dst's first half; word 1 dst's second half, ttl, dscp, sport, dport; word 2 the VNI and padding.
  // Addresses, ports and the VNI are big-endian on the wire and in the key: copied as they are.
  if (KEY_VXLAN_SRC != 2 || KEY_VXLAN_DST != 6 || KEY_VXLAN_TTL != 10 || KEY_VXLAN_DSCP != 11) unreachable();
  if (KEY_VXLAN_SPORT != 12 || KEY_VXLAN_DPORT != 14 || KEY_VXLAN_VNI != 16 || KEY_VXLAN_LEN != 24) unreachable();
  if (ipv4.field.DST != ipv4.field.SRC + 4 || udp.field.DST_PORT != udp.field.SRC_PORT + 2) unreachable();
  const addresses = load<u64>(p + ipv4.field.SRC);
  store<u64>(key, addresses << 16);
  const ports = <u64>load<u32>(u + udp.field.SRC_PORT);
  store<u64>(key, (addresses >> 48) | ((<u64>ipv4.ttl(p)) << 16) | ((<u64>ipv4.dscp(p)) << 24) | (ports << 32), 8);
  store<u64>(key, <u64>(load<u32>(v + field.VNI) & 0xffffff), 16);
  return hlen;
}

/** Writes the IPv4, UDP and VXLAN headers for fields `key` at `p` (EMIT_LEN bytes), in front of `payloadLen` bytes. */
export function emit(p: usize, key: usize, payloadLen: i32): void {
  const tunnelled = HEADER_LEN + payloadLen;
  if (KEY_VXLAN_DST != KEY_VXLAN_SRC + 4) unreachable();
  ipv4.emitFields(
    p,
    load<u64>(key + KEY_VXLAN_SRC), // src then dst, as on the wire
    udp.PROTOCOL,
    <u32>load<u8>(key + KEY_VXLAN_DSCP),
    <u32>load<u8>(key + KEY_VXLAN_TTL),
    udp.HEADER_LEN + tunnelled,
  );
  // Ports and the VNI are big-endian in the key as on the wire (see parse): copied as they are.
  if (KEY_VXLAN_DPORT != KEY_VXLAN_SPORT + 2 || field.RESERVED2 != field.VNI + 3) unreachable();
  const u = p + <usize>ipv4.HEADER_LEN;
  udp.emit(u, load<u32>(key + KEY_VXLAN_SPORT), tunnelled);
  const v = u + <usize>udp.HEADER_LEN;
  setU32(v + field.FLAGS, FLAG_VNI << 24); // flags, then three reserved bytes
  store<u32>(v + field.VNI, load<u32>(key + KEY_VXLAN_VNI) & 0xffffff); // the VNI, then the last reserved byte
}
