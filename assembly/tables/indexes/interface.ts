// The one interface every index implements: how a table finds its entries.
// table.ts keeps each road's Index and calls through it for every change to
// the entries, so an index stays in step with them without its callers having
// to remember it; lookups on the packet path call the common roads' functions
// directly (table.ts lookupUncounted).
//
// An index keeps a record of its own right after the table's (storage.ts
// indexAt), zeroed at creation; `recordLen` is its size.

import { Hit } from "../action";
import { Table } from "../storage";

export class Index {
  constructor(
    readonly recordLen: usize,
    /** Makes the index, empty, for a new table (its storage made). */
    readonly make: (t: Table) => void,
    /** Frees what make and grown allocated. */
    readonly free: (t: Table) => void,
    /** The table's entries grew (storage.ts grow): what is sized by them is re-made, every live entry placed again. */
    readonly grown: (t: Table) => void,
    /** Live entry `i` (its match and rank written) joins the index. */
    readonly place: (t: Table, i: i32) => void,
    /** Live entry `i` leaves the index (its bytes still there). */
    readonly unplace: (t: Table, i: i32) => void,
    /** Entry `i`'s action changed: an index that holds actions follows. */
    readonly actionSet: (t: Table, i: i32) => void,
    /** The entry with exactly this match (value, mask, lo, hi) and rank, or −1. */
    readonly find: (t: Table, value: usize, mask: usize, lo: usize, hi: usize, rank: i32) => i32,
    /** The entry that matches `key` best, with its action word if the index holds it; counts nothing. */
    readonly lookup: (t: Table, key: usize) => Hit,
    /** Mean distance of the entries from their home slots (−1: not hashed): tests hold the hash to it. */
    readonly probeDistance: (t: Table) => f64,
  ) {}
}
