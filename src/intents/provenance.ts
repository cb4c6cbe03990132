// Where a compiled row came from: the intent that made it (and the destination
// it leads to), the place a hand row is written, or the compiler (a default
// transmit row). `strata check --rows`, the trace and `strata trace` say it.

import type { CompiledTable } from "../control/compiled.js";

export type RowOrigin =
  | { readonly intent: "routes" | "l2" | "overlays"; readonly destination: string }
  | { readonly hand: { readonly line: number; readonly column: number; readonly path: string } }
  | { readonly compiler: true };

/** Where row `row` (its index in the description's rows; −1: added by the compiler) of table `t` came from. */
export function rowOrigin(t: CompiledTable, row: number): RowOrigin {
  const spec = row < 0 ? undefined : t.spec?.rows[row];
  if (spec === undefined) return { compiler: true };
  if (spec.intent !== undefined) return { intent: spec.intent.intent, destination: spec.intent.destination };
  return { hand: { line: spec.at.line, column: spec.at.column, path: spec.at.path } };
}

/** The intent that made a row, in a few words ("routes: h1..h4 (4)"); undefined for a hand or default row. */
export function intentText(t: CompiledTable, row: number): string | undefined {
  const o = rowOrigin(t, row);
  return "intent" in o ? originText(o) : undefined;
}

/** An origin in a few words: "routes: h1..h4 (4)", "hand: 12:9 networks.ip.tables.r.forward[0]", "compiler". */
export function originText(o: RowOrigin): string {
  if ("intent" in o) return `${o.intent}: ${o.destination}`;
  if ("hand" in o) return `hand: ${o.hand.line}:${o.hand.column} ${o.hand.path}`;
  return "compiler (default row)";
}
