// Longest-prefix match: one field (the LPM field) takes a prefix mask, every
// other declared field is exact. An entry ranks by its prefix length, so the
// tuple-space order visits longer prefixes first and the first hit wins.
//
// The tuple-space index (tuple-space.ts) is the authority for writes. A table
// whose fields lie in the key's first two words (any IPv4 key) is also looked
// up through a keyed index, as exact tables are (exact.ts): open addressing
// keyed by (prefix group, key & group mask), each slot holding the masked
// words, the group, the entry and, when it fits, the entry's action word. A
// lookup probes it once per prefix length, longest first, and for most rows
// reads one slot and never the entry (the tuple-space probe reads a slot, then
// the entry to compare the key: two dependent misses):
//
//   ┌──────────┬──────────┬─────────────┬───────┬─────────────┬──────────────────┐
//   │ w0 u64   │ w1 u64   │ group+1 u32 │ (pad) │ entry+1 u32 │ action word u32  │   32 bytes
//   └──────────┴──────────┴─────────────┴───────┴─────────────┴──────────────────┘
//
// Whatever places, removes or changes an entry calls placed, removed or
// actionChanged (table.ts, write.ts), as for exact tables.

import { ERR_BAD_MATCH_KEY, ERR_OK, KIND_LPM } from "../abi";
import { actionWord, hit, Hit, MISS } from "./action";
import * as exact from "./exact";
import { checkCommon, entryAt, fieldAllOrNothing, fieldKind, fieldLen, fieldOffset, FREE, prefixLen, slotsFor, Table, valueOf } from "./table";
import { finish, round, seed } from "./hash";
import * as tss from "./tuple-space";

/** Keys of up to this many u64 words get the keyed index. */
const KEYED_MAX_WORDS: i32 = 2;
const SLOT_SHIFT: u32 = 5;
const SLOT_GROUP: usize = 16;
const SLOT_ENTRY: usize = 24;
const SLOT_ACTION: usize = 28;

export function check(t: Table, value: usize, mask: usize): i32 {
  const common = checkCommon(t, value, mask);
  if (common != ERR_OK) return common;
  let lpmFields = 0;
  for (let f = 0; f < t.nFields; f++) {
    const off = fieldOffset(t, f);
    const len = fieldLen(t, f);
    if (fieldKind(t, f) == KIND_LPM) {
      lpmFields++;
      if (prefixLen(mask, off, len) < 0) return ERR_BAD_MATCH_KEY;
    } else if (fieldAllOrNothing(mask, off, len) != 1) {
      return ERR_BAD_MATCH_KEY;
    }
  }
  return lpmFields == 1 ? ERR_OK : ERR_BAD_MATCH_KEY;
}

/** The prefix length of the LPM field in `mask`. */
export function rank(t: Table, mask: usize): i32 {
  for (let f = 0; f < t.nFields; f++) {
    if (fieldKind(t, f) == KIND_LPM) return prefixLen(mask, fieldOffset(t, f), fieldLen(t, f));
  }
  return 0;
}

/** Gives the table a keyed index when its key allows (at creation). */
export function prepare(t: Table): void {
  if (t.words > KEYED_MAX_WORDS) return;
  t.keyedShift = SLOT_SHIFT;
  exact.makeKeyed(t);
}

/** The table grew (table.ts grow): the keyed index is re-made for its new size, every live entry placed again. */
export function resize(t: Table): void {
  if (t.keyed == 0 || slotsFor(t.allocated) <= t.keyedMask + 1) return;
  exact.makeKeyed(t);
  for (let i = 0; i < t.allocated; i++) if (entryAt(t, i).group != FREE) placed(t, i);
}

/** The home slot of masked words (x0, x1) in group `g`. */
@inline function home(t: Table, g: i32, x0: u64, x1: u64): u32 {
  return finish(round(round(seed(g), x0), x1)) & t.keyedMask;
}

/** Slot `s` (exact.slotAt, with the shift a constant). */
@inline function slotAt(t: Table, s: u32): usize {
  return t.keyed + (<usize>s << SLOT_SHIFT);
}

/** A slot's home: from the words and group it holds. */
function slotHome(t: Table, slot: usize): u32 {
  return home(t, <i32>load<u32>(slot, SLOT_GROUP) - 1, load<u64>(slot), load<u64>(slot, 8));
}

/** Entry `i`'s home slot: its value is stored masked, the unused word is zero. */
function entryHome(t: Table, i: i32): u32 {
  const e = entryAt(t, i);
  const v = valueOf(t, e);
  return home(t, e.group, load<u64>(v), t.words > 1 ? load<u64>(v, 8) : 0);
}

/** The slot that holds entry `i`. */
function slotOf(t: Table, i: i32): u32 {
  let s = entryHome(t, i);
  while (load<u32>(slotAt(t, s), SLOT_ENTRY) != <u32>(i + 1)) s = (s + 1) & t.keyedMask;
  return s;
}

/** Entry `i` is now in the table (its group set by tuple-space link). */
export function placed(t: Table, i: i32): void {
  if (t.keyed == 0) return;
  let s = entryHome(t, i);
  while (load<u32>(slotAt(t, s), SLOT_ENTRY) != 0) s = (s + 1) & t.keyedMask;
  const slot = slotAt(t, s);
  const e = entryAt(t, i);
  const v = valueOf(t, e);
  store<u64>(slot, load<u64>(v));
  store<u64>(slot, t.words > 1 ? load<u64>(v, 8) : 0, 8);
  store<u32>(slot, <u32>e.group + 1, SLOT_GROUP);
  store<u32>(slot, <u32>(i + 1), SLOT_ENTRY);
  store<u32>(slot, actionWord(e), SLOT_ACTION);
}

/** Entry `i`'s action was set or restored: its slot's action word follows. */
export function actionChanged(t: Table, i: i32): void {
  if (t.keyed == 0) return;
  store<u32>(slotAt(t, slotOf(t, i)), actionWord(entryAt(t, i)), SLOT_ACTION);
}

/** Entry `i` is leaving the table (its group still set). */
export function removed(t: Table, i: i32): void {
  if (t.keyed == 0) return;
  exact.shiftBack(t, slotOf(t, i), SLOT_ENTRY, slotHome);
}

/** Mean distance of the keyed index's entries from their home slots. */
export function keyedProbeDistance(t: Table): f64 {
  return exact.probeDistance(t, SLOT_ENTRY, slotHome);
}

/**
 * The longest prefix matching `key` (with its action word when the keyed
 * index holds it), or a miss: through the keyed index, else the tuple-space
 * groups, longest first.
 */
export function lookup(t: Table, key: usize): Hit {
  if (t.keyed == 0) return hit(tss.lookupFirst(t, key), 0);
  const k0 = load<u64>(key);
  const k1 = load<u64>(key, 8);
  for (let k = 0; k < t.nOrder; k++) {
    const g = tss.orderAt(t, k);
    const mask = tss.groupMask(t, g);
    const x0 = k0 & load<u64>(mask);
    const x1 = t.words > 1 ? k1 & load<u64>(mask, 8) : 0;
    const tag = <u32>g + 1;
    let s = home(t, g, x0, x1);
    while (true) {
      const slot = slotAt(t, s);
      const e = load<u32>(slot, SLOT_ENTRY);
      if (e == 0) break;
      if (load<u64>(slot) == x0 && load<u64>(slot, 8) == x1 && load<u32>(slot, SLOT_GROUP) == tag) {
        return hit(<i32>e - 1, load<u32>(slot, SLOT_ACTION));
      }
      s = (s + 1) & t.keyedMask;
    }
  }
  return MISS;
}
