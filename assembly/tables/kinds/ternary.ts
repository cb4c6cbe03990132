// Ternary match: any mask within the declared fields, bar the exact fields,
// which are given in full; the highest priority wins.

import { ERR_BAD_MATCH_KEY, ERR_OK, KIND_EXACT } from "../../abi";
import { fieldAllOrNothing } from "../keys";
import { fieldKind, fieldLen, fieldOffset, Table } from "../storage";

export function check(t: Table, value: usize, mask: usize): i32 {
  for (let f = 0; f < t.nFields; f++) {
    if (fieldKind(t, f) == KIND_EXACT && fieldAllOrNothing(mask, fieldOffset(t, f), fieldLen(t, f)) != 1) {
      return ERR_BAD_MATCH_KEY;
    }
  }
  return ERR_OK;
}
