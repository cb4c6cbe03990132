// Optional match (P4Runtime): each optional field is either given exactly or
// left out; exact fields are always given; the highest priority wins.

import { ERR_BAD_MATCH_KEY, ERR_OK, KIND_EXACT } from "../../abi";
import { fieldAllOrNothing } from "../keys";
import { fieldKind, fieldLen, fieldOffset, Table } from "../storage";

export function check(t: Table, value: usize, mask: usize): i32 {
  for (let f = 0; f < t.nFields; f++) {
    const given = fieldAllOrNothing(mask, fieldOffset(t, f), fieldLen(t, f));
    if (given < 0 || (given == 0 && fieldKind(t, f) == KIND_EXACT)) return ERR_BAD_MATCH_KEY;
  }
  return ERR_OK;
}
