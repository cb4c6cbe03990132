// The header designs behind one switch: the pipeline asks "parse this packet's
// header for design d" and never names a protocol itself.

import * as cna from "./cna";
import * as ethernet from "./ethernet";
import * as gre from "./gre";
import * as ipv4 from "./ipv4";
import * as ipv6 from "./ipv6";
import * as mpls from "./mpls";
import * as vxlan from "./vxlan";
import {
  DESIGN_CNA,
  DESIGN_ETHERNET,
  DESIGN_GRE,
  DESIGN_IPV4,
  DESIGN_IPV6,
  DESIGN_MPLS,
  DESIGN_VXLAN,
  FLOW_CNA,
  FLOW_ETHERNET,
  FLOW_GRE,
  FLOW_IPV4,
  FLOW_IPV6,
  FLOW_MPLS,
  FLOW_VXLAN,
  KEY_CNA_LEN,
  KEY_ETHERNET_LEN,
  KEY_GRE_LEN,
  KEY_IPV4_LEN,
  KEY_IPV4_TTL,
  KEY_IPV6_HLIM,
  KEY_IPV6_LEN,
  KEY_MPLS_LEN,
  KEY_VXLAN_LEN,
} from "../abi";

/** Bytes of a design's key vector (a multiple of 8), or 0 for an unknown design. */
export function keyLen(design: i32): i32 {
  switch (design) {
    case DESIGN_ETHERNET:
      return KEY_ETHERNET_LEN;
    case DESIGN_IPV4:
      return KEY_IPV4_LEN;
    case DESIGN_IPV6:
      return KEY_IPV6_LEN;
    case DESIGN_CNA:
      return KEY_CNA_LEN;
    case DESIGN_GRE:
      return KEY_GRE_LEN;
    case DESIGN_VXLAN:
      return KEY_VXLAN_LEN;
    case DESIGN_MPLS:
      return KEY_MPLS_LEN;
  }
  return 0;
}

/**
 * Parses the header at `p` and fills the key vector from its byte 2 on (the
 * in-link is the caller's). Returns the header length, or -1 if the packet
 * does not carry a valid header of this design.
 */
@inline export function parse(design: i32, p: usize, len: i32, key: usize): i32 {
  switch (design) {
    case DESIGN_ETHERNET:
      return ethernet.parse(p, len, key);
    case DESIGN_IPV4:
      return ipv4.parse(p, len, key);
    case DESIGN_IPV6:
      return ipv6.parse(p, len, key);
    case DESIGN_CNA:
      return cna.parse(p, len, key);
    case DESIGN_GRE:
      return gre.parse(p, len, key);
    case DESIGN_VXLAN:
      return vxlan.parse(p, len, key);
    case DESIGN_MPLS:
      return mpls.parse(p, len, key);
  }
  return -1;
}

/** Bytes `emit` will write for header fields `key`. */
export function emitLen(design: i32, key: usize): i32 {
  switch (design) {
    case DESIGN_ETHERNET:
      return ethernet.emitLen(key);
    case DESIGN_IPV4:
      return ipv4.HEADER_LEN;
    case DESIGN_IPV6:
      return ipv6.HEADER_LEN;
    case DESIGN_CNA:
      return cna.HEADER_LEN;
    case DESIGN_GRE:
      return gre.emitLen(key);
    case DESIGN_VXLAN:
      return vxlan.EMIT_LEN;
    case DESIGN_MPLS:
      return mpls.HEADER_LEN;
  }
  return 0;
}

/** Writes the header for fields `key` at `p`, in front of `payloadLen` bytes. */
export function emit(design: i32, p: usize, key: usize, payloadLen: i32): void {
  switch (design) {
    case DESIGN_ETHERNET:
      ethernet.emit(p, key);
      break;
    case DESIGN_IPV4:
      ipv4.emit(p, key, payloadLen, <u32>load<u8>(key + KEY_IPV4_TTL));
      break;
    case DESIGN_IPV6:
      ipv6.emit(p, key, payloadLen, <u32>load<u8>(key + KEY_IPV6_HLIM));
      break;
    case DESIGN_CNA:
      cna.emit(p, key);
      break;
    case DESIGN_GRE:
      gre.emit(p, key, payloadLen);
      break;
    case DESIGN_VXLAN:
      vxlan.emit(p, key, payloadLen);
      break;
    case DESIGN_MPLS:
      mpls.emit(p, key);
      break;
  }
}

/** The key-vector bytes that identify a flow: anycast hashes only these. */
export function flowMask(design: i32): usize {
  switch (design) {
    case DESIGN_ETHERNET:
      return FLOW_ETHERNET;
    case DESIGN_IPV4:
      return FLOW_IPV4;
    case DESIGN_IPV6:
      return FLOW_IPV6;
    case DESIGN_CNA:
      return FLOW_CNA;
    case DESIGN_GRE:
      return FLOW_GRE;
    case DESIGN_VXLAN:
      return FLOW_VXLAN;
    case DESIGN_MPLS:
      return FLOW_MPLS;
  }
  return 0;
}

/**
 * The longest payload a header of `hlen` bytes (emitLen) can state: IPv4's
 * total length and IPv6's payload length are 16 bits.
 */
export function maxPayload(design: i32, hlen: i32): i32 {
  if (design == DESIGN_IPV6) return 0xffff;
  if (startsWithIpv4(design)) return 0xffff - hlen;
  return i32.MAX_VALUE;
}

/** Designs whose header is an IPv4 header and what follows it. */
@inline function startsWithIpv4(design: i32): bool {
  return design == DESIGN_IPV4 || design == DESIGN_GRE || design == DESIGN_VXLAN;
}

/**
 * The length of the packet at `p` as its own header states it, or −1 for a
 * design without a length field. Bytes past it are padding of an outer layer
 * (an Ethernet frame's minimum size), not part of the packet.
 */
export function statedLen(design: i32, p: usize, len: i32): i32 {
  if (startsWithIpv4(design)) return ipv4.statedLen(p, len);
  if (design == DESIGN_IPV6) return ipv6.statedLen(p, len);
  return -1;
}

/** Decrements TTL / hop limit in place (the outer IPv4 header's, for tunnels); false (unchanged) if it would reach
 * zero. */
export function decrementTtl(design: i32, p: usize): bool {
  // A switch, as parse's: one indexed jump, where the designs that start with IPv4 would be three tests.
  switch (design) {
    case DESIGN_IPV4:
    case DESIGN_GRE:
    case DESIGN_VXLAN:
      return ipv4.decrementTtl(p);
    case DESIGN_IPV6:
      return ipv6.decrementHopLimit(p);
    case DESIGN_MPLS:
      return mpls.decrementTtl(p);
  }
  return true;
}
