// A member sees a packet through its network's header design: the key vector.

import { Packet, keyOf } from "./packet";
import { Member } from "./topology";
import { DESIGN_ETHERNET } from "../abi";
import { parse } from "../wire/design";
import * as ethernet from "../wire/ethernet";
import { setU16 } from "../wire/bytes";
import { Table } from "../tables/table";

/**
 * keyMember after send pushed the member's header: not parsed, but a valid
 * header of the design by construction, so a table that looks at the in-link
 * only needs no parse (forward from `self` after a push).
 */
export const KEY_PUSHED: i32 = -2;

/** keyFor for a lookup in `table`: without a parse when the header was just pushed and the table looks at the in-link only. */
@inline export function keyForTable(d: Packet, mi: i32, m: Member, table: usize): bool {
  if (d.keyMember == KEY_PUSHED && table != 0 && changetype<Table>(table).inLinkOnly) {
    setU16(keyOf(d), d.port);
    return true;
  }
  return keyFor(d, mi, m);
}

/**
 * Makes `d.key` hold member `m`'s view of the packet, with `d.port` as the
 * in-link. Returns false if the packet carries no valid header of m's design.
 */
@inline export function keyFor(d: Packet, mi: i32, m: Member): bool {
  if (d.keyMember != mi && !parseFor(d, mi, m)) return false;
  setU16(keyOf(d), d.port);
  return true;
}

/** Parses the packet into the key vector as member `mi` (of design m.design) sees it. */
function parseFor(d: Packet, mi: i32, m: Member): bool {
  const key = keyOf(d);
  store<u64>(key, 0); // in-link word; parse writes the rest
  // Ethernet, the most common design, without a call.
  const hlen = m.design == DESIGN_ETHERNET ? ethernet.parse(d.data, <i32>d.len, key) : parse(m.design, d.data, <i32>d.len, key);
  if (hlen < 0) return false;
  d.keyMember = mi;
  d.hdrLen = <u32>hlen;
  return true;
}
