// What a packet does at each step (seed Figures 2–4, §5.2–5.3), written once:
// a link carries it to a member, which acquires it (to forward, to receive, or
// both), forwards it onto out-links, transmits it onto a link or into an
// underlay's session, receives it (delivered, or popped to the overlay), or
// sends it into a session (pushed).
//
// Each step is one function here (linkStep, sendStep, acquireStep, ...), the
// only place it is written. walk() (walk.ts) takes a packet through them, two
// ways, by `lane`: STEP, one step with every case, or LANE, the fast lane,
// many steps as long as each is a common case. A step the lane cannot finish
// it leaves before doing anything of itself (left), for STEP to take.
//
// Both ways read and write the descriptor as they go: the packet being walked
// sits at one address (run.ts's `cur`), whose fields the engine reaches as
// cheaply as the stack it would spill locals to, and a packet the lane leaves
// needs nothing written back. (Kept in locals, the member, link identifier and
// key owner cost more: the engine spilled them at every step anyway, and
// wrote them back at each turn of the loop.)
//
// Plans (plan.ts) are facts about a member's tables, made once per batch; the
// lane takes them for the checks and lookups they settle. STEP counts a hit
// at its lookup; the lane once it can no longer leave the step.
//
// The bench's bound kernels (assembly/bound/kernels.ts) call the same step
// functions, in the order their scenario's one path takes them, each told the
// case it takes (`known`): that is the walk with the path known in advance.

import {
  ACT_BOTH,
  ACT_DELIVER,
  ACT_DROP,
  ACT_EXTERNAL_LINK,
  ACT_EXTERNAL_SESSION,
  ACT_FORWARD,
  ACT_OUT,
  ACT_PHYSICAL,
  ACT_PUSH,
  ACT_RECEIVE,
  ACT_SHARED_ACQUIRE,
  ACT_SHARED_FORWARD,
  DROP_ACQUIRE_MISS,
  DROP_BAD_HEADER,
  DROP_FORWARD_DROP,
  DROP_FORWARD_MISS,
  DROP_LINK_DOWN,
  DROP_LOOP,
  DROP_MEMBER_DOWN,
  DROP_NO_LINK,
  DROP_NONE,
  DROP_RECEIVE_MISS,
  DROP_SEND_MISS,
  DROP_TRANSMIT_MISS,
  DROP_UNSUPPORTED,
  EV_DELIVER,
  EV_EXIT,
  EV_HANDOFF,
  EV_LINK,
  EV_POP,
  EV_PUSH,
  MODE_ALLCAST,
  MODE_ANYCAST,
  LINK_SELF,
  LINK_SHARED,
  STAGE_ACQUIRE,
  STAGE_DELIVER,
  STAGE_DONE,
  STAGE_FORWARD,
  STAGE_LINK,
  STAGE_RECEIVE,
  STAGE_SEND,
  STAGE_TRANSMIT,
} from "../abi";
import { countHit, directRow, entryAt, hit, lookupUncounted, MISS, rowOf, singleRow, Table } from "../tables/table";
import { drop } from "./drop";
import { carry, flowHash, hand, hopLimit, push, takeHeaderOff, ttlEffect } from "./effects";
import {
  actionCode,
  find,
  findByInLink,
  findId,
  findIdDirect,
  looked,
  missed,
  packedAction,
  packedArg,
  packedCode,
  packedCount,
} from "./lookup";
import { event, tracing } from "./trace";
import { keyOf, Packet, release } from "./packet";
import { KEY_PUSHED, parseHeader, setInLink } from "./parse";
import { PLAN_DELIVER, PLAN_FORWARD, PLAN_NONE } from "./plan";
import { FAN_BOTH, FAN_OUT_LINKS, FAN_RECEIVERS, replicate } from "./replicate";
import { roomFor, ROOM_NOW, shortOfRoom, STAGE_WAIT } from "./room";
import {
  linkAt,
  Member,
  MEMBER_TAG_DELIVERIES,
  memberAt,
  memberDown,
  outLink,
  receiverMember,
  receiverInLink,
} from "./topology";

/** walk's `lane`: the fast lane (common cases, many steps), or one step with every case. */
export const LANE: bool = true;
export const STEP: bool = false;
/**
 * Where the lane leaves a step (nothing of it done), the step returns its own
 * stage + LEFT. No step is numbered so, so walk's tests for the next step all
 * fail and one test at the foot of its loop ends the walk: a packet going
 * from one step to the next pays for no test of leaving.
 */
export const LEFT: i32 = 16;
@inline function left(stage: i32): i32 {
  return stage + LEFT;
}

