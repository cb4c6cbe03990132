// transmit: how does the packet leave on out-link `port` — onto the physical
// link, or (layering) into an underlay network's session?

import {
  ACT_PHYSICAL,
  DROP_NO_LINK,
  DROP_TRANSMIT_MISS,
  DROP_UNSUPPORTED,
  STAGE_DONE,
  STAGE_LINK,
  STAGE_TRANSMIT,
} from "../abi";
import { setU16 } from "../wire/bytes";
import { drop } from "./drop";
import { lookupIn } from "./lookup";
import { Packet } from "./packet";
import { memberAt } from "./topology";

/** The transmit key: the out-link identifier, big-endian, in one zero-padded word. */
const key = memory.data(8);

export function transmit(d: Packet): i32 {
  const m = memberAt(d.member);
  store<u64>(key, 0);
  setU16(key, d.port);
  const e = lookupIn(d, m.transmit, key, STAGE_TRANSMIT, d.port, DROP_TRANSMIT_MISS);
  if (e == null) return STAGE_DONE;
  if (e.code != ACT_PHYSICAL) return drop(d, STAGE_TRANSMIT, DROP_UNSUPPORTED); // external-session: layering
  const link = <i32>d.port < m.nPorts ? load<i32>(m.portLinks + (<usize>d.port << 2)) : -1;
  if (link < 0) return drop(d, STAGE_TRANSMIT, DROP_NO_LINK);
  d.link = link;
  return STAGE_LINK;
}
