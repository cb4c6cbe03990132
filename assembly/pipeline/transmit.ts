// transmit: how does the packet leave on out-link `port` — onto the physical
// link, or (layering, seed §5.2) into an underlay network's session? Either
// way it crosses the link (counted, recorded: a virtual link's recording holds
// the overlay packet as it crossed); a virtual link then hands the packet,
// unchanged, to the send table of the underlay member on the same machine.

import {
  ACT_EXTERNAL_SESSION,
  ACT_PHYSICAL,
  DROP_NO_LINK,
  DROP_TRANSMIT_MISS,
  DROP_UNSUPPORTED,
  EV_HANDOFF,
  STAGE_DONE,
  STAGE_LINK,
  STAGE_SEND,
  STAGE_TRANSMIT,
} from "../abi";
import { drop } from "./drop";
import { lookupIdIn } from "./lookup";
import { event, tracing } from "./output";
import { Packet } from "./packet";
import { memberAt, outLink } from "./topology";

@inline export function transmit(d: Packet): i32 {
  const m = memberAt(d.member);
  // The key: the out-link identifier, big-endian, in one zero-padded word.
  const e = lookupIdIn(d, m.transmit, d.port, 2, STAGE_TRANSMIT, DROP_TRANSMIT_MISS);
  if (e == null) return STAGE_DONE;
  const code = <i32>e.code;
  const link = outLink(m, d.port);
  if (code == ACT_EXTERNAL_SESSION) {
    // arg: the underlay member on this machine; arg2: the session that implements the link.
    d.via = <i32>e.arg;
    d.session = e.arg2;
    if (link >= 0) {
      d.link = link;
      return STAGE_LINK;
    }
    return handToSession(d);
  }
  if (code != ACT_PHYSICAL) return drop(d, STAGE_TRANSMIT, DROP_UNSUPPORTED);
  if (link < 0) return drop(d, STAGE_TRANSMIT, DROP_NO_LINK);
  d.link = link;
  return STAGE_LINK;
}

/** After its virtual link: the packet, whole, goes to the underlay member's send table (ExternalSession). */
@inline export function handToSession(d: Packet): i32 {
  if (tracing) event(EV_HANDOFF, STAGE_SEND, 0, 0, d, -1, d.session, d.link, <u32>d.via);
  d.member = d.via;
  d.via = -1;
  d.keyMember = -1;
  return STAGE_SEND;
}
