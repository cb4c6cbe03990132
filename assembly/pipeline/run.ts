// The batch loop: one call carries every packet of a batch through the whole
// topology — every member and internal link — until it leaves on a link to the
// outside, is delivered, or is dropped. No call back to JavaScript, no
// allocation: the stages are nodes that return the next one.
//
// Inputs are parallel arrays (structure of arrays), one element per packet,
// filled by the TypeScript side with one set() each; packet bytes sit in the
// staging area at inOffset[i]:
//
//   inOffset u32[] │ inLen u32[] │ inOrigLen u32[] │ inSec f64[] │ inNsec u32[] │ inEndpoint u32[]

import {
  DROP_TOO_LONG,
  EV_INJECT,
  INJECT_LINK,
  INJECT_SELF,
  PORT_NONE,
  PORT_SELF,
  STAGE_ACQUIRE,
  STAGE_DELIVER,
  STAGE_DONE,
  STAGE_FORWARD,
  STAGE_LINK,
  STAGE_RECEIVE,
  STAGE_SEND,
  STAGE_TRANSMIT,
} from "../abi";
import { acquire } from "./acquire";
import { drop } from "./drop";
import { forward } from "./forward";
import { cross } from "./link";
import { event, outPos, outRoom, traceRoom, tracing } from "./output";
import { Packet, PACKET_SIZE } from "./packet";
import { deliver, receive } from "./receive";
import { FAN_NONE, fanKind, pop, replicate, resetCopies } from "./replicate";
import { send } from "./send";
import { captureRoom, captureUsed, capturing } from "./capture";
import { endpointAt, linkAt, MEMBER_TAG_DELIVERIES, memberAt } from "./topology";
import { transmit } from "./transmit";

export const STATUS_DONE: i32 = 0;
export const STATUS_PAUSED: i32 = 1;

let inCap: i32 = 0;
export let inData: usize = 0;
export let inOffset: usize = 0;
export let inLen: usize = 0;
export let inOrigLen: usize = 0;
export let inSec: usize = 0;
export let inNsec: usize = 0;
export let inEndpoint: usize = 0;
/** Input packets loaded since the counters were reset: each ends with one fate, as does each copy. */
export let injected: u64 = 0;
export function injectedReset(): void {
  injected = 0;
}
let inCount: i32 = 0;
let inNext: i32 = 0;
let firstPacket: u32 = 0;
/** inOffset values are relative to this: the batch's offsets as the reader gave them. */
let inBase: u32 = 0;

/** Room for `packets` input packets and `bytes` of their data. */
export function inputInit(packets: i32, bytes: i32): void {
  if (inOffset != 0) {
    heap.free(inOffset);
    heap.free(inLen);
    heap.free(inOrigLen);
    heap.free(inSec);
    heap.free(inNsec);
    heap.free(inEndpoint);
    heap.free(inData);
  }
  inCap = packets;
  inOffset = heap.alloc(<usize>packets << 2);
  inLen = heap.alloc(<usize>packets << 2);
  inOrigLen = heap.alloc(<usize>packets << 2);
  inSec = heap.alloc(<usize>packets << 3);
  inNsec = heap.alloc(<usize>packets << 2);
  inEndpoint = heap.alloc(<usize>packets << 2);
  inData = heap.alloc(<usize>bytes);
}

/** Tracing needs room for a step's events: its own and one fork per copy. */
export let maxFanout: i32 = 1;
export function setMaxFanout(n: i32): void {
  maxFanout = n;
}

const cur = changetype<Packet>(memory.data(PACKET_SIZE, 16));
let active = false;

/**
 * Starts a batch of `n` input packets, numbered from `first`; packet i's bytes
 * are at inData + inOffset[i] − base.
 */
export function run(n: i32, first: u32, base: u32): i32 {
  inCount = n < inCap ? n : inCap;
  inNext = 0;
  firstPacket = first;
  inBase = base;
  return resume();
}

/**
 * Goes on with the batch; returns STATUS_PAUSED when a ring is full (drain it,
 * call drained(), then resume()) or STATUS_DONE when every packet is finished.
 */
