// A link carries the packet from its sender to its receivers: one receiver
// for a one-way or two-way link, every receiver for allcast (replication), one
// receiver chosen by flow for anycast (affinity), none when it leaves the
// network. Every link crossing is one hop; too many is a loop.

import {
  DROP_LINK_DOWN,
  DROP_LOOP,
  EV_EXIT,
  EV_LINK,
  MODE_ALLCAST,
  MODE_ANYCAST,
  OUTPUT_LINK,
  STAGE_ACQUIRE,
  STAGE_DONE,
  STAGE_LINK,
} from "../abi";
import { hashMasked } from "../tables/hash";
import { flowMask, keyLen, parse } from "../wire/design";
import { recordingAppend, recordingsOn } from "./recording";
import { drop } from "./drop";
import { emitPacket, event, tracing } from "./output";
import { keyOf, Packet, release } from "./packet";
import { fanReceivers, replicate } from "./replicate";
import { roomFor, ROOM_NOW, shortOfRoom } from "./room";
import { Link, linkAt, receiverMember, receiverPort } from "./topology";
import { handToSession } from "./transmit";

export let hopLimit: u32 = 64;

export function setHopLimit(n: u32): void {
  hopLimit = n;
}

@inline export function cross(d: Packet): i32 {
  const l = linkAt(d.link);
  if (l.recorded) {
    const room = roomFor(l.recordingId, d.len, false);
    if (room != ROOM_NOW) return shortOfRoom(d, STAGE_LINK, room);
  }
  if (d.hops >= hopLimit) return drop(d, STAGE_LINK, DROP_LOOP);
  // A link that is down carries nothing: not counted, not recorded.
  if (l.down != 0) return drop(d, STAGE_LINK, DROP_LINK_DOWN);
  carry(d, l);
  if (tracing) event(EV_LINK, STAGE_LINK, 0, 0, d, -1, d.port, d.link, d.hops);
  // A virtual link is implemented by a session of an underlay network: its receivers are the underlay's to reach.
  if (d.via >= 0) return handToSession(d);
  const n = l.nReceivers;
  if (n == 0) {
    if (tracing) event(EV_EXIT, STAGE_LINK, 0, 0, d, -1, d.port, d.link, 0);
    release(d);
    return STAGE_DONE;
  }
  let r = 0;
  if (l.mode == MODE_ALLCAST && n > 1) {
    fanReceivers(d.link);
    return replicate(d);
  }
  if (l.mode == MODE_ANYCAST && n > 1) r = <i32>(flowHash(d, l) % <u32>n);
  d.member = receiverMember(l, r);
  d.port = receiverPort(l, r);
  d.keyMember = -1;
  return STAGE_ACQUIRE;
}

/** The link carries the packet (its checks passed): recorded, counted, one hop more. */
@inline export function carry(d: Packet, l: Link): void {
  if (l.recorded) {
    if (recordingsOn) recordingAppend(l.recordingId, d, false);
    else emitPacket(OUTPUT_LINK, d.link, d);
  }
  l.packets++;
  l.bytes += d.len;
  d.hops++;
}

/** A hash of the fields that identify the packet's flow: one flow, one anycast receiver. */
function flowHash(d: Packet, l: Link): u32 {
  const key = keyOf(d);
  if (parse(l.design, d.data, <i32>d.len, key) < 0) return 0;
  d.keyMember = -1;
  return hashMasked(key, flowMask(l.design), keyLen(l.design) >> 3, 0);
}
