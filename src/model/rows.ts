// What a description's row means, read from its patterns (spec/types.ts) rather
// than from the bytes the compiler made of them: a row matches a header when its
// in-link and every pattern hold. Which matching row wins is the description's
// rule (docs/spec.md): the row written first — or, in a table written
// `kind: lpm`, the longest prefix. The compiler's choice of engine must not matter.

import type { CompiledTable } from "../control/compiled.js";
import type { Pattern, RowSpec } from "../spec/types.js";
import { PORT_SELF } from "../wasm/abi.js";
import type { DesignDef } from "../wire/designs.js";
import type { Fields } from "./headers.js";

function holds(p: Pattern, v: bigint, bits: number): boolean {
  switch (p.kind) {
    case "exact": return v === p.value;
    case "prefix": return v >> BigInt(bits - p.len) === p.value >> BigInt(bits - p.len);
    case "ternary": return (v & p.mask) === p.value;
    case "range": return p.lo <= v && v <= p.hi;
  }
}

export function specRowMatches(design: DesignDef, row: RowSpec, inLink: number, f: Fields): boolean {
  if (row.in !== undefined && (row.in === "self" ? PORT_SELF : row.in) !== inLink) return false;
  return [...row.match].every(([name, p]) => holds(p, f.get(name) ?? 0n, design.fields.find((d) => d.name === name)?.bits ?? 0));
}

/** The prefix length a row gives `field`: a prefix its length, an exact value every bit, no pattern none. */
function prefixLen(design: DesignDef, row: RowSpec, field: string): number {
  const p = row.match.get(field);
  const bits = design.fields.find((d) => d.name === field)?.bits ?? 0;
  return p === undefined ? 0 : p.kind === "prefix" ? p.len : p.kind === "exact" ? bits : -1;
}

/** The description row that wins for a key in table `t`, or −1. */
export function specWinner(design: DesignDef, t: CompiledTable, inLink: number, f: Fields): number {
  const rows = t.spec?.rows ?? [];
  const matching = rows.flatMap((r, i) => (specRowMatches(design, r, inLink, f) ? [i] : []));
  if (t.spec?.kind !== "lpm") return matching[0] ?? -1;
  const lpm = t.fields.find((k) => k.kind === "lpm")?.name ?? "";
  let best = -1;
  for (const i of matching) {
    const r = rows[i];
    const b = rows[best];
    if (r !== undefined && (b === undefined || prefixLen(design, r, lpm) > prefixLen(design, b, lpm))) best = i;
  }
  return best;
}