/**
 * Where a step cannot go on: the lane leaves it (left), STEP drops the packet
 * at `stage` for `reason`. A miss is written out (`if (lane) return left(…)`,
 * then `missed`): as an argument here, the key's identifier that STEP traces
 * would be loaded in the lane too.
 */
@inline function stop(d: Packet, lane: bool, stage: i32, reason: i32): i32 {
  return lane ? left(stage) : drop(d, stage, reason);
}

/** stop for want of `room` in a ring (STEP waits for it, or drops a packet too long for it). */
@inline function stopShort(d: Packet, lane: bool, stage: i32, room: i32): i32 {
  return lane ? left(stage) : shortOfRoom(d, stage, room);
}

/**
 * A step's `known` in the walk: the step tests which case it is. A bound
 * kernel (assembly/bound/kernels.ts) gives each step the case its scenario
 * takes instead (the next stage for link, else an action code): the step then
 * tests neither for it nor for anything that could fail.
 */
export const ANY: i32 = -1;

// Each step below takes `d` at its stage and returns the next (STAGE_DONE
// once the packet is finished; STAGE_WAIT for room; left(its stage) where
// the lane leaves it). `lane` and `known` are constants where a step is
// called, and the compiler keeps only what they leave open: `lane` as
// walk's; `known`, ANY or a bound kernel's case. `plan` (acquire, forward,
// transmit, receive) is the member's plan where the lane has it, else
// PLAN_NONE; forward and transmit take it as a constant too.

// link: a link carries the packet from its sender to its receivers: one for a one-way or two-way link, each for
// allcast (replication), one chosen by flow for anycast (affinity), none when it leaves the network.
// known: STAGE_SEND (a virtual link), STAGE_DONE (no receiver) or STAGE_ACQUIRE (the first receiver).
@inline export function linkStep(d: Packet, lane: bool, known: i32): i32 {
  const checks = known == ANY;
  const traced = !lane && tracing;
  const l = linkAt(d.link);
  const n = l.nReceivers;
  if (checks && l.recorded) {
    const room = roomFor(l.recordingId, d.len, false);
    if (room != ROOM_NOW) return stopShort(d, lane, STAGE_LINK, room);
  }
  // Every crossing is one hop; too many is a loop. A link that is down carries nothing (not counted).
  if (checks && d.hops >= hopLimit) return stop(d, lane, STAGE_LINK, DROP_LOOP);
  if (checks && l.down != 0) return stop(d, lane, STAGE_LINK, DROP_LINK_DOWN);
  // Allcast replication and anycast's choice (a call) are STEP's.
  if (lane && checks) {
    if (d.via < 0 && n > 1 && (l.mode == MODE_ALLCAST || l.mode == MODE_ANYCAST)) return left(STAGE_LINK);
  }
  carry(d, l);
  if (traced) event(EV_LINK, STAGE_LINK, 0, 0, d, -1, d.outLink, d.link, d.hops);
  if (checks ? d.via >= 0 : known == STAGE_SEND) {
    // A virtual link: a session of the underlay (layering) takes the packet, whole, at its member's send table.
    if (traced) event(EV_HANDOFF, STAGE_SEND, 0, 0, d, -1, d.session, d.link, <u32>d.via);
    d.member = d.via;
    d.inLink = d.outLink; // it comes to send from the virtual link
    d.via = -1;
    d.keyMember = -1;
    return STAGE_SEND;
  }
  if (checks ? n == 0 : known == STAGE_DONE) {
    if (traced) event(EV_EXIT, STAGE_LINK, 0, 0, d, -1, d.outLink, d.link, 0);
    release(d);
    return STAGE_DONE;
  }
  if (!lane && n > 1 && l.mode == MODE_ALLCAST) {
    return replicate(d, FAN_RECEIVERS, <usize>d.link, n);
  }
  let r = 0;
  if (!lane) {
    if (n > 1 && l.mode == MODE_ANYCAST) r = <i32>(flowHash(d, l) % <u32>n);
  }
  d.member = receiverMember(l, r);
  d.inLink = receiverInLink(l, r);
  d.keyMember = -1;
  return STAGE_ACQUIRE;
}

