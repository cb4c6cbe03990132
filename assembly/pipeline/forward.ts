// forward: onto which out-links does this member send the packet? Several
// out-links replicate it; a drop row or no row drops it; a shared member may
// hand it to its partner's forward table instead (SharedForward, seed §5.3). Forwarding leaves the
// header as it is, except a design's declared side effect (TTL − 1).

import {
  DROP_MEMBER_DOWN,
  ACT_DROP,
  ACT_OUT,
  ACT_SHARED_FORWARD,
  DROP_BAD_HEADER,
  DROP_FORWARD_DROP,
  DROP_FORWARD_MISS,
  DROP_NO_BUFFER,
  DROP_NONE,
  DROP_TOO_LONG,
  DROP_TTL_EXPIRED,
  DROP_UNSUPPORTED,
  PORT_SELF,
  PORT_SHARED,
  STAGE_DONE,
  STAGE_FORWARD,
  STAGE_TRANSMIT,
} from "../abi";
import { decrementTtl } from "../wire/design";
import { handOver } from "./acquire";
import { drop } from "./drop";
import { lookupIn } from "./lookup";
import { keyOf, own, OWN_OK, OWN_TOO_LONG, Packet } from "./packet";
import { keyForTable } from "./parse";
import { fanPorts, replicate } from "./replicate";
import { Member, MEMBER_TTL, memberAt, memberDown } from "./topology";

@inline export function forward(d: Packet): i32 {
  const m = memberAt(d.member);
  if (memberDown(m)) return drop(d, STAGE_FORWARD, DROP_MEMBER_DOWN);
  if (!keyForTable(d, d.member, m, m.forward)) return drop(d, STAGE_FORWARD, DROP_BAD_HEADER);
  const e = lookupIn(d, m.forward, keyOf(d), STAGE_FORWARD, d.port, DROP_FORWARD_MISS);
  if (e == null) return STAGE_DONE;
  const code = <i32>e.code;
  if (code == ACT_DROP || (code == ACT_OUT && e.count == 0)) return drop(d, STAGE_FORWARD, DROP_FORWARD_DROP);
  if (code == ACT_SHARED_FORWARD) {
    // Subduction: the shared member in the underlay forwards it, marked as handed over (in-link `shared`).
    d.port = PORT_SHARED;
    return handOver(d, <i32>e.arg, STAGE_FORWARD);
  }
  if (code != ACT_OUT) return drop(d, STAGE_FORWARD, DROP_UNSUPPORTED);
  const refused = ttlEffect(d, m, d.port);
  if (refused != DROP_NONE) return drop(d, STAGE_FORWARD, refused);
  if (e.count == 1) {
    d.port = e.arg; // the one out-link, kept in the entry by the control plane
    return STAGE_TRANSMIT;
  }
  fanPorts(<usize>e.data, <i32>e.count);
  return replicate(d);
}

/**
 * The design's side effect of forwarding a packet that came in on `port`
 * (TTL − 1, in a buffer of the packet's own). Returns DROP_NONE, or why the
 * packet cannot go on (the TTL would reach zero: the packet is unchanged).
 */
@inline export function ttlEffect(d: Packet, m: Member, port: u32): i32 {
  // A packet the member sent itself has not been forwarded by it: no TTL side effect.
  if (!(m.flags & MEMBER_TTL) || port == PORT_SELF) return DROP_NONE;
  const owned = own(d, 0);
  if (owned != OWN_OK) return owned == OWN_TOO_LONG ? DROP_TOO_LONG : DROP_NO_BUFFER;
  return decrementTtl(m.design, d.data) ? DROP_NONE : DROP_TTL_EXPIRED;
}
