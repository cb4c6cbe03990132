// A stage's table lookup, the same for all five: look the key up in the
// member's table, record the lookup in the trace, and on a miss (or no table)
// drop the packet with the stage's reason.

import { EV_LOOKUP } from "../abi";
import { Entry, entryAt, lookup, Table } from "../tables/table";
import { drop } from "./drop";
import { event } from "./output";
import { Packet } from "./packet";

/**
 * The entry `key` matches in `table` (a Table pointer, 0 when the member has
 * none), or null when the packet was dropped for `missReason`. Inlined: it is
 * on every stage of every packet.
 */
@inline export function lookupIn(d: Packet, table: usize, key: usize, stage: i32, port: u32, missReason: i32): Entry | null {
  const t = changetype<Table>(table);
  const row = table == 0 ? -1 : lookup(t, key);
  if (row < 0) {
    event(EV_LOOKUP, stage, 0, 0, d, -1, port, -1, table == 0 ? -1 : <u32>t.id);
    drop(d, stage, missReason);
    return null;
  }
  const e = entryAt(t, row);
  event(EV_LOOKUP, stage, <i32>e.code, 0, d, row, port, -1, t.id);
  return e;
}
