// transmit: how does the packet leave on out-link `port` — onto the physical
// link, or (layering) into an underlay network's session?

import {
  ACT_PHYSICAL,
  DROP_NO_LINK,
  DROP_TRANSMIT_MISS,
  DROP_UNSUPPORTED,
  EV_LOOKUP,
  STAGE_LINK,
  STAGE_TRANSMIT,
} from "../abi";
import { entryAt, lookup, Table } from "../tables/table";
import { setU16 } from "../wire/bytes";
import { drop } from "./drop";
import { event } from "./output";
import { Packet } from "./packet";
import { memberAt } from "./topology";

/** The transmit key: the out-link identifier, big-endian, in one zero-padded word. */
const key = memory.data(8);

export function transmit(d: Packet): i32 {
  const m = memberAt(d.member);
  if (m.transmit == 0) return miss(d, -1);
  const t = changetype<Table>(m.transmit);
  store<u64>(key, 0);
  setU16(key, d.port);
  const row = lookup(t, key);
  if (row < 0) return miss(d, t.id);
  const code = <i32>entryAt(t, row).code;
  event(EV_LOOKUP, STAGE_TRANSMIT, code, 0, d, row, d.port, -1, t.id);
  if (code != ACT_PHYSICAL) return drop(d, STAGE_TRANSMIT, DROP_UNSUPPORTED); // external-session: layering
  const link = <i32>d.port < m.nPorts ? load<i32>(m.portLinks + (<usize>d.port << 2)) : -1;
  if (link < 0) return drop(d, STAGE_TRANSMIT, DROP_NO_LINK);
  d.link = link;
  return STAGE_LINK;
}

function miss(d: Packet, table: i32): i32 {
  event(EV_LOOKUP, STAGE_TRANSMIT, 0, 0, d, -1, d.port, -1, <u32>table);
  return drop(d, STAGE_TRANSMIT, DROP_TRANSMIT_MISS);
}
