// Longest-prefix match: one field (the LPM field) takes a prefix mask, every
// other declared field is exact. An entry ranks by its prefix length, so the
// tuple-space order visits longer prefixes first and the first hit wins.

import { ERR_BAD_MATCH_KEY, ERR_OK, KIND_LPM } from "../abi";
import { checkCommon, fieldAllOrNothing, fieldKind, fieldLen, fieldOffset, prefixLen, Table } from "./table";
import * as tss from "./tuple-space";

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

/** Groups go longest prefix first: the first hit is the answer (tuple-space.ts lookupFirst). */
export function lookup(t: Table, key: usize): i32 {
  return tss.lookupFirst(t, key);
}
