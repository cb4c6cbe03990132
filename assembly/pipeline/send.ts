// send: a packet the member's machine originates in session `session` gets
// the session's header attached (pushed in front), then is forwarded from
// `self` (seed Figure 4).

import {
  DROP_MEMBER_DOWN,
  ACT_PUSH,
  DROP_NO_BUFFER,
  DROP_SEND_MISS,
  DROP_TOO_LONG,
  DROP_UNSUPPORTED,
  EV_PUSH,
  PORT_SELF,
  STAGE_DONE,
  STAGE_FORWARD,
  STAGE_SEND,
} from "../abi";
import { setU32 } from "../wire/bytes";
import { emit, emitLen, maxPayload } from "../wire/design";
import { drop } from "./drop";
import { lookupIn } from "./lookup";
import { event } from "./output";
import { own, OWN_OK, OWN_TOO_LONG, Packet } from "./packet";
import { memberAt, memberDown } from "./topology";

/** The send key: the session identifier, big-endian, in one zero-padded word. */
const key = memory.data(8);

export function send(d: Packet): i32 {
  const m = memberAt(d.member);
  if (memberDown(m)) return drop(d, STAGE_SEND, DROP_MEMBER_DOWN);
  store<u64>(key, 0);
  setU32(key, d.session);
  const e = lookupIn(d, m.send, key, STAGE_SEND, d.session, DROP_SEND_MISS);
  if (e == null) return STAGE_DONE;
  if (e.code != ACT_PUSH) return drop(d, STAGE_SEND, DROP_UNSUPPORTED);
  // The row's data is the header's fields as a key vector of the member's design.
  const fields = <usize>e.data;
  // A header whose length field cannot hold the payload would describe another packet.
  if (<i32>d.origLen > maxPayload(m.design, fields)) return drop(d, STAGE_SEND, DROP_TOO_LONG);
  const hlen = emitLen(m.design, fields);
  const owned = own(d, hlen);
  if (owned != OWN_OK) return drop(d, STAGE_SEND, owned == OWN_TOO_LONG ? DROP_TOO_LONG : DROP_NO_BUFFER);
  d.data -= <usize>hlen;
  emit(m.design, d.data, fields, <i32>d.origLen);
  d.len += <u32>hlen;
  d.origLen += <u32>hlen;
  event(EV_PUSH, STAGE_SEND, 0, 0, d, -1, d.session, -1, <u32>hlen);
  d.port = PORT_SELF;
  d.keyMember = -1;
  return STAGE_FORWARD;
}
