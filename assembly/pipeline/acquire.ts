// acquire: does this member take the packet arriving on in-link `port`, and
// for what — to forward it, to receive it, or both (seed Figure 2)?

import {
  ACT_BOTH,
  ACT_FORWARD,
  ACT_RECEIVE,
  DROP_ACQUIRE_MISS,
  DROP_BAD_HEADER,
  DROP_UNSUPPORTED,
  STAGE_ACQUIRE,
  STAGE_DONE,
  STAGE_FORWARD,
  STAGE_RECEIVE,
} from "../abi";
import { drop } from "./drop";
import { lookupIn } from "./lookup";
import { keyOf, Packet } from "./packet";
import { keyFor } from "./parse";
import { fanBoth } from "./replicate";
import { memberAt } from "./topology";

export function acquire(d: Packet): i32 {
  const m = memberAt(d.member);
  if (!keyFor(d, d.member, m)) return drop(d, STAGE_ACQUIRE, DROP_BAD_HEADER);
  const e = lookupIn(d, m.acquire, keyOf(d), STAGE_ACQUIRE, d.port, DROP_ACQUIRE_MISS);
  if (e == null) return STAGE_DONE;
  const code = <i32>e.code;
  if (code == ACT_FORWARD) return STAGE_FORWARD;
  if (code == ACT_RECEIVE) return STAGE_RECEIVE;
  if (code == ACT_BOTH) {
    fanBoth();
    return STAGE_FORWARD;
  }
  return drop(d, STAGE_ACQUIRE, DROP_UNSUPPORTED); // shared-acquire: composition, not in this build
}
