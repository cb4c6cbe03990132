// The fast lane: the steps most packets take, in one small function.
//
// run.ts's steps read and write the whole descriptor at every step, and all of
// them live in one large function, where the engine keeps little in registers.
// The lane keeps the member, the in-link and the key's owner in locals and
// takes a packet through the common case of every step — a link with one
// receiver or none, an acquire or receive by any table, a forward to one
// out-link (the TTL side effect included), a transmit onto a link or into a
// session, a push, a pop, a delivery, SharedAcquire and SharedForward — until
// the packet is done, or it meets a case it leaves to run.ts: a miss, a drop,
// replication, anycast, a want of room. A member with a plan (plan.ts) has its
// steps taken in one go, with only the packet's own checks.
//
// It leaves a packet only between steps, before the step that it cannot take
// has done anything (counted a hit, written a record): the descriptor is
// written back and run.ts takes that same step from the start. So a packet's
// fate, bytes and counters are those run.ts alone would give it; only the
// work is less. (The differential tests hold both to the reference: with a
// trace, run.ts takes every step.)

import {
  ACT_DELIVER,
  ACT_EXTERNAL_LINK,
  ACT_EXTERNAL_SESSION,
  ACT_FORWARD,
  ACT_OUT,
  ACT_PHYSICAL,
  ACT_PUSH,
  ACT_RECEIVE,
  ACT_SHARED_ACQUIRE,
  ACT_SHARED_FORWARD,
  DROP_NONE,
  MODE_ALLCAST,
  MODE_ANYCAST,
  PORT_SELF,
  PORT_SHARED,
  STAGE_ACQUIRE,
  STAGE_DELIVER,
  STAGE_DONE,
  STAGE_FORWARD,
  STAGE_LINK,
  STAGE_RECEIVE,
  STAGE_SEND,
  STAGE_TRANSMIT,
} from "../abi";
import {
  countHit,
  directRow,
  entryAt,
  Hit,
  lookupUncounted,
  ROAD_DIRECT,
  ROAD_DIRECT32,
  rowOf,
  singleRow,
  Table,
  wordArg,
  wordCode,
  wordCount,
  wordOf,
} from "../tables/table";
import { ttlEffect } from "./forward";
import { carry, hopLimit } from "./link";
import { keyOf, Packet, release } from "./packet";
import { KEY_PUSHED, parseHeader, setInLink } from "./parse";
import { PLAN_DELIVER, PLAN_FORWARD, PLAN_NONE, planOf } from "./plan";
import { hand, takeHeaderOff } from "./receive";
import { roomFor, ROOM_NOW } from "./room";
import { push } from "./send";
import {
  linkAt,
  MEMBER_DOWN,
  MEMBER_TAG_DELIVERIES,
  memberAt,
  outLink,
  receiverMember,
  receiverPort,
} from "./topology";

/**
 * Takes `d` from step `stage` as far as the fast lane goes. Returns STAGE_DONE
 * when the packet is finished, else the step run.ts is to take (the descriptor
 * written back for it).
 *
 * The steps follow one another in the order a packet mostly takes them (link,
 * acquire, forward, transmit, link …), each tested in turn, so that a packet
 * falls through from one to the next without going back to the top.
 */
