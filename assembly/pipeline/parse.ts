// A member sees a packet through its network's header design: the key vector.

import { Packet, keyOf } from "./packet";
import { Member } from "./topology";
import { DESIGN_ETHERNET } from "../abi";
import { parse } from "../wire/design";
import * as ethernet from "../wire/ethernet";
import { Table } from "../tables/table";

/**
 * keyMember after send pushed the member's header: not parsed, but a valid
 * header of the design by construction, so a table that looks at the in-link
 * only needs no parse (forward from `self` after a push).
 */
export const KEY_PUSHED: i32 = -2;

/** keyFor for a lookup in `table`: without a parse when the header was just pushed and the table looks at the in-link
 * only. */
@inline export function keyForTable(d: Packet, mi: i32, m: Member, table: usize): bool {
  if (d.keyMember == KEY_PUSHED && table != 0 && changetype<Table>(table).inLinkOnly) {
    setInLink(keyOf(d), d.inLink);
    return true;
  }
  return keyFor(d, mi, m);
}

/**
 * Makes `d.key` hold member `m`'s view of the packet, with `d.inLink` as the
 * in-link. Returns false if the packet carries no valid header of m's design.
 */
@inline export function keyFor(d: Packet, mi: i32, m: Member): bool {
  if (d.keyMember != mi && !parseFor(d, mi, m)) return false;
  setInLink(keyOf(d), d.inLink);
  return true;
}

/**
 * Writes the in-link into the key's first word, as a whole word: the lookup
 * that follows loads that word, and takes it from this one store (a two-byte
 * store there would make it wait until both stores reached the cache).
 */
@inline export function setInLink(key: usize, inLink: u32): void {
  store<u64>(key, (load<u64>(key) & ~(<u64>0xffff)) | (<u64>bswap<u16>(<u16>inLink)));
}

/** Parses the packet into the key vector as member `mi` (of design m.design) sees it. */
function parseFor(d: Packet, mi: i32, m: Member): bool {
  if (!parseHeader(d, m.design)) return false;
  d.keyMember = mi;
  return true;
}

/** Parses the packet into its key vector as design `design` sees it, the in-link d.inLink, and keeps the header's
 * length (hdrLen); false if it has no valid header. */
@inline export function parseHeader(d: Packet, design: i32): bool {
  const hlen = parseKey(d, design);
  if (hlen < 0) return false;
  d.hdrLen = <u32>hlen;
  return true;
}

/** Parses the packet into its key vector as design `design` sees it, the in-link d.inLink: the header's length, or
 * −1. */
@inline function parseKey(d: Packet, design: i32): i32 {
  const key = keyOf(d);
  // Ethernet, the most common design, without a call; it writes the in-link with dst, in one store.
  if (design == DESIGN_ETHERNET) return ethernet.parse(d.data, <i32>d.len, key, d.inLink);
  return parseOther(design, d.data, <i32>d.len, key, d.inLink);
}

/** parseKey for the designs other than Ethernet: a call, so that the steps that parse stay small. */
function parseOther(design: i32, p: usize, len: i32, key: usize, inLink: u32): i32 {
  store<u64>(key, 0); // in-link word; parse writes the rest
  const hlen = parse(design, p, len, key);
  setInLink(key, inLink);
  return hlen;
}
