// receive: what does the member's machine do with a packet it acquired to
// receive — take it (primitive: delivered), or (layering) strip this network's
// header and hand the rest to an overlay's acquire table?

import {
  ACT_DELIVER,
  DROP_RECEIVE_MISS,
  DROP_UNSUPPORTED,
  EV_DELIVER,
  EV_LOOKUP,
  OUTPUT_DELIVER,
  STAGE_DELIVER,
  STAGE_DONE,
  STAGE_RECEIVE,
} from "../abi";
import { entryAt, lookup, Table } from "../tables/table";
import { captureAppend, capturing } from "./capture";
import { drop } from "./drop";
import { emitPacket, event } from "./output";
import { keyOf, Packet, release } from "./packet";
import { memberAt } from "./topology";

export function receive(d: Packet): i32 {
  const m = memberAt(d.member);
  // acquire parsed the packet for this member: the key is current.
  if (m.receive == 0) return miss(d, -1);
  const t = changetype<Table>(m.receive);
  const row = lookup(t, keyOf(d));
  if (row < 0) return miss(d, t.id);
  const code = <i32>entryAt(t, row).code;
  event(EV_LOOKUP, STAGE_RECEIVE, code, 0, d, row, d.port, -1, t.id);
  if (code == ACT_DELIVER) return STAGE_DELIVER;
  return drop(d, STAGE_RECEIVE, DROP_UNSUPPORTED); // external-link: layering
}

function miss(d: Packet, table: i32): i32 {
  event(EV_LOOKUP, STAGE_RECEIVE, 0, 0, d, -1, d.port, -1, <u32>table);
  return drop(d, STAGE_RECEIVE, DROP_RECEIVE_MISS);
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
