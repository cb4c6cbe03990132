// Ternary match: any mask within the declared fields; the highest priority
// wins (tuple-space search over the distinct masks).

import { ERR_BAD_MATCH_KEY, ERR_OK, KIND_EXACT } from "../abi";
import { checkCommon, fieldAllOrNothing, fieldKind, fieldLen, fieldOffset, Table } from "./table";

export function check(t: Table, value: usize, mask: usize): i32 {
  const common = checkCommon(t, value, mask);
  if (common != ERR_OK) return common;
  // Exact fields of a ternary table must still be given in full.
  for (let f = 0; f < t.nFields; f++) {
    if (fieldKind(t, f) == KIND_EXACT && fieldAllOrNothing(mask, fieldOffset(t, f), fieldLen(t, f)) != 1) {
      return ERR_BAD_MATCH_KEY;
    }
  }
  return ERR_OK;
}
