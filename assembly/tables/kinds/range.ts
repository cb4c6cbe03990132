// Range match: range fields match lo ≤ field ≤ hi (the bounds say it, not the
// mask); exact fields are given in full, optional ones in full or not at all,
// as in a ternary table; the highest priority wins.

import { ERR_BAD_MATCH_KEY, ERR_OK, KIND_EXACT, KIND_OPTIONAL, KIND_RANGE } from "../../abi";
import { compareBytes, fieldAllOrNothing } from "../keys";
import { fieldKind, fieldLen, fieldOffset, Table } from "../storage";

export function check(t: Table, value: usize, mask: usize, lo: usize, hi: usize): i32 {
  for (let f = 0; f < t.nFields; f++) {
    const off = fieldOffset(t, f);
    const len = fieldLen(t, f);
    const kind = fieldKind(t, f);
    const given = fieldAllOrNothing(mask, off, len);
    if (kind == KIND_RANGE) {
      if (given != 0) return ERR_BAD_MATCH_KEY;
      if (compareBytes(lo + <usize>off, hi + <usize>off, len) > 0) return ERR_BAD_MATCH_KEY;
    } else if ((kind == KIND_EXACT && given != 1) || (kind == KIND_OPTIONAL && given < 0)) {
      return ERR_BAD_MATCH_KEY;
    }
  }
  return ERR_OK;
}