// send: a packet the member's machine originates in session d.session gets the session's header pushed in front,
// then is forwarded from `self` (seed Figure 4). known: ACT_PUSH.
@inline export function sendStep(d: Packet, lane: bool, known: i32): i32 {
  const checks = known == ANY;
  const traced = !lane && tracing;
  const m = memberAt(d.member);
  if (checks && memberDown(m)) return stop(d, lane, STAGE_SEND, DROP_MEMBER_DOWN);
  // The key: the session identifier, big-endian, in one zero-padded word.
  const t = changetype<Table>(m.send);
  const h = !checks ? hit(directRow(t, d.session), 0) : lane ? findIdDirect(t, d.session) : findId(t, d.session, 4);
  const row = rowOf(h);
  if (checks && row < 0) {
    if (lane) return left(STAGE_SEND);
    return missed(d, t, STAGE_SEND, d.session, DROP_SEND_MISS);
  }
  if (!lane) looked(d, t, h, STAGE_SEND, d.session);
  const e = entryAt(t, row);
  if (checks && e.code != ACT_PUSH) return stop(d, lane, STAGE_SEND, DROP_UNSUPPORTED);
  const before = d.len;
  const refused = push(d, m.design, <usize>e.data);
  if (checks && refused != DROP_NONE) return stop(d, lane, STAGE_SEND, refused);
  if (lane) countHit(t, row);
  if (traced) event(EV_PUSH, STAGE_SEND, 0, 0, d, -1, d.session, -1, d.len - before);
  d.inLink = LINK_SELF;
  d.keyMember = KEY_PUSHED;
  return STAGE_FORWARD;
}

// acquire: does this member take the packet arriving on in-link d.inLink, and for what — to forward it, to receive
// it, or both (seed Figure 2)? On a shared link (subduction, seed §5.3) it may instead hand the packet, unchanged, to
// the acquire table of the shared member of the same name in the overlay (SharedAcquire).
// A planned forwarder's acquire (plan PLAN_FORWARD) takes its forward and transmit with it, in the lane.
// `m` is d.member's record, which the lane has in hand for the plan. known: ACT_FORWARD, ACT_RECEIVE or
// ACT_SHARED_ACQUIRE.
@inline export function acquireStep(d: Packet, m: Member, lane: bool, plan: u32, known: i32): i32 {
  const checks = known == ANY;
  const traced = !lane && tracing;
  const key = keyOf(d);
  if (checks && plan == PLAN_NONE && memberDown(m)) return stop(d, lane, STAGE_ACQUIRE, DROP_MEMBER_DOWN);
  if (d.keyMember != d.member) {
    // The parse writes the in-link too.
    if (!parseHeader(d, m.design) && checks) return stop(d, lane, STAGE_ACQUIRE, DROP_BAD_HEADER);
    d.keyMember = d.member;
  } else {
    setInLink(key, d.inLink);
  }
  const t = changetype<Table>(m.acquire);
  if (lane && plan == PLAN_FORWARD) {
    // The table is keyless, and its one row says forward. Forward and transmit follow here, with the plan's facts
    // as constants: the compiler drops what they settle.
    countHit(t, singleRow(t));
    const next = forwardStep(d, LANE, PLAN_FORWARD, checks ? ANY : ACT_OUT);
    if (next != STAGE_TRANSMIT) return next; // left, or SharedForward
    return transmitStep(d, LANE, PLAN_FORWARD, checks ? ANY : ACT_PHYSICAL);
  }
  const h = checks ? find(t, key) : lookupUncounted(t, key);
  const row = rowOf(h);
  if (checks && row < 0) {
    if (lane) return left(STAGE_ACQUIRE);
    return missed(d, t, STAGE_ACQUIRE, d.inLink, DROP_ACQUIRE_MISS);
  }
  if (!lane) looked(d, t, h, STAGE_ACQUIRE, d.inLink);
  const code = checks ? actionCode(t, h) : known;
  let next = STAGE_FORWARD;
  if (code == ACT_FORWARD) {
    next = STAGE_FORWARD;
  } else if (code == ACT_RECEIVE) {
    next = STAGE_RECEIVE;
  } else if (code == ACT_SHARED_ACQUIRE) {
    // Subduction: the overlay's shared member acquires it, on the same in-link.
    const to = <i32>entryAt(t, row).arg;
    if (traced) event(EV_HANDOFF, STAGE_ACQUIRE, 0, 0, d, -1, d.inLink, -1, <u32>to);
    d.member = to;
    d.keyMember = -1;
    next = STAGE_ACQUIRE;
  } else if (lane) {
    return left(STAGE_ACQUIRE);
  } else if (code == ACT_BOTH) {
    return replicate(d, FAN_BOTH, 0, 2);
  } else {
    return drop(d, STAGE_ACQUIRE, DROP_UNSUPPORTED);
  }
  if (lane) countHit(t, row);
  return next;
}

