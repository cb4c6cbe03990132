// A member sees a packet through its network's header design: the key vector.

import { Packet, keyOf } from "./packet";
import { Member } from "./topology";
import { parse } from "../wire/design";
import { setU16 } from "../wire/bytes";

/**
 * Makes `d.key` hold member `m`'s view of the packet, with `d.port` as the
 * in-link. Returns false if the packet carries no valid header of m's design.
 */
export function keyFor(d: Packet, mi: i32, m: Member): bool {
  const key = keyOf(d);
  if (d.keyMember != mi) {
    memory.fill(key, 0, 8); // in-link word; parse writes the rest
    const hlen = parse(m.design, d.data, <i32>d.len, key);
    if (hlen < 0) return false;
    d.keyMember = mi;
    d.hdrLen = <u32>hlen;
  }
  setU16(key, d.port);
  return true;
}
