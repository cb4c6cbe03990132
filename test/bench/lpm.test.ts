// bench:lpm measures the LPM lookup packets make; here that lookup is held to a
// naive reference written in this file (every prefix tried, the longest that
// holds wins) over the bench's own seeded prefixes (every length /8–/32) and
// addresses, row by row and in the count the bench's one wasm call reports.

import { describe, expect, it } from "vitest";
import { bytesOf, lookUpAll, setUpLpm } from "../../bench/lpm.js";
import { Tables } from "../../src/wasm/tables.js";

/** The index in `list` of the longest prefix holding `addr`, or −1. */
function naive(list: readonly [number, number][], addr: number): number {
  let best = -1;
  let bestLen = -1;
  list.forEach(([p, len], i) => {
    const mask = len === 0 ? 0 : (~0 << (32 - len)) >>> 0;
    if ((addr & mask) >>> 0 === p && len > bestLen) {
      best = i;
      bestLen = len;
    }
  });
  return best;
}

describe("bench:lpm's table", () => {
  it.each([{ prefixes: 64 }, { prefixes: 1024 }])(
    "$prefixes prefixes: the longest prefix, as a naive scan finds it",
    ({ prefixes }) => {
      const s = setUpLpm(prefixes, 512);
      const tables = new Tables(s.dp);
      const want = Array.from(s.addresses, (a) => naive(s.list, a));
      // Rows are the prefixes' places in the list: they were inserted in its order, into an empty table.
      expect(Array.from(s.addresses, (a) => tables.lookup(s.table, bytesOf(a)))).toEqual(want);
      expect(lookUpAll(s)).toBe(want.filter((r) => r >= 0).length);
      // Both kinds of address: some found, some not.
      expect(want.some((r) => r < 0) && want.some((r) => r >= 0)).toBe(true);
    },
  );
});
