// What the steps (steps.ts) do to a packet and its counters beyond choosing
// where it goes: a link carries it (recorded, counted, one hop), forwarding's
// side effect (TTL − 1), a push (send), a pop (receive) and a delivery.

import { DROP_NO_BUFFER, DROP_NONE, DROP_TOO_LONG, DROP_TTL_EXPIRED, LINK_SELF } from "../abi";
import { hashMasked } from "../tables/hash";
import { decrementTtl, emit, emitLen, flowMask, keyLen, maxPayload, parse, statedLen } from "../wire/design";
import { BLOCK, headerLen, madeFor, maxPayloadOf, templateOf, writeTemplate } from "../wire/template";
import { keyOf, own, OWN_OK, OWN_TOO_LONG, Packet, roomBefore } from "./packet";
import { recordingAppend } from "./recording";
import { Link, Member, MEMBER_TTL, memberAt } from "./topology";

/** Link crossings one packet may make; one more is a loop. */
export let hopLimit: u32 = 64;

export function setHopLimit(n: u32): void {
  hopLimit = n;
}

/** The link carries the packet (its checks passed): recorded, counted, one hop more. */
@inline export function carry(d: Packet, l: Link): void {
  recordingAppend(l.recordingId, d, false); // −1 when not recorded (topology.ts linkSetRecording)
  l.packets++;
  l.bytes += d.len;
  d.hops++;
}

/**
 * A hash of the fields that identify the packet's flow: one flow, one anycast
 * receiver. It parses the packet into the key vector as the link's design
 * sees it: the caller forgets whose key it held.
 */
export function flowHash(d: Packet, l: Link): u32 {
  const key = keyOf(d);
  if (parse(l.design, d.data, <i32>d.len, key) < 0) return 0;
  return hashMasked(key, flowMask(l.design), keyLen(l.design) >> 3, 0);
}

/**
 * The design's side effect of forwarding a packet that came in on `inLink`
 * (TTL − 1, in a buffer of the packet's own). Returns DROP_NONE, or why the
 * packet cannot go on (the TTL would reach zero: the packet is unchanged).
 */
@inline export function ttlEffect(d: Packet, m: Member, inLink: u32): i32 {
  // A packet the member sent itself has not been forwarded by it: no TTL side effect.
  if (!(m.flags & MEMBER_TTL) || inLink == LINK_SELF) return DROP_NONE;
  const owned = own(d, 0);
  if (owned != OWN_OK) return owned == OWN_TOO_LONG ? DROP_TOO_LONG : DROP_NO_BUFFER;
  return decrementTtl(m.design, d.data) ? DROP_NONE : DROP_TTL_EXPIRED;
}

/**
 * Puts a header of `design` on the packet, its fields the key vector `fields`
 * (a send row's data). Returns DROP_NONE, or why it cannot: the payload is
 * longer than the header's length field can state, or there is no buffer.
 * The header is the row's template (wire/template.ts), stored in front of the
 * packet and patched; emitted field by field only where the row has none.
 */
@inline export function push(d: Packet, design: i32, fields: usize): i32 {
  const tp = templateOf(fields);
  if (!madeFor(tp, design)) return pushEmitted(d, design, fields);
  const hlen = headerLen(tp);
  // A header whose length field cannot hold the payload would describe another packet.
  if (<i32>d.origLen > maxPayloadOf(tp)) return DROP_TOO_LONG;
  const owned = own(d, hlen);
  if (owned != OWN_OK) return owned == OWN_TOO_LONG ? DROP_TOO_LONG : DROP_NO_BUFFER;
  // Where the slot has a block's room in front (a copy's headroom, a popped header's), the block is stored whole.
  writeTemplate(tp, d.data - <usize>hlen, d.origLen, roomBefore(d) >= BLOCK);
  d.data -= <usize>hlen;
  d.len += <u32>hlen;
  d.origLen += <u32>hlen;
  return DROP_NONE;
}

/** push, for a row with no template of `design`'s header: emitted from its fields. */
function pushEmitted(d: Packet, design: i32, fields: usize): i32 {
  const hlen = emitLen(design, fields);
  // A header whose length field cannot hold the payload would describe another packet.
  if (<i32>d.origLen > maxPayload(design, hlen)) return DROP_TOO_LONG;
  const owned = own(d, hlen);
  if (owned != OWN_OK) return owned == OWN_TOO_LONG ? DROP_TOO_LONG : DROP_NO_BUFFER;
  d.data -= <usize>hlen;
  emit(design, d.data, fields, <i32>d.origLen);
  d.len += <u32>hlen;
  d.origLen += <u32>hlen;
  return DROP_NONE;
}

/**
 * Decapsulation: the packet starts after the header its member parsed
 * (hdrLen), as long as `overlay`'s design says it is. No byte moves. The
 * overlay's acquire table judges whether the rest carries a valid header.
 */
@inline export function takeHeaderOff(d: Packet, overlay: i32): void {
  const taken = d.hdrLen;
  d.data += <usize>taken;
  d.len -= taken;
  d.origLen = d.origLen > taken ? d.origLen - taken : 0;
  // A frame padded to its minimum size carries bytes the overlay's packet does not.
  const stated = statedLen(memberAt(overlay).design, d.data, <i32>d.len);
  if (stated >= 0) {
    if (<u32>stated < d.len) d.len = <u32>stated;
    if (<u32>stated < d.origLen) d.origLen = <u32>stated;
  }
}

/** The member `d.member` (m) takes the packet (there is room): recorded, counted; `tagged` with d.inLink. */
@inline export function hand(d: Packet, m: Member, tagged: bool): void {
  recordingAppend(m.recordingId, d, tagged);
  m.delivered++;
}
