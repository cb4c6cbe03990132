// A row's patterns over a design's fields: as a boolean diagram over the fields' bits (./bdd.ts), the destination's
// field first, the variables of each field most significant bit first; the headers a design's parser can produce; a
// pattern's identity; and the patterns as a row writes them.

import { formatValue } from "../description/notation.js";
import type { Pattern } from "../description/types.js";
import { PORT_PROTOCOLS } from "../model/headers.js";
import type { DesignDef, FieldDef } from "../wire/designs.js";
import { type Bdd, FALSE, TRUE } from "./bdd.js";

/** A field of a header space, and where its bits are among the diagram's variables. */
export interface SpaceField {
  readonly def: FieldDef;
  /** The variable of the field's most significant bit; the others follow. */
  readonly first: number;
  readonly bits: number;
}

/**
 * A design's matchable fields (the hop-limit field aside) as the diagram's variables, one field after another (the
 * destination's first, then the others in the design's order), each field's bits most significant first: which field a
 * variable reads, and which bit of it. `fields` keeps the design's order (what a class's words list fields in).
 */
export class FieldBits {
  readonly fields: readonly SpaceField[];
  readonly byName: ReadonlyMap<string, SpaceField>;
  readonly #field: Int32Array;
  readonly #shift: Int32Array;
  /** The bits of the headers header() made (class witnesses, read against many rows), read once (null: not yet). */
  readonly #made = new WeakMap<ReadonlyMap<string, bigint>, Uint8Array | null>();
  /** How many variables: the fields' bits. */
  readonly vars: number;

  constructor(design: DesignDef, apart: FieldDef | undefined) {
    // The destination's bits first, the field longest-prefix tables match: a FIB's prefix is then one path from the
    // root, and what other tables (an ACL's source prefixes, ports) make of its headers hangs below it, so that a
    // write of a prefix walks its region once, not once in each context the source's bits above it make (under a
    // 1,600-row ACL a /24's write took 1,919 steps over the diagrams with the source first, 1,139 with it second).
    const kept = design.fields.filter((def) => def !== apart);
    const order = [
      ...kept.filter((def) => def.name === design.dstField),
      ...kept.filter((def) => def.name !== design.dstField),
    ];
    const firsts = new Map<FieldDef, number>();
    let v = 0;
    for (const def of order) {
      firsts.set(def, v);
      v += def.bits;
    }
    const fields = kept.map((def) => ({ def, first: firsts.get(def) ?? 0, bits: def.bits }));
    this.fields = fields;
    this.byName = new Map(fields.map((f) => [f.def.name, f]));
    this.vars = v;
    this.#field = new Int32Array(v);
    this.#shift = new Int32Array(v);
    fields.forEach((f, i) => {
      for (let b = 0; b < f.bits; b++) {
        this.#field[f.first + b] = i;
        this.#shift[f.first + b] = f.bits - 1 - b;
      }
    });
  }

