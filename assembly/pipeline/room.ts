// Room in the rings (trace, recording): the steps that write a record (a link
// crossing that is recorded, a delivery) ask first. Short of room now, the step
// returns STAGE_WAIT and the batch loop pauses with the packet where it was,
// to take the same step again once the TypeScript side has emptied the
// buffers; a record larger than an empty buffer never fits, and the packet is
// dropped as too long.

import { DROP_TOO_LONG } from "../abi";
import { recordingRoom, ringUsed } from "./recording";
import { drop } from "./drop";
import { Packet } from "./packet";

/** Not a stage: the step could not be taken for want of room (run.ts pauses). */
export const STAGE_WAIT: i32 = -1;

export const ROOM_NOW: i32 = 0;
export const ROOM_LATER: i32 = 1; // once the TypeScript side has emptied the rings
export const ROOM_NEVER: i32 = 2; // the packet's record is larger than an empty buffer

/** Whether a record of `len` bytes for recording `target` (−1: none, always room) fits the recording ring. */
@inline export function roomFor(target: i32, len: u32, tagged: bool): i32 {
  if (recordingRoom(target, len, tagged)) return ROOM_NOW;
  return ringUsed == 0 ? ROOM_NEVER : ROOM_LATER;
}

/**
 * What step `stage` of `d` (its member and link identifier written back) does
 * short of room (`room`, not ROOM_NOW): wait, or drop the packet as too long.
 */
@inline export function shortOfRoom(d: Packet, stage: i32, room: i32): i32 {
  return room == ROOM_LATER ? STAGE_WAIT : drop(d, stage, DROP_TOO_LONG);
}
