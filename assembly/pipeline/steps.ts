// What a packet does at each step (seed Figures 2–4, §5.2–5.3), written once:
// a link carries it to a member, which acquires it (to forward, to receive, or
// both), forwards it onto out-links, transmits it onto a link or into an
// underlay's session, receives it (delivered, or popped to the overlay), or
// sends it into a session (pushed).
//
// walk() is the only place these steps are written. It is taken two ways, by
// `lane`, a constant where it is called (run.ts):
//
//   STEP  one call takes one step, with every case: a drop, replication, a
//         want of room (STAGE_WAIT), and the trace's events. The batch loop
//         makes room for the trace between steps.
//   LANE  the fast lane: one call takes the packet through every step it
//         meets, as long as each is a common case — a link with one receiver
//         or none (or anycast), an acquire, receive, forward to one out-link,
//         transmit, push, pop, delivery, SharedAcquire or SharedForward —
//         one step falling through to the next. At a step it does not
//         take (`if (lane) break`) it leaves the packet before doing anything
//         of that step (no hit counted, no record written, no byte changed),
//         and STEP takes the same step from its start. Without a trace, the
//         batch loop gives each packet to the lane, and to STEP where the
//         lane leaves it.
//
// So a packet's fate, bytes and counters are those of its steps, whichever
// way they were taken; a test holds both to the reference model
// (test/pipeline/differential*: with a trace, STEP takes every step).
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
import { countHit, directRow, entryAt, hit, lookupUncounted, rowOf, singleRow, Table } from "../tables/table";
import { drop } from "./drop";
import { carry, flowHash, hand, hopLimit, push, takeHeaderOff, ttlEffect } from "./effects";
import { actionCode, actionCount, actionArg, find, findId, findIdDirect, looked, missed } from "./lookup";
import { event, tracing } from "./output";
import { keyOf, Packet, release } from "./packet";
import { KEY_PUSHED, parseHeader, setInLink } from "./parse";
import { PLAN_DELIVER, PLAN_FORWARD, PLAN_NONE, planOf } from "./plan";
import { fanBoth, fanPorts, fanReceivers, replicate } from "./replicate";
import { roomFor, ROOM_NOW, shortOfRoom, STAGE_WAIT } from "./room";
import { linkAt, MEMBER_TAG_DELIVERIES, memberAt, memberDown, outLink, receiverMember, receiverPort } from "./topology";

/** walk's `lane`: the fast lane (common cases, many steps), or one step with every case. */
export const LANE: bool = true;
export const STEP: bool = false;
/** What forwardStep and transmitStep return where the lane leaves the step (nothing of it done). */
const LEAVE: i32 = -2;

/**
 * Takes `d` from step `stage`: with `lane`, as far as the fast lane goes
 * (STAGE_DONE, or the step it leaves to STEP, written back into `d`); else
 * one step, returning the next (or STAGE_WAIT: the same step again, once
 * there is room).
 *
 * The steps follow one another in the order a packet mostly takes them
 * (link, send, acquire, forward, transmit; receive and deliver where an
 * acquire leads there), each tested in turn, so that the lane falls through
 * from one to the next.
 */
