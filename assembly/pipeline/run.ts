// The batch loop: one call carries every packet of a batch through the whole
// topology — every member and internal link — until it leaves on a link to the
// outside, is delivered, or is dropped. No call back to JavaScript, no
// allocation: the stages are nodes that return the next one.
//
// Inputs are parallel arrays (structure of arrays), one element per packet,
// filled by the TypeScript side with one set() each; packet bytes sit in the
// staging area at inOffset[i]:
//
//   inOffset u32[] │ inLen u32[] │ inOrigLen u32[] │ inSec u32[] │ inNsec u32[] │ inEndpoint u32[]
//
// inSec is whole seconds as a pcap record has them (ts_sec): a record takes it as it is.

import { EV_INJECT, STAGE_DONE } from "../abi";
import { plansExpire } from "./plan";
import { event, inRanges, traceCap, traceOn, tracePos, traceRoom, traceSome, tracing } from "./trace";
import { holdInput, linkIdAt, Packet, PACKET_SIZE, SLACK } from "./packet";
import { pop, resetCopies } from "./replicate";
import { STAGE_WAIT } from "./room";
import { LANE, STEP, walk } from "./walk";
import { endpointAt } from "./topology";

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
let inCount: i32 = 0;
/** The batch's next input packet: the batch has loaded inNext of them. */
let inNext: i32 = 0;
/**
 * Input packets loaded before this batch since the counters were reset, less
 * this batch's loaded before the reset: adding inNext gives injected(). The
 * batch loop only counts inNext up.
 */
let injectedBefore: u64 = 0;
/** Input packets loaded since the counters were reset: each ends with one fate, as does each copy. */
export function injected(): u64 {
  return injectedBefore + <u64>inNext;
}
export function injectedReset(): void {
  injectedBefore = -(<u64>inNext);
}
let firstPacket: u32 = 0;
/**
 * Whether each input packet's staging bytes are its own (no two packets' bytes overlap, and nothing reads them
 * after the run): then a packet is written in place until it is shared (packet.ts holdInput). Set by whoever
 * fills the input area: inputPcap (records lie apart), the TypeScript side's stage (when it finds them apart).
 */
let inputWritable = false;
export function setInputWritable(writable: bool): void {
  inputWritable = writable;
}
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
  inOffset = heap.alloc((<usize>packets) << 2);
  inLen = heap.alloc((<usize>packets) << 2);
  inOrigLen = heap.alloc((<usize>packets) << 2);
  inSec = heap.alloc((<usize>packets) << 2);
  inNsec = heap.alloc((<usize>packets) << 2);
  inEndpoint = heap.alloc((<usize>packets) << 2);
  inData = heap.alloc(<usize>bytes + SLACK);
}

/** Tracing needs room for a step's events: its own and one fork per copy. */
export let maxFanout: i32 = 1;
export function setMaxFanout(n: i32): void {
  maxFanout = n;
}

const cur = changetype<Packet>(memory.data(PACKET_SIZE, 16));
/** A pause left `cur` part-way, to go on at cur.stage. */
let paused = false;

/** The descriptor of the packet the batch holds: where a paused run's packet waits (tests read it). */
export function heldPacket(): usize {
  return changetype<usize>(cur);
}

/**
 * Starts a batch of `n` input packets, numbered from `first`; packet i's bytes
 * are at inData + inOffset[i] − base.
 */
export function run(n: i32, first: u32, base: u32): i32 {
  startBatch(n, first, base);
  return resume();
}

/** Takes a batch of `n` input packets, numbered from `first` (see run); returns how many it holds. */
export function startBatch(n: i32, first: u32, base: u32): i32 {
  inCount = n < inCap ? n : inCap;
  injectedBefore += <u64>inNext;
  inNext = 0;
  firstPacket = first;
  inBase = base;
  plansExpire();
  return inCount;
}

/**
 * Goes on with the batch; returns STATUS_PAUSED when a ring is full (drain it,
 * call drained(), then resume()) or STATUS_DONE when every packet is finished.
 */
export function resume(): i32 {
  let stage = STAGE_DONE;
  if (paused) {
    paused = false;
    stage = cur.stage;
  }
  while (true) {
    if (stage == STAGE_DONE) {
      // The packet is finished: the next copy of it waiting, or the next input packet.
      if (pop(cur)) {
        stage = cur.stage;
      } else if (inNext < inCount) {
        if (traceOn) {
          // Room for the injection, should the packet be traced.
          if (tracePos >= traceCap) return STATUS_PAUSED;
          // With --trace-packets: this packet and its copies are traced, or not.
          if (traceSome) tracing = inRanges(firstPacket + <u32>inNext);
        }
        stage = nextInput(cur);
      } else {
        cur.stage = STAGE_DONE; // the batch holds no packet (heldPacket)
        return STATUS_DONE;
      }
    }
    // Without a trace the fast lane takes the packet as far as it can; STEP takes the step it leaves.
    if (!tracing) {
      stage = fastLane(cur, stage);
      if (stage == STAGE_DONE) continue;
    }
    // A step writes at most 4 + maxFanout trace events.
    if (tracing && !traceRoom(4 + maxFanout)) return pause(stage);
    cur.stage = stage;
    stage = oneStep(cur, stage);
    // The step wants room in a ring: take it again once the TypeScript side has emptied them.
    if (stage == STAGE_WAIT) return pause(cur.stage);
  }
  return STATUS_DONE; // not reached: AssemblyScript wants it after an endless loop
}

/** Leaves `cur` to go on at `stage` when resume is next called. */
function pause(stage: i32): i32 {
  cur.stage = stage;
  paused = true;
  return STATUS_PAUSED;
}

/** The fast lane (steps.ts), in a function of its own: the engine compiles it apart from the batch loop. */
function fastLane(d: Packet, stage: i32): i32 {
  return walk(d, stage, LANE);
}

/** One step, with every case (steps.ts). */
@inline function oneStep(d: Packet, stage: i32): i32 {
  return walk(d, stage, STEP);
}

/** Loads the batch's next input packet into `d` (see loadInput), which counts it as injected. */
@inline export function nextInput(d: Packet): i32 {
  return loadInput(d, inNext++);
}

/** Loads input packet `i` into `d` at its endpoint; returns the step it starts with. */
@inline function loadInput(d: Packet, i: i32): i32 {
  const o = (<usize>i) << 2;
  d.data = inData + <usize>(load<u32>(inOffset + o) - inBase);
  d.len = load<u32>(inLen + o);
  d.origLen = load<u32>(inOrigLen + o);
  d.tsSec = load<u32>(inSec + o);
  d.tsNsec = load<u32>(inNsec + o);
  holdInput(d, inputWritable);
  d.hops = 0;
  d.packet = firstPacket + <u32>i;
  d.copy = 0;
  d.via = -1;
  d.keyMember = -1;
  resetCopies();
  // Where the endpoint's kind puts the packet was worked out when the endpoint was set (topology.ts endpointSet).
  const ep = endpointAt(<i32>load<u32>(inEndpoint + o));
  d.member = ep.member;
  d.inLink = ep.inLink;
  d.outLink = ep.outLink;
  d.link = ep.link;
  d.session = ep.session;
  d.stage = ep.stage;
  if (tracing) event(EV_INJECT, d.stage, 0, 0, d, -1, linkIdAt(d, d.stage), d.link, <u32>ep.kind);
  return d.stage;
}
