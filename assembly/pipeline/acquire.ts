// acquire: does this member take the packet arriving on in-link `port`, and
// for what — to forward it, to receive it, or both (seed Figure 2)?

import {
  ACT_BOTH,
  ACT_FORWARD,
  ACT_RECEIVE,
  DROP_ACQUIRE_MISS,
  DROP_BAD_HEADER,
  DROP_UNSUPPORTED,
  EV_LOOKUP,
  STAGE_ACQUIRE,
  STAGE_FORWARD,
  STAGE_RECEIVE,
} from "../abi";
import { entryAt, lookup, Table } from "../tables/table";
import { drop } from "./drop";
import { event } from "./output";
import { keyOf, Packet } from "./packet";
import { keyFor } from "./parse";
import { fanBoth } from "./replicate";
import { memberAt } from "./topology";

export function acquire(d: Packet): i32 {
  const m = memberAt(d.member);
  if (!keyFor(d, d.member, m)) return drop(d, STAGE_ACQUIRE, DROP_BAD_HEADER);
  if (m.acquire == 0) return miss(d);
  const t = changetype<Table>(m.acquire);
  const row = lookup(t, keyOf(d));
  if (row < 0) return miss(d, t.id);
  const code = <i32>entryAt(t, row).code;
  event(EV_LOOKUP, STAGE_ACQUIRE, code, 0, d, row, d.port, -1, t.id);
  if (code == ACT_FORWARD) return STAGE_FORWARD;
  if (code == ACT_RECEIVE) return STAGE_RECEIVE;
  if (code == ACT_BOTH) {
    fanBoth();
    return STAGE_FORWARD;
  }
  return drop(d, STAGE_ACQUIRE, DROP_UNSUPPORTED); // shared-acquire: composition, not in this build
}

function miss(d: Packet, table: i32 = -1): i32 {
  event(EV_LOOKUP, STAGE_ACQUIRE, 0, 0, d, -1, d.port, -1, <u32>table);
  return drop(d, STAGE_ACQUIRE, DROP_ACQUIRE_MISS);
}

