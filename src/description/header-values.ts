// The header values of a member's rows, checked against its network's header design: a match's
// patterns (acquire, forward, receive) and a send row's header, every writable field filled.

import { excerpt } from "../errors.js";
import type { DesignDef, FieldDef } from "../wire/designs.js";
import { DEFAULT_HOP_LIMIT, hopLimitField, type NetworkContext } from "./context.js";
import { parseExact, parsePattern } from "./patterns.js";
import type { Path } from "./problems.js";
import type { RawValues } from "./raw.js";
import { didYouMean } from "./suggest.js";
import type { MemberSpec, Pattern } from "./types.js";

export class HeaderValues {
  readonly #ctx: NetworkContext;
  readonly #design: DesignDef;
  readonly #member: MemberSpec;

  constructor(ctx: NetworkContext, design: DesignDef, member: MemberSpec) {
    this.#ctx = ctx;
    this.#design = design;
    this.#member = member;
  }

  #add(path: Path, problem: string, fix = "", key = false): void {
    this.#ctx.problems.add(path, problem, fix, key);
  }

  /** A match's patterns by field; undefined when one is wrong (reported). */
  patterns(match: RawValues, path: Path): Map<string, Pattern> | undefined {
    const patterns = new Map<string, Pattern>();
    let good = true;
    for (const [name, v] of Object.entries(match)) {
      const at = [...path, name];
      if (name === "in") {
        this.#add(at, "`in` is not a header field", "write in: beside match:, not inside it", true);
        good = false;
        continue;
      }
      const field = this.#field(name, at);
      if (field === undefined) {
        good = false;
        continue;
      }
      const pattern = parsePattern(this.#ctx.value(at, v), field);
      if (!pattern.ok) {
        this.#add(at, pattern.problem, pattern.fix);
        good = false;
      } else if (pattern.value !== undefined) {
        patterns.set(name, pattern.value);
      }
    }
    return good ? patterns : undefined;
  }

  #field(name: string, path: Path): FieldDef | undefined {
    const field = this.#design.fields.find((f) => f.name === name);
    if (field === undefined) {
      const names = this.#design.fields.map((f) => f.name);
      this.#add(
        path,
        `${this.#design.name} has no field '${excerpt(name)}'`,
        `${didYouMean(name, names)}fields: ${names.join(", ")}`,
        true,
      );
    }
    return field;
  }

  /** Every writable field of the design: the values written, else their fallbacks (#fallback). */
  sendHeader(values: RawValues, path: Path): Map<string, bigint> | undefined {
    const writable = this.#design.fields.filter((f) => f.readOnly !== true);
    const given = new Map<string, bigint>();
    let good = true;
    for (const [name, v] of Object.entries(values)) {
      const at = [...path, name];
      const field = this.#field(name, at);
      if (field === undefined) {
        good = false;
        continue;
      }
      if (field.readOnly === true) {
        this.#add(
          at,
          `${name} is read-only in ${this.#design.name}: send cannot write it`,
          `writable fields: ${writable.map((f) => f.name).join(", ")}`,
          true,
        );
        good = false;
        continue;
      }
      const value = parseExact(this.#ctx.value(at, v), field);
      if (!value.ok) {
        this.#add(at, value.problem, value.fix);
        good = false;
      } else {
        given.set(name, value.value);
      }
    }
    if (!good) return undefined;
    const header = new Map<string, bigint>();
    for (const f of writable) header.set(f.name, given.get(f.name) ?? this.#fallback(f, given));
    return header;
  }

  /** What a send row leaves out: the member's own name as source, the default hop limit, the registry's default, a
   * presence bit set by what it marks, or 0. */
  #fallback(f: FieldDef, given: ReadonlyMap<string, bigint>): bigint {
    if (f.name === this.#design.srcField) return this.#member.nameValue;
    if (f.name === hopLimitField(this.#design)) return DEFAULT_HOP_LIMIT;
    if (f.default !== undefined) return f.default;
    if (f.presenceOf !== undefined) return given.has(f.presenceOf) ? 1n : 0n;
    return 0n;
  }
}
