// receive: what does the member's machine do with a packet it acquired to
// receive — take it (primitive: delivered), or (layering, seed §5.2) take
// this network's header off and hand the rest to the overlay member on the
// same machine, arriving on one of its links (ExternalLink)?

import {
  ACT_DELIVER,
  ACT_EXTERNAL_LINK,
  DROP_RECEIVE_MISS,
  DROP_UNSUPPORTED,
  EV_DELIVER,
  EV_POP,
  OUTPUT_DELIVER,
  STAGE_ACQUIRE,
  STAGE_DELIVER,
  STAGE_DONE,
  STAGE_RECEIVE,
} from "../abi";
import { statedLen } from "../wire/design";
import { recordingAppend, recordingsOn } from "./recording";
import { drop } from "./drop";
import { lookupIn } from "./lookup";
import { emitPacket, event, tracing } from "./output";
import { keyOf, Packet, release } from "./packet";
import { roomFor, ROOM_NOW, shortOfRoom } from "./room";
import { Member, MEMBER_TAG_DELIVERIES, memberAt } from "./topology";

@inline export function receive(d: Packet): i32 {
  const m = memberAt(d.member);
  // acquire parsed the packet for this member: the key, and hdrLen, are current.
  const e = lookupIn(d, m.receive, keyOf(d), STAGE_RECEIVE, d.port, DROP_RECEIVE_MISS);
  if (e == null) return STAGE_DONE;
  if (e.code == ACT_DELIVER) return STAGE_DELIVER;
  if (e.code == ACT_EXTERNAL_LINK) return pop(d, <i32>e.arg, e.arg2);
  return drop(d, STAGE_RECEIVE, DROP_UNSUPPORTED);
}

/**
 * Decapsulation: the bytes after this member's header are the overlay's
 * packet. No byte moves: the packet starts further on. The overlay's acquire
 * table judges whether they carry a valid header of its design.
 */
function pop(d: Packet, overlay: i32, inLink: u32): i32 {
  if (tracing) event(EV_POP, STAGE_RECEIVE, 0, 0, d, -1, inLink, -1, d.hdrLen);
  takeHeaderOff(d, overlay);
  d.member = overlay;
  d.port = inLink;
  d.keyMember = -1;
  return STAGE_ACQUIRE;
}

/** The packet starts after the header the member parsed (hdrLen), as long as `overlay`'s design says it is. */
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

/** The packet reaches the member's machine. */
@inline export function deliver(d: Packet): i32 {
  const m = memberAt(d.member);
  const tagged = (m.flags & MEMBER_TAG_DELIVERIES) != 0;
  const room = roomFor(m.recordingId, d.len, tagged);
  if (room != ROOM_NOW) return shortOfRoom(d, STAGE_DELIVER, room);
  hand(d, m, tagged);
  if (tracing) event(EV_DELIVER, STAGE_DELIVER, 0, 0, d, -1, d.port, -1, 0);
  release(d);
  return STAGE_DONE;
}

/** The member `d.member` (m) takes the packet (there is room): recorded, counted; `tagged` with its in-link, d.port. */
@inline export function hand(d: Packet, m: Member, tagged: bool): void {
  if (recordingsOn) recordingAppend(m.recordingId, d, tagged);
  else emitPacket(OUTPUT_DELIVER, d.member, d);
  m.delivered++;
}
