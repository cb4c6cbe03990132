// Replication: a step says what fans out — several out-links, the receivers
// of an allcast link, or forward-and-receive — in its call to replicate, and
// this module makes the copies. The original goes on with element 0; copies
// wait on a stack and run after it, depth first, so one input packet is
// finished before the next.

import {
  EV_FORK,
  EV_DROP,
  DROP_REPLICATION_LIMIT,
  STAGE_ACQUIRE,
  STAGE_FORWARD,
  STAGE_RECEIVE,
  STAGE_TRANSMIT,
} from "../abi";
import { countDrop } from "./drop";
import { event, tracing } from "./trace";
import { copyPacket, linkIdAt, Packet, PACKET_SIZE, share } from "./packet";
import { linkAt, receiverMember, receiverInLink } from "./topology";

// What fans out, as replicate's `kind`, and what its `what` is then.
export const FAN_OUT_LINKS: i32 = 1; // forward: `what` points at `count` u16 out-link identifiers
export const FAN_RECEIVERS: i32 = 2; // `what` is a link's index: its `count` receivers
export const FAN_BOTH: i32 = 3; // acquire: forward and receive (`count` 2)

let stack: usize = 0;
let stackCap: i32 = 0;
let sp: i32 = 0;
/** Copies asked for since the counters were reset: made (a fate of their own) or refused (a drop). */
export let copiesAsked: u64 = 0;
export function copiesAskedReset(): void {
  copiesAsked = 0;
}
/** Copies asked for of the current input packet, and the most allowed. */
export let copies: u32 = 0;
export let copyLimit: u32 = 4096;

export function stackInit(capacity: i32, limit: u32): void {
  if (stack != 0) heap.free(stack);
  stack = heap.alloc(<usize>(capacity * PACKET_SIZE));
  stackCap = capacity;
  sp = 0;
  copyLimit = limit;
}

/** Takes the next waiting copy into `d`; false if none waits. */
export function pop(d: Packet): bool {
  if (sp == 0) return false;
  sp--;
  copyPacket(d, changetype<Packet>(stack + <usize>(sp * PACKET_SIZE)));
  return true;
}

/** A new input packet: its copies are counted afresh. */
export function resetCopies(): void {
  copies = 0;
}

/** Applies element `k` of the fan (`kind`, `what`) to `d`; returns the stage it continues in. */
function apply(d: Packet, kind: i32, what: usize, k: i32): i32 {
  if (kind == FAN_OUT_LINKS) {
    d.outLink = <u32>load<u16>(what + ((<usize>k) << 1));
    return STAGE_TRANSMIT;
  }
  if (kind == FAN_RECEIVERS) {
    const l = linkAt(<i32>what);
    d.member = receiverMember(l, k);
    d.inLink = receiverInLink(l, k);
    d.keyMember = -1;
    return STAGE_ACQUIRE;
  }
  return k == 0 ? STAGE_FORWARD : STAGE_RECEIVE;
}

/** Fans `d` out into `count` (FAN_* `kind`, `what`); returns the stage `d` itself goes on in, as element 0. */
export function replicate(d: Packet, kind: i32, what: usize, count: i32): i32 {
  // Copies are numbered in list order but pushed last first, so they also run in list order.
  const base = copies;
  const bottom = sp;
  for (let k = count - 1; k >= 1; k--) {
    if (base + <u32>k > copyLimit || sp >= stackCap) {
      countDrop(d.member, DROP_REPLICATION_LIMIT);
      if (tracing) event(EV_DROP, d.stage, 0, DROP_REPLICATION_LIMIT, d, -1, linkIdAt(d, d.stage), d.link, k);
      continue;
    }
    const c = changetype<Packet>(stack + <usize>(sp * PACKET_SIZE));
    share(d); // first: the copy takes the slot as shared
    copyPacket(c, d);
    sp++;
    c.copy = base + <u32>k;
    c.stage = apply(c, kind, what, k);
  }
  for (let s = sp - 1; s >= bottom; s--) {
    const c = changetype<Packet>(stack + <usize>(s * PACKET_SIZE));
    if (tracing) event(EV_FORK, d.stage, 0, 0, c, -1, linkIdAt(c, c.stage), c.link, d.copy);
  }
  copies = base + <u32>(count - 1);
  copiesAsked += <u64>(count - 1);
  return apply(d, kind, what, 0);
}
