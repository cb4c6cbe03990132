// What a description's rows mean, read from their patterns as written
// (src/description/types.ts), never from the bytes the compiler made of them: a row
// matches a header when its in-link and every pattern hold. Which matching
// row wins is the description's rule (docs/spec.md, "Order and meaning"):
// the row written first — or, in a table written `kind: lpm`, the longest
// prefix (ties: the one written first). The compiler's choice of table kind
// must not matter.

import type { InLink, Pattern, RowSpec, TableSpec } from "../description/types.js";
import type { Fields, HeaderDesign } from "./headers.js";

/** The in-link a packet arrives on: an identifier, `self` (sent by the member), `shared` (handed over); undefined at
 * receive. */
export type Arrival = InLink | undefined;

function holds(p: Pattern, v: bigint, bits: number): boolean {
  switch (p.kind) {
    case "exact":
      return v === p.value;
    case "prefix":
      return v >> BigInt(bits - p.len) === p.value >> BigInt(bits - p.len);
    case "ternary":
      return (v & p.mask) === p.value;
    case "range":
      return p.lo <= v && v <= p.hi;
  }
}

function width(design: HeaderDesign, field: string): number {
  const bits = design.bits[field];
  if (bits === undefined)
    throw new Error(`the reference's ${design.name} has no field '${field}' (src/model/headers.ts)`);
  return bits;
}

function fieldValue(design: HeaderDesign, f: Fields, field: string): bigint {
  const v = f.get(field);
  if (v === undefined)
    throw new Error(`the reference's ${design.name} parser gives no field '${field}' (src/model/headers.ts)`);
  return v;
}

/** Whether `row` matches a packet with header fields `f` arriving on `inLink` (receive rows have no `in`). */
export function rowMatches(design: HeaderDesign, row: RowSpec, inLink: Arrival, f: Fields): boolean {
  if (row.in !== undefined && row.in !== inLink) return false;
  for (const [name, p] of row.match) if (!holds(p, fieldValue(design, f, name), width(design, name))) return false;
  return true;
}

/** The length of the prefix a row gives `field`: a prefix its length, an exact value every bit, no pattern none. */
export function prefixLen(design: HeaderDesign, row: RowSpec, field: string): number {
  const p = row.match.get(field);
  return p === undefined ? 0 : p.kind === "prefix" ? p.len : p.kind === "exact" ? width(design, field) : -1;
}

/** The field an LPM table matches by prefix (the compiler refuses `kind: lpm` otherwise): the first one a row matches
 * so. */
export function lpmField(t: TableSpec): string | undefined {
  return t.rows.flatMap((r) => [...r.match].filter(([, p]) => p.kind === "prefix").map(([name]) => name))[0];
}

/** The index of the description row that wins for a packet in table `t`, or −1 (no row matches). */
export function winner(design: HeaderDesign, t: TableSpec, inLink: Arrival, f: Fields): number {
  const matching = t.rows.flatMap((r, i) => (rowMatches(design, r, inLink, f) ? [i] : []));
  if (t.kind !== "lpm") return matching[0] ?? -1;
  const lpm = lpmField(t);
  let best = -1;
  for (const i of matching) {
    const r = t.rows[i];
    const b = t.rows[best];
    if (r === undefined) continue;
    if (b === undefined || (lpm !== undefined && prefixLen(design, r, lpm) > prefixLen(design, b, lpm))) best = i;
  }
  return best;
}
