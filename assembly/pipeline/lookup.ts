// A step's table lookup (steps.ts): find the key's row in the member's table,
// read the row's action from the index's action word or the entry; count the
// hit and record the lookup in the trace. A miss (or no table) drops the
// packet with the step's reason.

import { EV_LOOKUP } from "../abi";
import {
  countHit,
  directRow,
  Entry,
  entryAt,
  hit,
  Hit,
  lookupIdUncounted,
  lookupUncounted,
  MISS,
  ROAD_DIRECT,
  ROAD_DIRECT32,
  ROAD_SINGLE,
  rowOf,
  singleRow,
  Table,
  wordArg,
  wordCode,
  wordCount,
  wordOf,
} from "../tables/table";
import { drop } from "./drop";
import { event, tracing } from "./trace";
import { Packet } from "./packet";

/** The row `key` finds in `t` (null: the member has no such table), its hit not counted; or a miss. */
@inline export function find(t: Table, key: usize): Hit {
  return changetype<usize>(t) == 0 ? MISS : lookupUncounted(t, key);
}

/** find for a one-field key given as a number `bytes` wide: transmit's out-link (2), send's session (4). */
@inline export function findId(t: Table, id: u32, bytes: i32): Hit {
  return changetype<usize>(t) == 0 ? MISS : lookupIdUncounted(t, id, bytes, scratch);
}

/**
 * findId for the fast lane: by the direct index only, without a call. A table
 * without one (or no table) is a miss here: the lane leaves the step to STEP.
 */
@inline export function findIdDirect(t: Table, id: u32): Hit {
  if (changetype<usize>(t) == 0) return MISS;
  const road = t.road;
  return road == ROAD_DIRECT || road == ROAD_DIRECT32 ? hit(directRow(t, id), 0) : MISS;
}

/**
 * find for the lane, for a table that looks at the in-link only (`inLinkOnly`), by the in-link itself: keyless
 * or by the direct index, the key neither written nor read. Any other road (or no table) is a miss here: the
 * caller takes the key's way.
 */
@inline export function findByInLink(t: Table, inLink: u32): Hit {
  if (changetype<usize>(t) == 0) return MISS;
  const road = t.road;
  return road == ROAD_SINGLE ? hit(singleRow(t), 0) : road == ROAD_DIRECT ? hit(directRow(t, inLink), 0) : MISS;
}

/** Where findId builds a key the direct index cannot take. */
const scratch = memory.data(8);

/**
 * A miss in `t` at step `stage` (the key's link identifier or session `id`):
 * traced, and dropped for `reason`.
 */
export function missed(d: Packet, t: Table, stage: i32, id: u32, reason: i32): i32 {
  if (tracing) event(EV_LOOKUP, stage, 0, 0, d, -1, id, -1, changetype<usize>(t) == 0 ? -1 : <u32>t.id);
  return drop(d, stage, reason);
}

/** Hit `h` in `t` at step `stage` (the key's link identifier or session `id`), taken one step at a time: counted, and
 * traced. */
@inline export function looked(d: Packet, t: Table, h: Hit, stage: i32, id: u32): void {
  countHit(t, rowOf(h));
  if (tracing) event(EV_LOOKUP, stage, actionCode(t, h), 0, d, rowOf(h), id, -1, t.id);
}

/** The action code of hit `h` (a row) in `t`: from the index's action word when it held it, else the entry. */
@inline export function actionCode(t: Table, h: Hit): i32 {
  const a = wordOf(h);
  return a != 0 ? <i32>wordCode(a) : <i32>entryAt(t, rowOf(h)).code;
}

/**
 * The action of hit `h` in `t` read once, as the entry holds it: code (u16), count (u16), arg (u32) in one word,
 * from the index's action word or one load of the entry (a step wanting all three, read one by one, would
 * work out the entry's address and load it three times).
 */
@inline export function packedAction(t: Table, h: Hit): u64 {
  if (offsetof<Entry>("count") != offsetof<Entry>("code") + 2 || offsetof<Entry>("arg") != offsetof<Entry>("code") + 4)
    unreachable();
  const a = wordOf(h);
  if (a != 0) return (<u64>wordCode(a)) | ((<u64>wordCount(a)) << 16) | ((<u64>wordArg(a)) << 32);
  return load<u64>(changetype<usize>(entryAt(t, rowOf(h))) + offsetof<Entry>("code"));
}

/** packedAction's code, count and arg. */
@inline export function packedCode(action: u64): i32 {
  return <i32>((<u32>action) & 0xffff);
}
@inline export function packedCount(action: u64): u32 {
  return (<u32>action) >> 16;
}
@inline export function packedArg(action: u64): u32 {
  return <u32>(action >> 32);
}
