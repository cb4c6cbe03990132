// Exact match: every declared field given in full, so at most one entry
// matches a key; entries do not rank.

import { ERR_BAD_MATCH_KEY, ERR_OK } from "../../abi";
import { isTableMask } from "../keys";
import { Table } from "../storage";

export function check(t: Table, value: usize, mask: usize): i32 {
  return isTableMask(t, mask) ? ERR_OK : ERR_BAD_MATCH_KEY;
}
