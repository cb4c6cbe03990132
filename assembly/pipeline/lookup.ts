// A stage's table lookup, the same for all five: look the key up in the
// member's table, record the lookup in the trace, and on a miss (or no table)
// drop the packet with the stage's reason.

import { EV_LOOKUP } from "../abi";
import { actionOf, Entry, Hit, lookup, lookupId, MISS, rowOf, Table } from "../tables/table";
import { drop } from "./drop";
import { event, tracing } from "./output";
import { Packet } from "./packet";

/**
 * The entry `key` matches in `table` (a Table pointer, 0 when the member has
 * none), or null when the packet was dropped for `missReason`. Inlined: it is
 * on every stage of every packet.
 */
@inline export function lookupIn(
  d: Packet,
  table: usize,
  key: usize,
  stage: i32,
  port: u32,
  missReason: i32,
): Entry | null {
  const t = changetype<Table>(table);
  return found(d, t, table == 0 ? MISS : lookup(t, key), stage, port, missReason);
}

/** lookupIn for a one-field key given as a number `bytes` wide: transmit's out-link (2), send's session (4). */
@inline export function lookupIdIn(
  d: Packet,
  table: usize,
  id: u32,
  bytes: i32,
  stage: i32,
  missReason: i32,
): Entry | null {
  const t = changetype<Table>(table);
  return found(d, t, table == 0 ? MISS : lookupId(t, id, bytes, scratch), stage, id, missReason);
}

/** Where lookupIdIn builds a key the direct index cannot take. */
const scratch = memory.data(8);

@inline function found(d: Packet, t: Table, h: Hit, stage: i32, port: u32, missReason: i32): Entry | null {
  const table = changetype<usize>(t);
  const row = rowOf(h);
  if (row < 0) {
    if (tracing) event(EV_LOOKUP, stage, 0, 0, d, -1, port, -1, table == 0 ? -1 : <u32>t.id);
    drop(d, stage, missReason);
    return null;
  }
  const e = actionOf(t, h);
  if (tracing) event(EV_LOOKUP, stage, <i32>e.code, 0, d, row, port, -1, t.id);
  return e;
}