export function fastLane(d: Packet, stage: i32): i32 {
  let member = d.member;
  let port = d.port;
  let keyMember = d.keyMember;
  const key = keyOf(d);
  while (true) {
    if (stage == STAGE_LINK) {
      const l = linkAt(d.link);
      const n = l.nReceivers;
      if (d.hops >= hopLimit || l.down != 0 || (n > 1 && (l.mode == MODE_ALLCAST || l.mode == MODE_ANYCAST))) break;
      if (l.recorded && roomFor(l.recordingId, d.len, false) != ROOM_NOW) break;
      carry(d, l);
      if (d.via >= 0) {
        // A virtual link: the underlay member's send table takes the packet (transmit.ts handToSession).
        member = d.via;
        d.via = -1;
        keyMember = -1;
        stage = STAGE_SEND;
      } else if (n == 0) {
        release(d);
        return STAGE_DONE;
      } else {
        member = receiverMember(l, 0);
        port = receiverPort(l, 0);
        keyMember = -1;
        stage = STAGE_ACQUIRE;
      }
    }
    if (stage == STAGE_SEND) {
      const m = memberAt(member);
      const t = changetype<Table>(m.send);
      if (m.flags & MEMBER_DOWN || m.send == 0 || (t.road != ROAD_DIRECT && t.road != ROAD_DIRECT32)) break;
      const row = directRow(t, d.session);
      if (row < 0) break;
      const e = entryAt(t, row);
      if (e.code != ACT_PUSH || push(d, m.design, <usize>e.data) != DROP_NONE) break;
      countHit(t, row);
      port = PORT_SELF;
      keyMember = KEY_PUSHED;
      stage = STAGE_FORWARD;
    }
    if (stage == STAGE_ACQUIRE) {
      const m = memberAt(member);
      const plan = planOf(m);
      if (plan == PLAN_NONE && (m.flags & MEMBER_DOWN || m.acquire == 0)) break;
      if (keyMember != member) {
        if (!parseHeader(d, m.design)) break;
        keyMember = member;
      }
      setInLink(key, port);
      // A planned member (plan.ts): its steps with only the checks that depend on the packet. A packet
      // that does not fit the plan takes the steps below, nothing done yet but its parse.
      if (plan == PLAN_FORWARD) {
        // Acquire: its keyless row says forward. Forward: one out-link. Transmit: every row is physical.
        const tf = changetype<Table>(m.forward);
        const tt = changetype<Table>(m.transmit);
        const hf = lookupUncounted(tf, key);
        const rf = rowOf(hf);
        const out = rf >= 0 ? oneOutLink(tf, hf) : -1;
        const rt = out >= 0 ? directRow(tt, <u32>out) : -1;
        const to = out >= 0 ? outLink(m, <u32>out) : -1;
        if (rt >= 0 && to >= 0) {
          const ta = changetype<Table>(m.acquire);
          countHit(ta, singleRow(ta));
          countHit(tf, rf);
          countHit(tt, rt);
          port = <u32>out;
          d.link = to;
          stage = STAGE_LINK;
          continue;
        }
      } else if (plan == PLAN_DELIVER) {
        // Receive: its keyless row says deliver.
        const ta = changetype<Table>(m.acquire);
        const ha = lookupUncounted(ta, key);
        const ra = rowOf(ha);
        const tagged = (m.flags & MEMBER_TAG_DELIVERIES) != 0;
        if (ra >= 0 && actionCode(ta, ha) == ACT_RECEIVE && roomFor(m.recordingId, d.len, tagged) == ROOM_NOW) {
          const tr = changetype<Table>(m.receive);
          countHit(ta, ra);
          countHit(tr, singleRow(tr));
          d.member = member;
          d.port = port;
          hand(d, m, tagged);
          release(d);
          return STAGE_DONE;
        }
      }
      const t = changetype<Table>(m.acquire);
      const h = lookupUncounted(t, key);
      const row = rowOf(h);
      if (row < 0) break;
      const code = actionCode(t, h);
      if (code == ACT_FORWARD) {
        stage = STAGE_FORWARD;
      } else if (code == ACT_RECEIVE) {
        stage = STAGE_RECEIVE;
      } else if (code == ACT_SHARED_ACQUIRE) {
        // Subduction (acquire.ts handOver): the overlay's shared member acquires it, on the same in-link.
        countHit(t, row);
        member = <i32>entryAt(t, row).arg;
        keyMember = -1;
        continue;
      } else {
        break;
      }
      countHit(t, row);
    }
    if (stage == STAGE_RECEIVE) {
      // acquire parsed the packet for this member: the key and hdrLen are current.
      const m = memberAt(member);
      if (m.receive == 0) break;
      const t = changetype<Table>(m.receive);
      const row = rowOf(lookupUncounted(t, key));
      if (row < 0) break;
      const e = entryAt(t, row);
      if (e.code == ACT_DELIVER) {
        stage = STAGE_DELIVER;
      } else if (e.code == ACT_EXTERNAL_LINK) {
        // Decapsulation (receive.ts pop): the overlay member's acquire takes what follows the header.
        countHit(t, row);
        const overlay = <i32>e.arg;
        takeHeaderOff(d, overlay);
        member = overlay;
        port = e.arg2;
        keyMember = -1;
        stage = STAGE_ACQUIRE;
        continue;
      } else {
        break;
      }
      countHit(t, row);
    }
    if (stage == STAGE_DELIVER) {
      const m = memberAt(member);
      const tagged = (m.flags & MEMBER_TAG_DELIVERIES) != 0;
      if (roomFor(m.recordingId, d.len, tagged) != ROOM_NOW) break;
      d.member = member;
      d.port = port; // a tagged record carries the in-link
      hand(d, m, tagged);
      release(d);
      return STAGE_DONE;
    }
    if (stage == STAGE_FORWARD) {
      const m = memberAt(member);
      if (m.flags & MEMBER_DOWN || m.forward == 0) break;
      const t = changetype<Table>(m.forward);
      if (keyMember != member && !(keyMember == KEY_PUSHED && t.inLinkOnly)) {
        if (!parseHeader(d, m.design)) break;
        keyMember = member;
      }
      setInLink(key, port);
      const h = lookupUncounted(t, key);
      const row = rowOf(h);
      if (row < 0) break;
      const code = actionCode(t, h);
      if (code == ACT_SHARED_FORWARD) {
        // Subduction (forward.ts): the underlay's shared member forwards it, from in-link `shared`.
        countHit(t, row);
        member = <i32>entryAt(t, row).arg;
        port = PORT_SHARED;
        keyMember = -1;
        continue;
      }
      const out = oneOutLink(t, h);
      if (out < 0 || ttlEffect(d, m, port) != DROP_NONE) break;
      countHit(t, row);
      port = <u32>out;
      stage = STAGE_TRANSMIT;
    }
    if (stage == STAGE_TRANSMIT) {
      const m = memberAt(member);
      const t = changetype<Table>(m.transmit);
      if (m.transmit == 0 || (t.road != ROAD_DIRECT && t.road != ROAD_DIRECT32)) break;
      const row = directRow(t, port);
      if (row < 0) break;
      const e = entryAt(t, row);
      const to = outLink(m, port);
      if (e.code == ACT_PHYSICAL) {
        if (to < 0) break;
        d.link = to;
        stage = STAGE_LINK;
      } else if (e.code == ACT_EXTERNAL_SESSION) {
        d.session = e.arg2;
        if (to >= 0) {
          d.via = <i32>e.arg;
          d.link = to;
          stage = STAGE_LINK;
        } else {
          member = <i32>e.arg;
          keyMember = -1;
          stage = STAGE_SEND;
        }
      } else {
        break;
      }
      countHit(t, row);
    }
  }
  d.member = member;
  d.port = port;
  d.keyMember = keyMember;
  d.stage = stage;
  return stage;
}

/** The action code of hit `h` (a row), just found in `t`: from the keyed slot when it held the action. */
@inline function actionCode(t: Table, h: Hit): i32 {
  const a = wordOf(h);
  return a != 0 ? <i32>wordCode(a) : <i32>entryAt(t, rowOf(h)).code;
}

/** The out-link of hit `h` (a row), just found in forward table `t`, when its action is a forward to one out-link; else
 * −1. */
@inline function oneOutLink(t: Table, h: Hit): i32 {
  const a = wordOf(h);
  if (a != 0) return wordCode(a) == <u32>ACT_OUT && wordCount(a) == 1 ? <i32>wordArg(a) : -1;
  const e = entryAt(t, rowOf(h));
  return e.code == ACT_OUT && e.count == 1 ? <i32>e.arg : -1;
}
