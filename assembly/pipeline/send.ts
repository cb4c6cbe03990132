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
import { emit, emitLen, maxPayload } from "../wire/design";
import { drop } from "./drop";
import { lookupIdIn } from "./lookup";
import { event, tracing } from "./output";
import { own, OWN_OK, OWN_TOO_LONG, Packet } from "./packet";
import { KEY_PUSHED } from "./parse";
import { memberAt, memberDown } from "./topology";

@inline export function send(d: Packet): i32 {
  const m = memberAt(d.member);
  if (memberDown(m)) return drop(d, STAGE_SEND, DROP_MEMBER_DOWN);
  // The key: the session identifier, big-endian, in one zero-padded word.
  const e = lookupIdIn(d, m.send, d.session, 4, STAGE_SEND, DROP_SEND_MISS);
  if (e == null) return STAGE_DONE;
  if (e.code != ACT_PUSH) return drop(d, STAGE_SEND, DROP_UNSUPPORTED);
  // The row's data is the header's fields as a key vector of the member's design.
  const fields = <usize>e.data;
  // A header whose length field cannot hold the payload would describe another packet.
  const hlen = emitLen(m.design, fields);
  if (<i32>d.origLen > maxPayload(m.design, hlen)) return drop(d, STAGE_SEND, DROP_TOO_LONG);
  const owned = own(d, hlen);
  if (owned != OWN_OK) return drop(d, STAGE_SEND, owned == OWN_TOO_LONG ? DROP_TOO_LONG : DROP_NO_BUFFER);
  d.data -= <usize>hlen;
  emit(m.design, d.data, fields, <i32>d.origLen);
  d.len += <u32>hlen;
  d.origLen += <u32>hlen;
  if (tracing) event(EV_PUSH, STAGE_SEND, 0, 0, d, -1, d.session, -1, <u32>hlen);
  d.port = PORT_SELF;
  d.keyMember = KEY_PUSHED;
  return STAGE_FORWARD;
}
