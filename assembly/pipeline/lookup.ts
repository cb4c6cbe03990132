// A stage's table lookup, the same for all five: look the key up in the
// member's table, record the lookup in the trace, and on a miss (or no table)
// drop the packet with the stage's reason.

import { EV_LOOKUP } from "../abi";
import { hitAction, wordArg, wordCode, wordCount } from "../tables/exact";
import { Entry, entryAt, lookup, lookupId, Table } from "../tables/table";
import { drop } from "./drop";
import { event, tracing } from "./output";
import { Packet } from "./packet";

/**
 * The entry `key` matches in `table` (a Table pointer, 0 when the member has
 * none), or null when the packet was dropped for `missReason`. Inlined: it is
 * on every stage of every packet.
 */
@inline export function lookupIn(d: Packet, table: usize, key: usize, stage: i32, port: u32, missReason: i32): Entry | null {
  const t = changetype<Table>(table);
  return found(d, t, table == 0 ? -1 : lookup(t, key), stage, port, missReason);
}

/** lookupIn for a one-field key given as a number `bytes` wide: transmit's out-link (2), send's session (4). */
@inline export function lookupIdIn(d: Packet, table: usize, id: u32, bytes: i32, stage: i32, missReason: i32): Entry | null {
  const t = changetype<Table>(table);
  return found(d, t, table == 0 ? -1 : lookupId(t, id, bytes, scratch), stage, id, missReason);
}

/**
 * A hit's action as the keyed index held it (exact.ts: the action word), for
 * the stages to read as an entry's. Such an action has no arg2 and no data:
 * those stay 0 here, as the static data starts.
 */
const held = changetype<Entry>(memory.data(offsetof<Entry>(), 16));

@inline function unpack(a: u32): Entry {
  held.code = <u16>wordCode(a);
  held.count = <u16>wordCount(a);
  held.arg = wordArg(a);
  return held;
}

/** The action of entry `row`, just found in `t`: from the keyed slot when it held one (exact.hitAction), else the entry. */
@inline export function actionOf(t: Table, row: i32): Entry {
  const a = hitAction;
  return a != 0 ? unpack(a) : entryAt(t, row);
}

/** Where lookupIdIn builds a key the direct index cannot take. */
const scratch = memory.data(8);

@inline function found(d: Packet, t: Table, row: i32, stage: i32, port: u32, missReason: i32): Entry | null {
  const table = changetype<usize>(t);
  if (row < 0) {
    if (tracing) event(EV_LOOKUP, stage, 0, 0, d, -1, port, -1, table == 0 ? -1 : <u32>t.id);
    drop(d, stage, missReason);
    return null;
  }
  const e = actionOf(t, row);
  if (tracing) event(EV_LOOKUP, stage, <i32>e.code, 0, d, row, port, -1, t.id);
  return e;
}