@inline export function walk(d: Packet, stage: i32, lane: bool): i32 {
  /** The member's plan in the lane, from its acquire on (PLAN_NONE whenever the member changes otherwise). */
  let plan = PLAN_NONE;
  const key = keyOf(d);
  const traced = !lane && tracing;
  while (true) {
    // A link carries the packet from its sender to its receivers: one for a one-way or two-way link, each for
    // allcast (replication), one chosen by flow for anycast (affinity), none when it leaves the network.
    if (stage == STAGE_LINK) {
      const l = linkAt(d.link);
      const n = l.nReceivers;
      if (l.recorded) {
        const room = roomFor(l.recordingId, d.len, false);
        if (room != ROOM_NOW) {
          if (lane) break;
          return shortOfRoom(d, STAGE_LINK, room);
        }
      }
      // Every crossing is one hop; too many is a loop. A link that is down carries nothing (not counted).
      if (d.hops >= hopLimit) {
        if (lane) break;
        return drop(d, STAGE_LINK, DROP_LOOP);
      }
      if (l.down != 0) {
        if (lane) break;
        return drop(d, STAGE_LINK, DROP_LINK_DOWN);
      }
      // Allcast replication and anycast's choice (a call) are STEP's.
      if (lane) {
        if (d.via < 0 && n > 1 && (l.mode == MODE_ALLCAST || l.mode == MODE_ANYCAST)) break;
      }
      carry(d, l);
      if (traced) event(EV_LINK, STAGE_LINK, 0, 0, d, -1, d.outLink, d.link, d.hops);
      if (d.via >= 0) {
        // A virtual link: a session of the underlay (layering) takes the packet, whole, at its member's send table.
        if (traced) event(EV_HANDOFF, STAGE_SEND, 0, 0, d, -1, d.session, d.link, <u32>d.via);
        d.member = d.via;
        d.inLink = d.outLink; // it comes to send from the virtual link
        d.via = -1;
        d.keyMember = -1;
        stage = STAGE_SEND;
      } else if (n == 0) {
        if (traced) event(EV_EXIT, STAGE_LINK, 0, 0, d, -1, d.outLink, d.link, 0);
        release(d);
        return STAGE_DONE;
      } else if (!lane && n > 1 && l.mode == MODE_ALLCAST) {
        fanReceivers(d.link);
        return replicate(d);
      } else {
        let r = 0;
        if (!lane) {
          if (n > 1 && l.mode == MODE_ANYCAST) r = <i32>(flowHash(d, l) % <u32>n);
        }
        d.member = receiverMember(l, r);
        d.inLink = receiverPort(l, r);
        d.keyMember = -1;
        stage = STAGE_ACQUIRE;
      }
      if (!lane) return stage;
    }

    // send: a packet the member's machine originates in session d.session gets the session's header pushed in
    // front, then is forwarded from `self` (seed Figure 4).
    if (stage == STAGE_SEND) {
      const m = memberAt(d.member);
      if (memberDown(m)) {
        if (lane) break;
        return drop(d, STAGE_SEND, DROP_MEMBER_DOWN);
      }
      // The key: the session identifier, big-endian, in one zero-padded word.
      const t = changetype<Table>(m.send);
      const h = lane ? findIdDirect(t, d.session) : findId(t, d.session, 4);
      const row = rowOf(h);
      if (row < 0) {
        if (lane) break;
        return missed(d, t, STAGE_SEND, d.session, DROP_SEND_MISS);
      }
      if (!lane) looked(d, t, h, STAGE_SEND, d.session);
      const e = entryAt(t, row);
      if (e.code != ACT_PUSH) {
        if (lane) break;
        return drop(d, STAGE_SEND, DROP_UNSUPPORTED);
      }
      const before = d.len;
      const refused = push(d, m.design, <usize>e.data);
      if (refused != DROP_NONE) {
        if (lane) break;
        return drop(d, STAGE_SEND, refused);
      }
      if (lane) countHit(t, row);
      if (traced) event(EV_PUSH, STAGE_SEND, 0, 0, d, -1, d.session, -1, d.len - before);
      d.inLink = PORT_SELF;
      d.keyMember = KEY_PUSHED;
      plan = PLAN_NONE;
      stage = STAGE_FORWARD;
      if (!lane) return stage;
    }

    // acquire: does this member take the packet arriving on in-link `port`, and for what — to forward it, to
    // receive it, or both (seed Figure 2)? On a shared link (subduction, seed §5.3) it may instead hand the packet,
    // unchanged, to the acquire table of the shared member of the same name in the overlay (SharedAcquire).
    if (stage == STAGE_ACQUIRE) {
      const m = memberAt(d.member);
      plan = lane ? planOf(m) : PLAN_NONE;
      if (plan == PLAN_NONE && memberDown(m)) {
        if (lane) break;
        return drop(d, STAGE_ACQUIRE, DROP_MEMBER_DOWN);
      }
      if (d.keyMember != d.member) {
        if (!parseHeader(d, m.design)) {
          if (lane) break;
          return drop(d, STAGE_ACQUIRE, DROP_BAD_HEADER);
        }
        d.keyMember = d.member;
      }
      setInLink(key, d.inLink);
      const t = changetype<Table>(m.acquire);
      if (plan == PLAN_FORWARD) {
        // The table is keyless, and its one row says forward.
        countHit(t, singleRow(t));
        stage = STAGE_FORWARD;
        if (lane) {
          // Its forward and transmit, with the plan's facts as constants (forwardStep, transmitStep).
          stage = forwardStep(d, true, PLAN_FORWARD);
          if (stage == STAGE_TRANSMIT) {
            stage = transmitStep(d, true, PLAN_FORWARD);
            if (stage == LEAVE) {
              stage = STAGE_TRANSMIT;
              break;
            }
          } else if (stage == LEAVE) {
            stage = STAGE_FORWARD;
            break;
          }
          continue;
        }
      } else {
        const h = find(t, key);
        const row = rowOf(h);
        if (row < 0) {
          if (lane) break;
          return missed(d, t, STAGE_ACQUIRE, d.inLink, DROP_ACQUIRE_MISS);
        }
        if (!lane) looked(d, t, h, STAGE_ACQUIRE, d.inLink);
        const code = actionCode(t, h);
        if (code == ACT_FORWARD) {
          stage = STAGE_FORWARD;
        } else if (code == ACT_RECEIVE) {
          stage = STAGE_RECEIVE;
        } else if (code == ACT_SHARED_ACQUIRE) {
          // Subduction: the overlay's shared member acquires it, on the same in-link.
          if (lane) countHit(t, row);
          const to = <i32>entryAt(t, row).arg;
          if (traced) event(EV_HANDOFF, STAGE_ACQUIRE, 0, 0, d, -1, d.inLink, -1, <u32>to);
          d.member = to;
          d.keyMember = -1;
          if (!lane) return stage;
          continue;
        } else if (lane) {
          break;
        } else if (code == ACT_BOTH) {
          fanBoth();
          return replicate(d);
        } else {
          return drop(d, STAGE_ACQUIRE, DROP_UNSUPPORTED);
        }
        if (lane) countHit(t, row);
      }
      if (!lane) return stage;
    }

    // forward (forwardStep, below): onto which out-links does this member send the packet?
    if (stage == STAGE_FORWARD) {
      stage = forwardStep(d, lane, PLAN_NONE);
      if (stage == LEAVE) {
        stage = STAGE_FORWARD;
        break;
      }
      if (!lane) return stage;
      if (stage == STAGE_FORWARD) continue; // SharedForward: the partner forwards it
    }

    // transmit (transmitStep, below): how does the packet leave on its out-link?
    if (stage == STAGE_TRANSMIT) {
      stage = transmitStep(d, lane, PLAN_NONE);
      if (stage == LEAVE) {
        stage = STAGE_TRANSMIT;
        break;
      }
      if (!lane) return stage;
      continue; // to the link or send, above
    }

    // receive: what does the member's machine do with a packet it acquired to receive — take it (delivered), or
    // (layering, seed §5.2) take this network's header off and hand the rest to the overlay member on the same
    // machine, arriving on one of its links (ExternalLink)? acquire parsed the packet for this member: the key and
    // hdrLen are current.
    if (stage == STAGE_RECEIVE) {
      const m = memberAt(d.member);
      const t = changetype<Table>(m.receive);
      if (plan == PLAN_DELIVER) {
        // The table is keyless, and its one row says deliver.
        countHit(t, singleRow(t));
        stage = STAGE_DELIVER;
      } else {
        const h = find(t, key);
        const row = rowOf(h);
        if (row < 0) {
          if (lane) break;
          return missed(d, t, STAGE_RECEIVE, d.inLink, DROP_RECEIVE_MISS);
        }
        if (!lane) looked(d, t, h, STAGE_RECEIVE, d.inLink);
        const code = actionCode(t, h);
        if (code == ACT_DELIVER) {
          stage = STAGE_DELIVER;
        } else if (code == ACT_EXTERNAL_LINK) {
          // Decapsulation: the bytes after this member's header are the overlay's packet, on its in-link arg2.
          if (lane) countHit(t, row);
          const e = entryAt(t, row);
          const overlay = <i32>e.arg;
          if (traced) event(EV_POP, STAGE_RECEIVE, 0, 0, d, -1, e.arg2, -1, d.hdrLen);
          takeHeaderOff(d, overlay);
          d.member = overlay;
          d.inLink = e.arg2;
          d.keyMember = -1;
          stage = STAGE_ACQUIRE;
          if (!lane) return stage;
          continue;
        } else {
          if (lane) break;
          return drop(d, STAGE_RECEIVE, DROP_UNSUPPORTED);
        }
        if (lane) countHit(t, row);
      }
      if (!lane) return stage;
    }

    // deliver: the packet reaches the member's machine (recorded, counted).
    if (stage == STAGE_DELIVER) {
      const m = memberAt(d.member);
      const tagged = (m.flags & MEMBER_TAG_DELIVERIES) != 0;
      const room = roomFor(m.recordingId, d.len, tagged);
      if (room != ROOM_NOW) {
        if (lane) break;
        return shortOfRoom(d, STAGE_DELIVER, room);
      }
      hand(d, m, tagged);
      if (traced) event(EV_DELIVER, STAGE_DELIVER, 0, 0, d, -1, d.inLink, -1, 0);
      release(d);
      return STAGE_DONE;
    }
  }
  // The lane leaves the packet at `stage`, nothing of it done, for STEP to take.
  d.stage = stage;
  return stage;
}