// forward: onto which out-links does this member send the packet? Several out-links replicate it; a drop row or
// no row drops it; a shared member may hand it to its partner's forward table instead (SharedForward, seed §5.3).
// Forwarding leaves the header as it is, except a design's declared side effect (TTL − 1), on every copy.
// plan: PLAN_FORWARD at a planned forwarder, after its acquire. known: ACT_OUT (one out-link) or ACT_SHARED_FORWARD.
@inline export function forwardStep(d: Packet, lane: bool, plan: u32, known: i32): i32 {
  const checks = known == ANY;
  const traced = !lane && tracing;
  const key = keyOf(d);
  const m = memberAt(d.member);
  const t = changetype<Table>(m.forward);
  let h = MISS;
  // A planned member is up, and acquire has just made its key, the in-link in it.
  if (plan != PLAN_FORWARD) {
    if (checks && memberDown(m)) return stop(d, lane, STAGE_FORWARD, DROP_MEMBER_DOWN);
    // After a push the header is valid by construction: a table that looks at the in-link only needs no parse,
    // and in the lane, keyless or by the direct index, no key (a miss there goes the key's way, below).
    const pushed = d.keyMember == KEY_PUSHED && m.forward != 0 && t.inLinkOnly;
    if (lane && pushed) h = findByInLink(t, d.inLink);
    if (rowOf(h) < 0) {
      if (d.keyMember != d.member && !pushed) {
        // The parse writes the in-link too.
        if (!parseHeader(d, m.design) && checks) return stop(d, lane, STAGE_FORWARD, DROP_BAD_HEADER);
        d.keyMember = d.member;
      } else {
        setInLink(key, d.inLink);
      }
      h = checks ? find(t, key) : lookupUncounted(t, key);
    }
  } else {
    h = lookupUncounted(t, key);
  }
  const row = rowOf(h);
  if (checks && row < 0) {
    if (lane) return left(STAGE_FORWARD);
    return missed(d, t, STAGE_FORWARD, d.inLink, DROP_FORWARD_MISS);
  }
  if (!lane) looked(d, t, h, STAGE_FORWARD, d.inLink);
  const action = packedAction(t, h); // code, count and arg, read once
  const code = checks ? packedCode(action) : known;
  if (code == ACT_SHARED_FORWARD) {
    // Subduction: the shared member in the underlay forwards it, marked as handed over (in-link `shared`).
    if (lane) countHit(t, row);
    const to = <i32>packedArg(action);
    d.inLink = LINK_SHARED;
    if (traced) event(EV_HANDOFF, STAGE_FORWARD, 0, 0, d, -1, d.inLink, -1, <u32>to);
    d.member = to;
    d.keyMember = -1;
    return STAGE_FORWARD;
  }
  const outs = code != ACT_OUT ? 0 : checks ? packedCount(action) : 1;
  // A drop and replication are STEP's.
  if (lane) {
    if (outs != 1) return left(STAGE_FORWARD);
  } else if (outs == 0) {
    const reason = code == ACT_DROP || code == ACT_OUT ? DROP_FORWARD_DROP : DROP_UNSUPPORTED;
    return drop(d, STAGE_FORWARD, reason);
  }
  // A planned member has no side effect.
  if (plan != PLAN_FORWARD) {
    const refused = ttlEffect(d, m, d.inLink);
    if (checks && refused != DROP_NONE) return stop(d, lane, STAGE_FORWARD, refused);
  }
  if (!lane) {
    if (outs > 1) {
      return replicate(d, FAN_OUT_LINKS, <usize>entryAt(t, row).data, <i32>outs);
    }
  }
  if (lane) countHit(t, row);
  d.outLink = packedArg(action); // the one out-link, kept in the entry (or the action word) by the control plane
  return STAGE_TRANSMIT;
}

