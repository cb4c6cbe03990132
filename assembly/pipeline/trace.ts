// The trace: when tracing, one event per step in the trace ring (the packets
// themselves go to the recordings, ./recording.ts). The loop checks for room
// before a step; when the ring is full it pauses, and the TypeScript side
// reads the events and resumes.
//
// A trace event:
//   ┌─────────┬──────────┬───────────┬───────────┬────────────┬──────────┐
//   │ kind u8 │ stage u8 │ action u8 │ reason u8 │ packet u32 │ copy u32 │
//   └─────────┴──────────┴───────────┴───────────┴────────────┴──────────┘
//   ┌────────────┬─────────┬───────────┬──────────┬─────────┐
//   │ member i32 │ row i32 │ ident u32 │ link i32 │ arg u32 │
//   └────────────┴─────────┴───────────┴──────────┴─────────┘
//   EVENT_SIZE = 32

import {
  EVENT_ACTION,
  EVENT_ARG,
  EVENT_COPY,
  EVENT_KIND,
  EVENT_LINK,
  EVENT_MEMBER,
  EVENT_PACKET,
  EVENT_IDENT,
  EVENT_REASON,
  EVENT_ROW,
  EVENT_SIZE,
  EVENT_STAGE,
} from "../abi";
import { Packet } from "./packet";

/** A trace was asked for (setTracing): the ring exists. */
export let traceOn: bool = false;
/** The trace holds only the packets of traceRange's ranges: each input packet is looked up as it is loaded (inRanges).
 * */
export let traceSome: bool = false;
/** The input packet being run (and its copies) is traced. */
export let tracing: bool = false;
export let traceBase: usize = 0;
export let traceCap: i32 = 0; // events
export let tracePos: i32 = 0; // events

/** A trace ring of `events` events, empty. */
export function traceInit(events: i32): void {
  if (traceBase != 0) heap.free(traceBase);
  traceBase = heap.alloc(<usize>(events * EVENT_SIZE) + 8);
  traceCap = events;
  tracePos = 0;
}

// The packets traced, when not every one (traceOnly, traceRange): ascending, disjoint, inclusive ranges of packet
// numbers.
//   ┌───────────┬──────────┐
//   │ first u32 │ last u32 │   8 bytes a range, rangeCount of them at rangeBase
//   └───────────┴──────────┘
let rangeBase: usize = 0;
let rangeCount: i32 = 0;
let rangeCap: i32 = 0;

/** Traces every packet, or none; forgets the ranges. */
export function setTracing(on: bool): void {
  traceOn = on;
  tracing = on;
  traceSome = false;
  rangeCount = 0;
}

/** With a trace on, traces only the packets of the ranges traceRange gives next: none until then. */
export function traceOnly(): void {
  traceSome = traceOn;
  rangeCount = 0;
}

/** Traces the packets first..last too (after traceOnly; ranges in ascending order, apart). */
export function traceRange(first: u32, last: u32): void {
  if (rangeCount == rangeCap) {
    rangeCap = rangeCap == 0 ? 16 : rangeCap << 1;
    rangeBase = rangeBase == 0 ? heap.alloc((<usize>rangeCap) << 3) : heap.realloc(rangeBase, (<usize>rangeCap) << 3);
  }
  const r = rangeBase + ((<usize>rangeCount) << 3);
  store<u32>(r, first);
  store<u32>(r, last, 4);
  rangeCount++;
}

/** Whether `packet` is in a range of traceRange: a binary search. */
export function inRanges(packet: u32): bool {
  let lo = 0;
  let hi = rangeCount - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const r = rangeBase + ((<usize>mid) << 3);
    if (packet < load<u32>(r)) hi = mid - 1;
    else if (packet > load<u32>(r, 4)) lo = mid + 1;
    else return true;
  }
  return false;
}

/** The trace ring is empty again (the TypeScript side has read it). */
export function drained(): void {
  tracePos = 0;
}

@inline export function traceRoom(events: i32): bool {
  return !tracing || tracePos + events <= traceCap;
}

/**
 * Records a trace event. Callers write `if (tracing) event(…)`: the branch comes
 * before the arguments, so that, off, an event costs one test and no loads.
 */
export function event(
  kind: i32,
  stage: i32,
  action: i32,
  reason: i32,
  d: Packet,
  row: i32,
  ident: u32,
  link: i32,
  arg: u32,
): void {
  const e = traceBase + <usize>(tracePos * EVENT_SIZE);
  store<u8>(e + EVENT_KIND, <u8>kind);
  store<u8>(e + EVENT_STAGE, <u8>stage);
  store<u8>(e + EVENT_ACTION, <u8>action);
  store<u8>(e + EVENT_REASON, <u8>reason);
  store<u32>(e + EVENT_PACKET, d.packet);
  store<u32>(e + EVENT_COPY, d.copy);
  store<i32>(e + EVENT_MEMBER, d.member);
  store<i32>(e + EVENT_ROW, row);
  store<u32>(e + EVENT_IDENT, ident);
  store<i32>(e + EVENT_LINK, link);
  store<u32>(e + EVENT_ARG, arg);
  tracePos++;
}
