// Dropping: every drop has a reason, counted at the member that dropped it.

import { EV_DROP, STAGE_DONE } from "../abi";
import { event, tracing } from "./trace";
import { linkIdAt, Packet, release } from "./packet";
import { memberAt, orphanDrops } from "./topology";

/** Counts `reason` against member `m` (−1: no member had the packet yet). */
export function countDrop(m: i32, reason: i32): void {
  const counters = m >= 0 ? memberAt(m).drops : orphanDrops;
  const c = counters + ((<usize>reason) << 3);
  store<u64>(c, load<u64>(c) + 1);
}

/**
 * Drops `d` in `stage` for `reason`, counted at its member, traced with the
 * link identifier its step has in hand; returns the next stage: done.
 */
export function drop(d: Packet, stage: i32, reason: i32): i32 {
  countDrop(d.member, reason);
  if (tracing) event(EV_DROP, stage, 0, reason, d, -1, linkIdAt(d, stage), d.link, 0);
  release(d);
  return STAGE_DONE;
}
