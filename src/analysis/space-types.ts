// The shapes a header space (./header-space.ts) shares with what reads it:
// what cuts its classes, the rows' patterns it keeps to say what a class is,
// and what it tells the tables that index classes when they split, die or
// gain headers.

import type { Pattern } from "../description/types.js";

/** Rows' patterns, kept to say what a class is (./class-words.ts), whether or not they cut the classes. */
export interface RowPattern {
  readonly match: ReadonlyMap<string, Pattern>;
  readonly node: number;
}

/**
 * What the classes are cut by. `behaviour` (the default): per table, the headers that meet the same fate there
 * (./behaviours.ts), so that rows leading to the same action cut nothing (APKeep's merge of predicates per
 * port); `rows`: every row's patterns, the finer partition the analysis had before (kept to compare the two).
 */
export type ClassCut = "behaviour" | "rows";

/** What a split or a death tells the tables that index classes. */
export interface SpaceListener {
  /** Class `born` was cut out of class `from` (it is in every predicate `from` is in, and one more). */
  split(from: number, born: number): void;
  /** Class `atom` became empty. */
  died(atom: number): void;
  /** Headers of class `from` joined class `into` (they now meet the same fates): `into`'s fate is as it was. */
  joined?(from: number, into: number): void;
}