export function resume(): i32 {
  while (true) {
    if (!active) {
      if (pop(cur)) {
        active = true;
      } else if (inNext < inCount) {
        if (!traceRoom(1)) return STATUS_PAUSED;
        loadInput(cur, inNext++);
        active = true;
      } else {
        return STATUS_DONE;
      }
    }
    let stage = cur.stage;
    while (stage != STAGE_DONE) {
      // Only steps that write to a ring or a capture can be short of room.
      if (tracing || stage == STAGE_LINK || stage == STAGE_DELIVER) {
        const r = room(cur, stage);
        if (r == ROOM_NEVER) {
          stage = drop(cur, stage, DROP_TOO_LONG);
          break;
        }
        if (r == ROOM_LATER) {
          cur.stage = stage;
          return STATUS_PAUSED;
        }
      }
      cur.stage = stage;
      stage = step(cur, stage);
      if (fanKind != FAN_NONE) stage = replicate(cur);
    }
    cur.stage = STAGE_DONE;
    active = false;
  }
  return STATUS_DONE; // not reached: AssemblyScript wants it after an endless loop
}

@inline function step(d: Packet, stage: i32): i32 {
  switch (stage) {
    case STAGE_ACQUIRE: return acquire(d);
    case STAGE_FORWARD: return forward(d);
    case STAGE_TRANSMIT: return transmit(d);
    case STAGE_LINK: return cross(d);
    case STAGE_RECEIVE: return receive(d);
    case STAGE_DELIVER: return deliver(d);
    case STAGE_SEND: return send(d);
  }
  return STAGE_DONE;
}

const ROOM_NOW: i32 = 0;
const ROOM_LATER: i32 = 1; // once the TypeScript side has emptied the rings and captures
const ROOM_NEVER: i32 = 2; // the packet's record is larger than an empty buffer

/** Whether the rings and captures can take everything the step `stage` of `d` may write. */
function room(d: Packet, stage: i32): i32 {
  if (!traceRoom(4 + maxFanout)) return ROOM_LATER;
  let target = -1;
  let tagged = false;
  if (stage == STAGE_LINK) {
    const l = linkAt(d.link);
    if (l.capture == 0) return ROOM_NOW;
    target = l.captureId;
  } else if (stage == STAGE_DELIVER) {
    const m = memberAt(d.member);
    target = m.captureId;
    tagged = (m.flags & MEMBER_TAG_DELIVERIES) != 0;
  } else {
    return ROOM_NOW;
  }
  if (capturing) {
    if (captureRoom(target, d.len, tagged)) return ROOM_NOW;
    return captureUsed(target) == 0 ? ROOM_NEVER : ROOM_LATER;
  }
  if (outRoom(d.len)) return ROOM_NOW;
  return outPos == 0 ? ROOM_NEVER : ROOM_LATER;
}

/** Loads input packet `i` into `d` at its endpoint. */
function loadInput(d: Packet, i: i32): void {
  const o = <usize>i << 2;
  d.data = inData + <usize>(load<u32>(inOffset + o) - inBase);
  d.len = load<u32>(inLen + o);
  d.origLen = load<u32>(inOrigLen + o);
  d.tsSec = load<f64>(inSec + (<usize>i << 3));
  d.tsNsec = load<u32>(inNsec + o);
  d.slot = -1;
  d.hops = 0;
  d.packet = firstPacket + <u32>i;
  d.copy = 0;
  d.session = 0;
  d.via = -1;
  d.keyMember = -1;
  d.link = -1;
  injected++;
  resetCopies();
  const ep = endpointAt(<i32>load<u32>(inEndpoint + o));
  if (ep.kind == INJECT_LINK) {
    const l = linkAt(ep.link);
    d.member = l.sender;
    d.port = l.sender >= 0 ? l.senderPort : PORT_NONE;
    d.link = ep.link;
    d.stage = STAGE_LINK;
  } else if (ep.kind == INJECT_SELF) {
    d.member = ep.member;
    d.port = PORT_SELF;
    d.stage = STAGE_FORWARD;
  } else {
    d.member = ep.member;
    d.port = PORT_SELF;
    d.session = ep.arg;
    d.stage = STAGE_SEND;
  }
  event(EV_INJECT, d.stage, 0, 0, d, -1, d.port, d.link, <u32>(ep.kind));
}