// forward: onto which out-links does this member send the packet? Several out-links replicate it; a drop row or
// no row drops it; a shared member may hand it to its partner's forward table instead (SharedForward, seed §5.3).
// Forwarding leaves the header as it is, except a design's declared side effect (TTL − 1), on every copy.
/**
 * forward, as walk takes it (`lane`: LEAVE where the lane leaves the step);
 * `plan`, a constant where it is called: PLAN_FORWARD in the lane's planned
 * forwarder (acquire), else PLAN_NONE.
 */
@inline function forwardStep(d: Packet, lane: bool, plan: u32): i32 {
  const key = keyOf(d);
  const traced = !lane && tracing;
  const m = memberAt(d.member);
  const t = changetype<Table>(m.forward);
  // A planned member is up, and acquire has just made its key, the in-link in it.
  if (plan != PLAN_FORWARD) {
    if (memberDown(m)) {
      if (lane) return LEAVE;
      return drop(d, STAGE_FORWARD, DROP_MEMBER_DOWN);
    }
    // After a push the header is valid by construction: a table that looks at the in-link only needs no parse.
    if (d.keyMember != d.member && !(d.keyMember == KEY_PUSHED && m.forward != 0 && t.inLinkOnly)) {
      if (!parseHeader(d, m.design)) {
        if (lane) return LEAVE;
        return drop(d, STAGE_FORWARD, DROP_BAD_HEADER);
      }
      d.keyMember = d.member;
    }
    setInLink(key, d.inLink);
  }
  const h = plan == PLAN_FORWARD ? lookupUncounted(t, key) : find(t, key);
  const row = rowOf(h);
  if (row < 0) {
    if (lane) return LEAVE;
    return missed(d, t, STAGE_FORWARD, d.inLink, DROP_FORWARD_MISS);
  }
  if (!lane) looked(d, t, h, STAGE_FORWARD, d.inLink);
  const code = actionCode(t, h);
  if (code == ACT_SHARED_FORWARD) {
    // Subduction: the shared member in the underlay forwards it, marked as handed over (in-link `shared`).
    if (lane) countHit(t, row);
    const to = <i32>actionArg(t, h);
    d.inLink = PORT_SHARED;
    if (traced) event(EV_HANDOFF, STAGE_FORWARD, 0, 0, d, -1, d.inLink, -1, <u32>to);
    d.member = to;
    d.keyMember = -1;
    return STAGE_FORWARD;
  }
  const outs = code == ACT_OUT ? actionCount(t, h) : 0;
  // A drop and replication are STEP's.
  if (lane) {
    if (outs != 1) return LEAVE;
  } else if (outs == 0) {
    const reason = code == ACT_DROP || code == ACT_OUT ? DROP_FORWARD_DROP : DROP_UNSUPPORTED;
    return drop(d, STAGE_FORWARD, reason);
  }
  // A planned member has no side effect.
  if (plan != PLAN_FORWARD) {
    const refused = ttlEffect(d, m, d.inLink);
    if (refused != DROP_NONE) {
      if (lane) return LEAVE;
      return drop(d, STAGE_FORWARD, refused);
    }
  }
  if (!lane) {
    if (outs > 1) {
      fanPorts(<usize>entryAt(t, row).data, <i32>outs);
      return replicate(d);
    }
  }
  if (lane) countHit(t, row);
  d.outLink = actionArg(t, h); // the one out-link, kept in the entry (or the action word) by the control plane
  return STAGE_TRANSMIT;
}