  /** The bit variable `v` reads of a header with these field values; undefined when its field has none. */
  bit(values: ReadonlyMap<string, bigint>, v: number): boolean | undefined {
    const f = this.fields[this.#field[v] ?? 0];
    const value = f === undefined ? undefined : values.get(f.def.name);
    return value === undefined ? undefined : ((value >> BigInt(this.#shift[v] ?? 0)) & 1n) === 1n;
  }

  /**
   * The terminal a header with these field values (absent fields: 0) reaches from `node` of `bdd`: its bits read once,
   * not a BigInt shifted at each node (a class's witness walked down a store of a million nodes made hundreds).
   */
  evaluate(bdd: Bdd, node: number, values: ReadonlyMap<string, bigint>): number {
    const made = this.#made.get(values);
    const bits = made ?? headerBits(this.fields, this.vars, values);
    if (made === null) this.#made.set(values, bits);
    let n = node;
    while (!bdd.isTerminal(n)) n = bits[bdd.variable(n)] === 1 ? bdd.high(n) : bdd.low(n);
    return n;
  }

  /** The header whose set bits are the variables `bits`, the others 0 (read-only: evaluate() keeps its bits). */
  header(bits: readonly number[]): ReadonlyMap<string, bigint> {
    const values = new Map(this.fields.map((f) => [f.def.name, 0n]));
    for (const v of bits) {
      const f = this.fields[this.#field[v] ?? 0];
      if (f !== undefined) values.set(f.def.name, (values.get(f.def.name) ?? 0n) | (1n << BigInt(this.#shift[v] ?? 0)));
    }
    this.#made.set(values, null);
    return values;
  }
}

/** A header's bits, one a variable of `fields` (`vars` in all; absent fields: 0). */
export function headerBits(
  fields: readonly SpaceField[],
  vars: number,
  values: ReadonlyMap<string, bigint>,
): Uint8Array {
  const bits = new Uint8Array(vars);
  for (const f of fields) {
    const value = values.get(f.def.name) ?? 0n;
    if (value === 0n) continue;
    if (f.bits <= 32) {
      const n = Number(value);
      for (let k = 0; k < f.bits; k++) bits[f.first + k] = (n / 2 ** (f.bits - 1 - k)) & 1;
    } else for (let k = 0; k < f.bits; k++) bits[f.first + k] = Number((value >> BigInt(f.bits - 1 - k)) & 1n);
  }
  return bits;
}

/** The headers the design's parser can produce (docs/spec.md, "How the data plane reads them"). */
export function feasibleNode(bdd: Bdd, design: DesignDef, byName: ReadonlyMap<string, SpaceField>): number {
  const exact = (name: string, value: bigint, then: number): number => {
    const f = byName.get(name);
    return f === undefined ? then : fieldNode(bdd, f, { kind: "exact", value }, then);
  };
  switch (design.name) {
    case "ipv4": {
      // Ports are read only from TCP, UDP, SCTP and UDP-Lite: any other protocol reads 0 and 0.
      let node = exact("sport", 0n, exact("dport", 0n, TRUE));
      for (const proto of PORT_PROTOCOLS) node = bdd.or(node, exact("proto", BigInt(proto), TRUE));
      return node;
    }
    case "gre":
      // Without the K bit the key reads 0.
      return bdd.or(exact("keyed", 1n, TRUE), exact("key", 0n, TRUE));
    default:
      return TRUE;
  }
}

/** A conjunction of patterns as a boolean diagram over `fields` (the hop-limit field is not one of them). */
export function matchNode(bdd: Bdd, fields: readonly SpaceField[], match: ReadonlyMap<string, Pattern>): number {
  let node = TRUE;
  for (const f of [...fields].sort((x, y) => y.first - x.first)) {
    const p = match.get(f.def.name);
    if (p !== undefined) node = fieldNode(bdd, f, p, node);
  }
  return node;
}

/** One field's pattern, going on to `then` where it holds. */
function fieldNode(b: Bdd, f: SpaceField, p: Pattern, then: number): number {
  const bitOf = (x: bigint, k: number): number => Number((x >> BigInt(f.bits - 1 - k)) & 1n);
  if (p.kind === "range") {
    const rec = (k: number, lowTight: boolean, highTight: boolean): number => {
      if ((!lowTight && !highTight) || k === f.bits) return then;
      const child = (x: number): number => {
        if (lowTight && x < bitOf(p.lo, k)) return FALSE;
        if (highTight && x > bitOf(p.hi, k)) return FALSE;
        return rec(k + 1, lowTight && x === bitOf(p.lo, k), highTight && x === bitOf(p.hi, k));
      };
      return b.mk(f.first + k, child(0), child(1));
    };
    return rec(0, true, true);
  }
  // Exact, prefix and ternary: a chain over the bits they fix.
  const all = (1n << BigInt(f.bits)) - 1n;
  const [value, mask] =
    p.kind === "exact"
      ? [p.value, all]
      : p.kind === "prefix"
        ? [p.value, p.len === 0 ? 0n : all ^ ((1n << BigInt(f.bits - p.len)) - 1n)]
        : [p.value, p.mask];
  let node = then;
  for (let k = f.bits - 1; k >= 0; k--) {
    if (bitOf(mask, k) === 0) continue;
    node = bitOf(value, k) === 1 ? b.mk(f.first + k, FALSE, node) : b.mk(f.first + k, node, FALSE);
  }
  return node;
}

/** A pattern's identity, for telling registered predicates apart. */
export function patternKey(p: Pattern): string {
  switch (p.kind) {
    case "exact":
      return `=${p.value}`;
    case "prefix":
      return `${p.value}/${p.len}`;
    case "ternary":
      return `${p.value}&${p.mask}`;
    case "range":
      return `${p.lo}..${p.hi}`;
  }
}

/** Patterns as a row writes them: "dst=10.0.2.0/24 proto=17". */
export function formatPatterns(design: DesignDef, match: ReadonlyMap<string, Pattern>): string {
  return [...match]
    .map(([name, p]) => {
      const kind = design.fields.find((f) => f.name === name)?.kind ?? "uint";
      // An ethertype reads best in hex (0x0800).
      const v = (x: bigint): string => formatValue(x, kind, name === "type" ? { radix: 16, digits: 4 } : undefined);
      const text =
        p.kind === "exact"
          ? v(p.value)
          : p.kind === "prefix"
            ? `${v(p.value)}/${p.len}`
            : p.kind === "ternary"
              ? `${v(p.value)}&&&${v(p.mask)}`
              : `${v(p.lo)}..${v(p.hi)}`;
      return `${name}=${text}`;
    })
    .join(" ");
}
