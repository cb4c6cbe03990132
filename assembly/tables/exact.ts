// Exact match: every declared field must be given in full. One tuple-space
// group, so a lookup is one hash probe.

import { ERR_BAD_MATCH_KEY, ERR_OK } from "../abi";
import { checkCommon, Table } from "./table";
import * as tss from "./tuple-space";

export function check(t: Table, value: usize, mask: usize): i32 {
  const common = checkCommon(t, value, mask);
  if (common != ERR_OK) return common;
  return memory.compare(mask, t.mask, <usize>t.keyLen) == 0 ? ERR_OK : ERR_BAD_MATCH_KEY;
}

export function lookup(t: Table, key: usize): i32 {
  return tss.lookupFirst(t, key);
}