// transmit: how does the packet leave on out-link d.outLink — onto the physical link, or (layering, seed §5.2) into
// an underlay network's session? Either way it crosses the link (counted, recorded: a virtual link's recording
// holds the overlay packet as it crossed); a virtual link then hands it to the underlay member's send table.
/** transmit, as walk takes it (forwardStep says how). */
@inline function transmitStep(d: Packet, lane: bool, plan: u32): i32 {
  const traced = !lane && tracing;
  const m = memberAt(d.member);
  let next = STAGE_LINK;
  // The key: the out-link identifier, big-endian, in one zero-padded word.
  const t = changetype<Table>(m.transmit);
  // A planned member's transmit table goes by the direct index.
  const h =
    plan == PLAN_FORWARD
      ? hit(directRow(t, d.outLink), 0)
      : lane
        ? findIdDirect(t, d.outLink)
        : findId(t, d.outLink, 2);
  const row = rowOf(h);
  if (row < 0) {
    if (lane) return LEAVE;
    return missed(d, t, STAGE_TRANSMIT, d.outLink, DROP_TRANSMIT_MISS);
  }
  if (!lane) looked(d, t, h, STAGE_TRANSMIT, d.outLink);
  const to = outLink(m, d.outLink);
  const e = entryAt(t, row);
  // A planned member's transmit rows are all physical.
  if (plan == PLAN_FORWARD || e.code == ACT_PHYSICAL) {
    if (to < 0) {
      if (lane) return LEAVE;
      return drop(d, STAGE_TRANSMIT, DROP_NO_LINK);
    }
    d.link = to;
    next = STAGE_LINK;
  } else if (e.code == ACT_EXTERNAL_SESSION) {
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
    if (lane) return LEAVE;
    return drop(d, STAGE_TRANSMIT, DROP_UNSUPPORTED);
  }
  if (lane) countHit(t, row);
  return next;
}
