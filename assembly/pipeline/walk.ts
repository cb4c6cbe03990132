// The walk: a packet taken through the steps (steps.ts), two ways, by
// `lane`, a constant where it is called (run.ts):
//
//   STEP  one call takes one step, with every case: a drop, replication, a
//         want of room (STAGE_WAIT), and the trace's events. The batch loop
//         makes room for the trace between steps.
//   LANE  the fast lane: one call takes the packet through every step it
//         meets, as long as each is a common case — a link with one receiver
//         or none (or anycast), an acquire, receive, forward to one out-link,
//         transmit, push, pop, delivery, SharedAcquire or SharedForward —
//         one step falling through to the next. At a case it does not take,
//         a step leaves the packet before doing anything of itself (no hit
//         counted, no record written, no byte changed), and STEP takes the
//         same step from its start. Without a trace, the batch loop gives
//         each packet to the lane, and to STEP where the lane leaves it.
//
// So a packet's fate, bytes and counters are those of its steps, whichever
// way they were taken; a test holds both to the reference model
// (test/pipeline/differential*: with a trace, STEP takes every step).

import {
  STAGE_ACQUIRE,
  STAGE_DELIVER,
  STAGE_DONE,
  STAGE_FORWARD,
  STAGE_LINK,
  STAGE_RECEIVE,
  STAGE_SEND,
  STAGE_TRANSMIT,
} from "../abi";
import { Packet } from "./packet";
import { PLAN_FORWARD, PLAN_NONE, planOf } from "./plan";
import {
  acquireStep,
  ANY,
  deliverStep,
  forwardStep,
  LANE,
  LEFT,
  linkStep,
  receiveStep,
  sendStep,
  transmitStep,
} from "./steps";
import { memberAt } from "./topology";

export { LANE, STEP } from "./steps";

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
  /** The member's plan in the lane, from its acquire on: receive, which only an acquire leads to, reads it. */
  let plan = PLAN_NONE;
  while (true) {
    if (stage == STAGE_LINK) {
      stage = linkStep(d, lane, ANY);
      if (!lane || stage == STAGE_DONE) return stage;
    }
    if (stage == STAGE_SEND) {
      stage = sendStep(d, lane, ANY);
      if (!lane) return stage;
    }
    if (stage == STAGE_ACQUIRE) {
      const m = memberAt(d.member);
      plan = lane ? planOf(m) : PLAN_NONE;
      if (lane && plan == PLAN_FORWARD) {
        // A planned forwarder's acquire, with its plan as a constant, takes its forward and transmit too.
        stage = acquireStep(d, m, LANE, PLAN_FORWARD, ANY);
        continue;
      }
      stage = acquireStep(d, m, lane, plan, ANY);
      if (!lane) return stage;
    }
    if (stage == STAGE_FORWARD) {
      stage = forwardStep(d, lane, PLAN_NONE, ANY);
      if (!lane) return stage;
      if (stage == STAGE_FORWARD) continue; // SharedForward: the partner forwards it
    }
    if (stage == STAGE_TRANSMIT) {
      stage = transmitStep(d, lane, PLAN_NONE, ANY);
      if (!lane) return stage;
      continue; // to the link or send, above
    }
    if (stage == STAGE_RECEIVE) {
      stage = receiveStep(d, lane, plan, ANY);
      if (!lane) return stage;
      if (stage == STAGE_ACQUIRE) continue; // popped to the overlay
    }
    if (stage == STAGE_DELIVER) {
      stage = deliverStep(d, lane, ANY);
      if (!lane || stage == STAGE_DONE) return stage;
    }
    if (stage >= LEFT) break;
  }
  // The lane leaves the packet at a step, nothing of it done, for STEP to take.
  stage -= LEFT;
  d.stage = stage;
  return stage;
}
