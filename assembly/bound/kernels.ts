// Bound kernels, for `npm run bench:bound` only (not part of the data plane's
// build): each takes one bench scenario's packet along the path every packet
// of that scenario takes, calling the same helpers as the fast lane (parse,
// lookups, counters, push, pop, TTL, link crossing, delivery) with none of the
// checks that choose the path — no stage dispatch, no member, link, road or
// action tests. Whatever a packet costs beyond its kernel is the price of
// interpreting the description; what the kernel costs, no specialisation of
// the same operations can beat. test/bench/bound.test.ts holds each kernel to
// the lane's counters, hits and bytes.

import { PORT_SELF } from "../abi";
import {
  countHit,
  directRow,
  Entry,
  entryAt,
  Hit,
  lookupUncounted,
  rowOf,
  singleRow,
  Table,
  wordArg,
  wordOf,
} from "../tables/table";
import { carry, hand, push, takeHeaderOff, ttlEffect } from "../pipeline/effects";
import { drained } from "../pipeline/output";
import { keyOf, Packet, PACKET_SIZE, release } from "../pipeline/packet";
import { parseHeader, setInLink } from "../pipeline/parse";
import { nextInput, startBatch } from "../pipeline/run";
import { linkAt, Member, memberAt, outLink, receiverMember, receiverPort } from "../pipeline/topology";

export const KERNEL_L2: i32 = 0;
export const KERNEL_HUB: i32 = 1;
export const KERNEL_ROUTER: i32 = 2;
export const KERNEL_VXLAN: i32 = 3;

const d = changetype<Packet>(memory.data(PACKET_SIZE, 16));

/** Runs the staged batch (as run() takes it) through kernel `kernel`, emptying the output ring after it. */
export function boundRun(n: i32, first: u32, base: u32, kernel: i32): void {
  const count = startBatch(n, first, base);
  for (let i = 0; i < count; i++) {
    nextInput(d);
    if (kernel == KERNEL_L2) l2(d);
    else if (kernel == KERNEL_HUB) hub(d);
    else if (kernel == KERNEL_ROUTER) router(d);
    else vxlan(d);
  }
  drained();
}

/** The out-link of forward hit `h` (one out-link): from the keyed slot when it held the action. */
@inline function outOf(t: Table, h: Hit): u32 {
  const a = wordOf(h);
  return a != 0 ? wordArg(a) : entryAt(t, rowOf(h)).arg;
}

/** Crosses the packet's link; returns the link's first receiver (the caller's next member), its in-link in d.inLink. */
@inline function cross(d: Packet): i32 {
  const l = linkAt(d.link);
  carry(d, l);
  d.inLink = receiverPort(l, 0);
  return receiverMember(l, 0);
}

/**
 * A forward by the key (with the TTL side effect when `ttl`) and a transmit
 * row: returns that row, the packet on its out-link.
 */
@inline function forwardTransmit(d: Packet, m: Member, ttl: bool): Entry {
  let t = changetype<Table>(m.forward);
  const h = lookupUncounted(t, keyOf(d));
  const out = outOf(t, h);
  if (ttl) ttlEffect(d, m, d.inLink);
  countHit(t, rowOf(h));
  t = changetype<Table>(m.transmit);
  const r = directRow(t, out);
  countHit(t, r);
  d.link = outLink(m, out);
  return entryAt(t, r);
}

/** A keyless acquire row `forward`, then forwardTransmit. */
@inline function forwardBy(d: Packet, m: Member, ttl: bool): Entry {
  parseHeader(d, m.design);
  setInLink(keyOf(d), d.inLink);
  const t = changetype<Table>(m.acquire);
  countHit(t, singleRow(t));
  return forwardTransmit(d, m, ttl);
}

/** An acquire by the key saying receive, a receive row: returns that row (deliver, or pop to an overlay). */
@inline function acquireReceive(d: Packet, m: Member): Entry {
  const key = keyOf(d);
  parseHeader(d, m.design);
  setInLink(key, d.inLink);
  let t = changetype<Table>(m.acquire);
  countHit(t, rowOf(lookupUncounted(t, key)));
  t = changetype<Table>(m.receive);
  const r = rowOf(lookupUncounted(t, key));
  countHit(t, r);
  return entryAt(t, r);
}

/** A receive row that pops to an overlay: the overlay member's index, the packet on its in-link. */
@inline function popTo(d: Packet, e: Entry): i32 {
  takeHeaderOff(d, <i32>e.arg);
  d.inLink = e.arg2;
  return <i32>e.arg;
}

/** Delivery at member `mi` (its receive row keyless `deliver`, counted by the caller). */
@inline function deliverAt(d: Packet, mi: i32): void {
  d.member = mi;
  hand(d, memberAt(mi), false);
  release(d);
}

/**
 * Forward what the member sends itself (in-link `self`: the key needs no
 * parse) and transmit: returns the transmit row — into a session, arg is the
 * underlay member and arg2 its session — the packet on its out-link.
 */
@inline function forwardFromSelf(d: Packet, m: Member): Entry {
  setInLink(keyOf(d), PORT_SELF);
  d.inLink = PORT_SELF;
  const e = forwardTransmit(d, m, false);
  d.session = e.arg2;
  return e;
}

/** The underlay member's send row pushes its header. */
@inline function sendPush(d: Packet, m: Member): void {
  const t = changetype<Table>(m.send);
  const r = directRow(t, d.session);
  push(d, m.design, <usize>entryAt(t, r).data);
  countHit(t, r);
}

/** l2-exact: feed → the switch forwards by dst onto an external link. */
function l2(d: Packet): void {
  forwardBy(d, memberAt(cross(d)), false);
  carry(d, linkAt(d.link));
  release(d);
}

/** hub-and-spoke-8: spoke → hub, forwarded by dst → the spoke acquires by dst and delivers. */
function hub(d: Packet): void {
  forwardBy(d, memberAt(cross(d)), false);
  const spoke = cross(d);
  acquireReceive(d, memberAt(spoke));
  deliverAt(d, spoke);
}

/** router-layered: lanA.r pops Ethernet into ip.r (LPM, TTL − 1), which transmits into lanB.r's session: push, out. */
function router(d: Packet): void {
  const ip = memberAt(popTo(d, acquireReceive(d, memberAt(cross(d)))));
  const e = forwardBy(d, ip, true);
  d.session = e.arg2;
  carry(d, linkAt(d.link));
  const lanB = memberAt(<i32>e.arg);
  sendPush(d, lanB);
  forwardFromSelf(d, lanB);
  carry(d, linkAt(d.link));
  release(d);
}

/** vxlan: vm3 → overlay.a's session (push VXLAN) → lan.a's (push Ethernet) → the LAN → pop, pop → vm5 delivers. */
function vxlan(d: Packet): void {
  const vm3 = memberAt(d.member);
  parseHeader(d, vm3.design);
  const toOverlay = forwardFromSelf(d, vm3);
  carry(d, linkAt(d.link));
  const a = memberAt(<i32>toOverlay.arg);
  sendPush(d, a);
  const toLan = forwardFromSelf(d, a);
  carry(d, linkAt(d.link));
  const lanA = memberAt(<i32>toLan.arg);
  sendPush(d, lanA);
  forwardFromSelf(d, lanA);
  const b = popTo(d, acquireReceive(d, memberAt(cross(d))));
  const vm5 = popTo(d, acquireReceive(d, memberAt(b)));
  acquireReceive(d, memberAt(vm5));
  deliverAt(d, vm5);
}
