// Longest-prefix match: one field (the LPM field) takes a prefix mask, every
// other declared field is exact. An entry ranks by its prefix length, so the
// longest prefix wins.

import { ERR_BAD_MATCH_KEY, ERR_OK, KIND_LPM } from "../../abi";
import { fieldAllOrNothing, prefixLen } from "../keys";
import { fieldKind, fieldLen, fieldOffset, Table } from "../storage";

export function check(t: Table, value: usize, mask: usize): i32 {
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
