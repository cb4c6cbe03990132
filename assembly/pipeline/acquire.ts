// acquire: does this member take the packet arriving on in-link `port`, and
// for what — to forward it, to receive it, or both (seed Figure 2)? On a
// shared link (subduction, seed §5.3) it may instead hand the packet,
// unchanged, to the acquire table of the shared member of the same name in
// the overlay network on this machine (SharedAcquire).

import {
  DROP_MEMBER_DOWN,
  ACT_BOTH,
  ACT_FORWARD,
  ACT_RECEIVE,
  ACT_SHARED_ACQUIRE,
  DROP_ACQUIRE_MISS,
  DROP_BAD_HEADER,
  DROP_UNSUPPORTED,
  EV_HANDOFF,
  STAGE_ACQUIRE,
  STAGE_DONE,
  STAGE_FORWARD,
  STAGE_RECEIVE,
} from "../abi";
import { drop } from "./drop";
import { lookupIn } from "./lookup";
import { event, tracing } from "./output";
import { keyOf, Packet } from "./packet";
import { keyFor } from "./parse";
import { fanBoth, replicate } from "./replicate";
import { memberAt, memberDown } from "./topology";

@inline export function acquire(d: Packet): i32 {
  const m = memberAt(d.member);
  if (memberDown(m)) return drop(d, STAGE_ACQUIRE, DROP_MEMBER_DOWN);
  if (!keyFor(d, d.member, m)) return drop(d, STAGE_ACQUIRE, DROP_BAD_HEADER);
  const e = lookupIn(d, m.acquire, keyOf(d), STAGE_ACQUIRE, d.port, DROP_ACQUIRE_MISS);
  if (e == null) return STAGE_DONE;
  const code = <i32>e.code;
  if (code == ACT_FORWARD) return STAGE_FORWARD;
  if (code == ACT_RECEIVE) return STAGE_RECEIVE;
  if (code == ACT_BOTH) {
    fanBoth();
    return replicate(d);
  }
  if (code == ACT_SHARED_ACQUIRE) return handOver(d, <i32>e.arg, STAGE_ACQUIRE);
  return drop(d, STAGE_ACQUIRE, DROP_UNSUPPORTED);
}

/** Subduction: the shared member `to` in the other network takes the packet at `stage`, on the same in-link. */
export function handOver(d: Packet, to: i32, stage: i32): i32 {
  if (tracing) event(EV_HANDOFF, stage, 0, 0, d, -1, d.port, -1, <u32>to);
  d.member = to;
  d.keyMember = -1;
  return stage;
}
