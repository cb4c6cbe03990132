// Bound kernels, for `npm run bench:bound` only (not part of the data plane's
// build): each takes one bench scenario's packet along the path every packet
// of that scenario takes, as a list of the data plane's own step functions
// (assembly/pipeline/steps.ts), each told the case it takes (`known`): no
// stage dispatch, no plan looked up, and none of the tests that choose the
// path or could fail (member, link, road, action, room). Whatever a packet
// costs beyond its kernel is the price of interpreting the description: of
// finding, step by step, what the kernel knew. test/bench/bound.test.ts holds
// each kernel to the lane's counters, hits and bytes.

import {
  ACT_DELIVER,
  ACT_EXTERNAL_LINK,
  ACT_EXTERNAL_SESSION,
  ACT_FORWARD,
  ACT_OUT,
  ACT_PHYSICAL,
  ACT_PUSH,
  ACT_RECEIVE,
  STAGE_ACQUIRE,
  STAGE_DONE,
  STAGE_SEND,
} from "../abi";
import { Packet, PACKET_SIZE } from "../pipeline/packet";
import { PLAN_DELIVER, PLAN_FORWARD, PLAN_NONE } from "../pipeline/plan";
import { nextInput, startBatch } from "../pipeline/run";
import { memberAt } from "../pipeline/topology";
import {
  acquireStep,
  deliverStep,
  forwardStep,
  LANE,
  linkStep,
  receiveStep,
  sendStep,
  transmitStep,
} from "../pipeline/steps";

export const KERNEL_L2: i32 = 0;
export const KERNEL_HUB: i32 = 1;
export const KERNEL_ROUTER: i32 = 2;
export const KERNEL_VXLAN: i32 = 3;

const d = changetype<Packet>(memory.data(PACKET_SIZE, 16));

/** Runs the staged batch (as run() takes it) through kernel `kernel`; the caller empties the recording ring. */
export function boundRun(n: i32, first: u32, base: u32, kernel: i32): void {
  const count = startBatch(n, first, base);
  for (let i = 0; i < count; i++) {
    nextInput(d);
    if (kernel == KERNEL_L2) l2(d);
    else if (kernel == KERNEL_HUB) hub(d);
    else if (kernel == KERNEL_ROUTER) router(d);
    else vxlan(d);
  }
}

/** acquireStep at the packet's member, in the lane (walk has the member's record in hand for its plan). */
@inline function acquire(d: Packet, plan: u32, known: i32): void {
  acquireStep(d, memberAt(d.member), LANE, plan, known);
}

/** A member forwards what it sends itself into the session of the underlay member on its machine. */
@inline function intoSession(d: Packet): void {
  forwardStep(d, LANE, PLAN_NONE, ACT_OUT);
  transmitStep(d, LANE, PLAN_NONE, ACT_EXTERNAL_SESSION);
  linkStep(d, LANE, STAGE_SEND); // the virtual link
  sendStep(d, LANE, ACT_PUSH);
}

/** A member acquires the packet to receive it and pops its header: the overlay member has it. */
@inline function popped(d: Packet): void {
  acquire(d, PLAN_NONE, ACT_RECEIVE);
  receiveStep(d, LANE, PLAN_NONE, ACT_EXTERNAL_LINK);
}

/** A planned host (plan.ts PLAN_DELIVER) acquires the packet and delivers it. */
@inline function delivered(d: Packet): void {
  acquire(d, PLAN_DELIVER, ACT_RECEIVE);
  receiveStep(d, LANE, PLAN_DELIVER, ACT_DELIVER);
  deliverStep(d, LANE, ACT_DELIVER);
}

/** l2-exact: feed → the switch forwards by dst onto an external link. */
function l2(d: Packet): void {
  linkStep(d, LANE, STAGE_ACQUIRE);
  acquire(d, PLAN_FORWARD, ACT_FORWARD); // a planned forwarder: its forward and transmit too
  linkStep(d, LANE, STAGE_DONE);
}

/** hub-and-spoke-8: spoke → hub, forwarded by dst → the spoke acquires by dst and delivers. */
function hub(d: Packet): void {
  linkStep(d, LANE, STAGE_ACQUIRE);
  acquire(d, PLAN_FORWARD, ACT_FORWARD); // a planned forwarder: its forward and transmit too
  linkStep(d, LANE, STAGE_ACQUIRE);
  delivered(d);
}

/** router-layered: lanA.r pops Ethernet into ip.r (LPM, TTL − 1), which transmits into lanB.r's session: push, out. */
function router(d: Packet): void {
  linkStep(d, LANE, STAGE_ACQUIRE);
  popped(d);
  acquire(d, PLAN_NONE, ACT_FORWARD); // ip.r: its TTL side effect leaves it unplanned
  intoSession(d);
  forwardStep(d, LANE, PLAN_NONE, ACT_OUT);
  transmitStep(d, LANE, PLAN_NONE, ACT_PHYSICAL);
  linkStep(d, LANE, STAGE_DONE);
}

/** vxlan: vm3 → overlay.a's session (push VXLAN) → lan.a's (push Ethernet) → the LAN → pop, pop → vm5 delivers. */
function vxlan(d: Packet): void {
  intoSession(d); // vm3 into overlay.a's
  intoSession(d); // overlay.a into lan.a's
  forwardStep(d, LANE, PLAN_NONE, ACT_OUT);
  transmitStep(d, LANE, PLAN_NONE, ACT_PHYSICAL);
  linkStep(d, LANE, STAGE_ACQUIRE);
  popped(d); // lan.b
  popped(d); // overlay.b
  delivered(d); // vm5
}