// transmit: how does the packet leave on out-link d.outLink — onto the physical link, or (layering, seed §5.2) into
// an underlay network's session? Either way it crosses the link (counted, recorded: a virtual link's recording
// holds the overlay packet as it crossed); a virtual link then hands it to the underlay member's send table.
// plan: PLAN_FORWARD at a planned forwarder. known: ACT_PHYSICAL or ACT_EXTERNAL_SESSION.
@inline export function transmitStep(d: Packet, lane: bool, plan: u32, known: i32): i32 {
  const checks = known == ANY;
  const traced = !lane && tracing;
  const m = memberAt(d.member);
  let next = STAGE_LINK;
  // The key: the out-link identifier, big-endian, in one zero-padded word. A planned member's transmit table goes
  // by the direct index (as a kernel's scenario's do).
  const t = changetype<Table>(m.transmit);
  const h =
    plan == PLAN_FORWARD || !checks
      ? hit(directRow(t, d.outLink), 0)
      : lane
        ? findIdDirect(t, d.outLink)
        : findId(t, d.outLink, 2);
  const row = rowOf(h);
  if (checks && row < 0) {
    if (lane) return left(STAGE_TRANSMIT);
    return missed(d, t, STAGE_TRANSMIT, d.outLink, DROP_TRANSMIT_MISS);
  }
  if (!lane) looked(d, t, h, STAGE_TRANSMIT, d.outLink);
  const to = outLink(m, d.outLink);
  const e = entryAt(t, row);
  // A planned member's transmit rows are all physical.
  if (plan == PLAN_FORWARD || (checks ? e.code == ACT_PHYSICAL : known == ACT_PHYSICAL)) {
    if (checks && to < 0) return stop(d, lane, STAGE_TRANSMIT, DROP_NO_LINK);
    d.link = to;
    next = STAGE_LINK;
  } else if (checks ? e.code == ACT_EXTERNAL_SESSION : known == ACT_EXTERNAL_SESSION) {
    // arg: the underlay member on this machine; arg2: the session that implements the link.
    d.session = e.arg2;
    if (to >= 0) {
      d.via = <i32>e.arg;
      d.link = to;
      next = STAGE_LINK;
    } else {
      // No virtual link to cross: straight to the underlay member's send table.
      if (traced) event(EV_HANDOFF, STAGE_SEND, 0, 0, d, -1, d.session, d.link, e.arg);
      d.member = <i32>e.arg;
      d.inLink = d.outLink;
      d.keyMember = -1;
      next = STAGE_SEND;
    }
  } else {
    return stop(d, lane, STAGE_TRANSMIT, DROP_UNSUPPORTED);
  }
  if (lane) countHit(t, row);
  return next;
}

// receive: what does the member's machine do with a packet it acquired to receive — take it (delivered), or
// (layering, seed §5.2) take this network's header off and hand the rest to the overlay member on the same machine,
// arriving on one of its links (ExternalLink)? acquire parsed the packet for this member: the key and hdrLen are
// current. plan: PLAN_DELIVER at a planned host. known: ACT_DELIVER or ACT_EXTERNAL_LINK.
@inline export function receiveStep(d: Packet, lane: bool, plan: u32, known: i32): i32 {
  const checks = known == ANY;
  const traced = !lane && tracing;
  const key = keyOf(d);
  const m = memberAt(d.member);
  const t = changetype<Table>(m.receive);
  if (plan == PLAN_DELIVER) {
    // The table is keyless, and its one row says deliver.
    countHit(t, singleRow(t));
    return STAGE_DELIVER;
  }
  const h = checks ? find(t, key) : lookupUncounted(t, key);
  const row = rowOf(h);
  if (checks && row < 0) {
    if (lane) return left(STAGE_RECEIVE);
    return missed(d, t, STAGE_RECEIVE, d.inLink, DROP_RECEIVE_MISS);
  }
  if (!lane) looked(d, t, h, STAGE_RECEIVE, d.inLink);
  const code = checks ? actionCode(t, h) : known;
  let next = STAGE_DELIVER;
  if (code == ACT_DELIVER) {
    next = STAGE_DELIVER;
  } else if (code == ACT_EXTERNAL_LINK) {
    // Decapsulation: the bytes after this member's header are the overlay's packet, on its in-link arg2.
    const e = entryAt(t, row);
    const overlay = <i32>e.arg;
    if (traced) event(EV_POP, STAGE_RECEIVE, 0, 0, d, -1, e.arg2, -1, d.hdrLen);
    takeHeaderOff(d, overlay);
    d.member = overlay;
    d.inLink = e.arg2;
    d.keyMember = -1;
    next = STAGE_ACQUIRE;
  } else {
    return stop(d, lane, STAGE_RECEIVE, DROP_UNSUPPORTED);
  }
  if (lane) countHit(t, row);
  return next;
}

// deliver: the packet reaches the member's machine (recorded, counted). known: ACT_DELIVER.
@inline export function deliverStep(d: Packet, lane: bool, known: i32): i32 {
  const checks = known == ANY;
  const traced = !lane && tracing;
  const m = memberAt(d.member);
  const tagged = (m.flags & MEMBER_TAG_DELIVERIES) != 0;
  if (checks) {
    const room = roomFor(m.recordingId, d.len, tagged);
    if (room != ROOM_NOW) return stopShort(d, lane, STAGE_DELIVER, room);
  }
  hand(d, m, tagged);
  if (traced) event(EV_DELIVER, STAGE_DELIVER, 0, 0, d, -1, d.inLink, -1, 0);
  release(d);
  return STAGE_DONE;
}
