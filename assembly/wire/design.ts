// The header designs behind one switch: the pipeline asks "parse this packet's
// header for design d" and never names a protocol itself.

import * as cna from "./cna";
import * as ethernet from "./ethernet";
import * as ipv4 from "./ipv4";
import * as ipv6 from "./ipv6";
import {
  DESIGN_CNA,
  DESIGN_ETHERNET,
  FLOW_CNA,
  FLOW_ETHERNET,
  FLOW_IPV4,
  FLOW_IPV6,
  DESIGN_IPV4,
  DESIGN_IPV6,
  KEY_CNA_LEN,
  KEY_ETHERNET_LEN,
  KEY_IPV4_LEN,
  KEY_IPV4_TTL,
  KEY_IPV6_HLIM,
  KEY_IPV6_LEN,
} from "../abi";

/** Bytes of a design's key vector (a multiple of 8), or 0 for an unknown design. */
export function keyLen(design: i32): i32 {
  switch (design) {
    case DESIGN_ETHERNET: return KEY_ETHERNET_LEN;
    case DESIGN_IPV4: return KEY_IPV4_LEN;
    case DESIGN_IPV6: return KEY_IPV6_LEN;
    case DESIGN_CNA: return KEY_CNA_LEN;
  }
  return 0;
}

/**
 * Parses the header at `p` and fills the key vector from its byte 2 on (the
 * in-link is the caller's). Returns the header length, or -1 if the packet
 * does not carry a valid header of this design.
 */
export function parse(design: i32, p: usize, len: i32, key: usize): i32 {
  switch (design) {
    case DESIGN_ETHERNET: return ethernet.parse(p, len, key);
    case DESIGN_IPV4: return ipv4.parse(p, len, key);
    case DESIGN_IPV6: return ipv6.parse(p, len, key);
    case DESIGN_CNA: return cna.parse(p, len, key);
  }
  return -1;
}

/** Bytes `emit` will write for header fields `key`. */
export function emitLen(design: i32, key: usize): i32 {
  switch (design) {
    case DESIGN_ETHERNET: return ethernet.emitLen(key);
    case DESIGN_IPV4: return ipv4.HEADER_LEN;
    case DESIGN_IPV6: return ipv6.HEADER_LEN;
    case DESIGN_CNA: return cna.HEADER_LEN;
  }
  return 0;
}

/** Writes the header for fields `key` at `p`, in front of `payloadLen` bytes. */
export function emit(design: i32, p: usize, key: usize, payloadLen: i32): void {
  switch (design) {
    case DESIGN_ETHERNET: ethernet.emit(p, key); break;
    case DESIGN_IPV4: ipv4.emit(p, key, payloadLen, <u32>load<u8>(key + KEY_IPV4_TTL)); break;
    case DESIGN_IPV6: ipv6.emit(p, key, payloadLen, <u32>load<u8>(key + KEY_IPV6_HLIM)); break;
    case DESIGN_CNA: cna.emit(p, key); break;
  }
}

/** The key-vector bytes that identify a flow: anycast hashes only these. */
export function flowMask(design: i32): usize {
  switch (design) {
    case DESIGN_ETHERNET: return FLOW_ETHERNET;
    case DESIGN_IPV4: return FLOW_IPV4;
    case DESIGN_IPV6: return FLOW_IPV6;
    case DESIGN_CNA: return FLOW_CNA;
  }
  return 0;
}

/** The longest payload a header of this design can state: its length fields are 16 bits. */
export function maxPayload(design: i32): i32 {
  if (design == DESIGN_IPV4) return 0xffff - ipv4.HEADER_LEN;
  if (design == DESIGN_IPV6) return 0xffff;
  return i32.MAX_VALUE;
}

/**
 * The length of the packet at `p` as its own header states it, or −1 for a
 * design without a length field. Bytes past it are padding of an outer layer
 * (an Ethernet frame's minimum size), not part of the packet.
 */
export function statedLen(design: i32, p: usize, len: i32): i32 {
  if (design == DESIGN_IPV4) return ipv4.statedLen(p, len);
  if (design == DESIGN_IPV6) return ipv6.statedLen(p, len);
  return -1;
}

/** Decrements TTL / hop limit in place; false (unchanged) if it would reach zero. */
export function decrementTtl(design: i32, p: usize): bool {
  if (design == DESIGN_IPV4) return ipv4.decrementTtl(p);
  if (design == DESIGN_IPV6) return ipv6.decrementHopLimit(p);
  return true;
}
