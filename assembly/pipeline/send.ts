// send: a packet the member's machine originates in session `session` gets
// the session's header attached (pushed in front), then is forwarded from
// `self` (seed Figure 4).

import {
  DROP_MEMBER_DOWN,
  ACT_PUSH,
  DROP_NO_BUFFER,
  DROP_NONE,
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
  const before = d.len;
  const refused = push(d, m.design, <usize>e.data);
  if (refused != DROP_NONE) return drop(d, STAGE_SEND, refused);
  if (tracing) event(EV_PUSH, STAGE_SEND, 0, 0, d, -1, d.session, -1, d.len - before);
  d.port = PORT_SELF;
  d.keyMember = KEY_PUSHED;
  return STAGE_FORWARD;
}

/**
 * Puts a header of `design` on the packet, its fields the key vector `fields`
 * (a send row's data). Returns DROP_NONE, or why it cannot: the payload is
 * longer than the header's length field can state, or there is no buffer.
 */
@inline export function push(d: Packet, design: i32, fields: usize): i32 {
  const hlen = emitLen(design, fields);
  // A header whose length field cannot hold the payload would describe another packet.
  if (<i32>d.origLen > maxPayload(design, hlen)) return DROP_TOO_LONG;
  const owned = own(d, hlen);
  if (owned != OWN_OK) return owned == OWN_TOO_LONG ? DROP_TOO_LONG : DROP_NO_BUFFER;
  d.data -= <usize>hlen;
  emit(design, d.data, fields, <i32>d.origLen);
  d.len += <u32>hlen;
  d.origLen += <u32>hlen;
  return DROP_NONE;
}
