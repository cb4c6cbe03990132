// receive: what does the member's machine do with a packet it acquired to
// receive — take it (primitive: delivered), or (layering) strip this network's
// header and hand the rest to an overlay's acquire table?

import {
  ACT_DELIVER,
  DROP_RECEIVE_MISS,
  DROP_UNSUPPORTED,
  EV_DELIVER,
  OUTPUT_DELIVER,
  STAGE_DELIVER,
  STAGE_DONE,
  STAGE_RECEIVE,
} from "../abi";
import { captureAppend, capturing } from "./capture";
import { drop } from "./drop";
import { lookupIn } from "./lookup";
import { emitPacket, event } from "./output";
import { keyOf, Packet, release } from "./packet";
import { memberAt } from "./topology";

export function receive(d: Packet): i32 {
  const m = memberAt(d.member);
  // acquire parsed the packet for this member: the key is current.
  const e = lookupIn(d, m.receive, keyOf(d), STAGE_RECEIVE, d.port, DROP_RECEIVE_MISS);
  if (e == null) return STAGE_DONE;
  if (e.code == ACT_DELIVER) return STAGE_DELIVER;
  return drop(d, STAGE_RECEIVE, DROP_UNSUPPORTED); // external-link: layering
}

/** The packet reaches the member's machine. */
export function deliver(d: Packet): i32 {
  const m = memberAt(d.member);
  if (capturing) captureAppend(m.captureId, d);
  else emitPacket(OUTPUT_DELIVER, d.member, d);
  m.delivered++;
  event(EV_DELIVER, STAGE_DELIVER, 0, 0, d, -1, d.port, -1, 0);
  release(d);
  return STAGE_DONE;
}
