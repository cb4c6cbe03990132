// Match patterns on one header field, from the notations of docs/spec.md:
//   exact  VALUE          prefix  VALUE/LEN       wildcard  "*"
//   ternary VALUE &&& MASK       range   LO..HI
// Every value is checked against the field's width from the design registry; a
// prefix or ternary with stray bits is refused with its canonical form as the fix,
// since a silently masked value usually hides a typo.

import { excerpt } from "../errors.js";
import type { FieldDef } from "../wire/designs.js";
import {
  fail,
  formatValue,
  hasLeadingZeros,
  LEADING_ZEROS,
  ok,
  parseValue,
  type Result,
  uintStyle,
} from "./notation.js";
import type { Pattern } from "./types.js";

/** A value as it comes from the document: text, or an integer YAML/JSON already read (bigint when too large for a
 * number). */
export type RawValue = string | number | bigint;

/** The pattern, or undefined for the wildcard "*" (the field is left out of the row's match). */
export function parsePattern(input: RawValue, field: FieldDef): Result<Pattern | undefined> {
  if (typeof input !== "string") {
    const value = integerValue(input);
    if (!value.ok) return value;
    return withinWidth(value.value, String(input), field, (v) => ok({ kind: "exact", value: v }));
  }
  const text = input.trim();
  if (text === "*") return ok(undefined);
  if (text.includes("&&&")) return ternary(text, field);
  if (text.includes("..")) return range(text, field);
  if (text.includes("/")) return prefix(text, field);
  return exactText(text, field);
}

/** One exact value (member names, send headers): a pattern syntax here is an error. */
export function parseExact(input: RawValue, field: FieldDef): Result<bigint> {
  if (typeof input === "string" && /^\s*\*\s*$|&&&|\.\.|\//.test(input)) {
    return fail(
      `'${excerpt(input.trim())}' is a pattern; ${field.name} takes one exact value here`,
      `write a single value, like ${example(field)}`,
    );
  }
  const pattern = parsePattern(input, field);
  if (!pattern.ok) return pattern;
  return pattern.value?.kind === "exact" ? ok(pattern.value.value) : fail(`${field.name} needs an exact value here`);
}

/** The largest value of a field, in its notation: "65535 (0xffff)" for uints. */
export function largestValue(field: FieldDef): string {
  const max = (1n << BigInt(field.bits)) - 1n;
  if (field.kind !== "uint") return formatValue(max, field.kind);
  return `${max} (0x${max.toString(16)})`;
}

function example(field: FieldDef): string {
  return formatValue(field.kind === "uint" ? 1n : 0x0200000000n + 1n, field.kind);
}

function integerValue(input: number | bigint): Result<bigint> {
  if (typeof input === "bigint")
    return input >= 0n ? ok(input) : fail(`${excerpt(String(input))} is negative`, "values are unsigned");
  if (!Number.isInteger(input))
    return fail(`${input} is not an integer`, "write a whole number, or quote the value if it is an address");
  if (input < 0) return fail(`${input} is negative`, "values are unsigned");
  return ok(BigInt(input));
}

function withinWidth<T>(value: bigint, written: string, field: FieldDef, then: (v: bigint) => Result<T>): Result<T> {
  if (value >> BigInt(field.bits) !== 0n) {
    return fail(
      `${excerpt(written)} does not fit in ${field.name} (${field.bits} bits)`,
      `the largest value is ${largestValue(field)}`,
    );
  }
  return then(value);
}

function valueOf(text: string, field: FieldDef): Result<bigint> {
  const parsed = parseValue(text, field.kind);
  if (!parsed.ok) return parsed;
  return withinWidth(parsed.value, text.trim(), field, ok);
}

function exactText(text: string, field: FieldDef): Result<Pattern> {
  const value = valueOf(text, field);
  return value.ok ? ok({ kind: "exact", value: value.value }) : value;
}

function prefix(text: string, field: FieldDef): Result<Pattern> {
  const slash = text.lastIndexOf("/");
  const valueText = text.slice(0, slash).trim();
  const lenText = text.slice(slash + 1).trim();
  const value = valueOf(valueText, field);
  if (!value.ok) return value;
  if (!/^\d+$/.test(lenText))
    return fail(
      `'${excerpt(lenText)}' after '/' is not a prefix length`,
      `write VALUE/LEN with LEN in 0..${field.bits}`,
    );
  if (hasLeadingZeros(lenText))
    return fail(`prefix length '${excerpt(lenText)}': ${LEADING_ZEROS}`, `write ${valueText}/${Number(lenText)}`);
  const len = Number(lenText);
  if (len > field.bits)
    return fail(
      `prefix length ${len} is longer than ${field.name} (${field.bits} bits)`,
      `use a length in 0..${field.bits}`,
    );
  const mask = prefixMask(len, field.bits);
  if ((value.value & ~mask) !== 0n) {
    const canonical = `${formatValue(value.value & mask, field.kind, uintStyle(valueText))}/${len}`;
    return fail(`${excerpt(text)} has bits set after the first ${len}`, `did you mean ${canonical}?`);
  }
  return ok({ kind: "prefix", value: value.value, len });
}

function ternary(text: string, field: FieldDef): Result<Pattern> {
  const parts = text.split("&&&");
  if (parts.length !== 2) return fail(`'${excerpt(text)}' has more than one '&&&'`, "write VALUE &&& MASK");
  const [valueText, maskText] = parts.map((p) => p.trim()) as [string, string];
  const value = valueOf(valueText, field);
  if (!value.ok) return value;
  const mask = valueOf(maskText, field);
  if (!mask.ok) return mask;
  if ((value.value & ~mask.value) !== 0n) {
    const fixed = formatValue(value.value & mask.value, field.kind, uintStyle(valueText));
    return fail(`${excerpt(text)} has value bits outside the mask`, `did you mean ${fixed} &&& ${excerpt(maskText)}?`);
  }
  return ok({ kind: "ternary", value: value.value, mask: mask.value });
}

function range(text: string, field: FieldDef): Result<Pattern> {
  const parts = text.split("..");
  if (parts.length !== 2) return fail(`'${excerpt(text)}' is not a range`, "write LO..HI");
  const [loText, hiText] = parts.map((p) => p.trim()) as [string, string];
  const lo = valueOf(loText, field);
  if (!lo.ok) return lo;
  const hi = valueOf(hiText, field);
  if (!hi.ok) return hi;
  if (lo.value > hi.value)
    return fail(
      `range ${excerpt(text)} is empty (${excerpt(loText)} > ${excerpt(hiText)})`,
      `write the smaller bound first: ${excerpt(hiText)}..${excerpt(loText)}`,
    );
  return ok({ kind: "range", lo: lo.value, hi: hi.value });
}

function prefixMask(len: number, bits: number): bigint {
  const key = bits * 1024 + len;
  let mask = MASKS.get(key);
  if (mask === undefined) {
    const all = (1n << BigInt(bits)) - 1n;
    mask = all ^ ((1n << BigInt(bits - len)) - 1n);
    MASKS.set(key, mask);
  }
  return mask;
}

/** Prefix masks by width and length, made once each. */
const MASKS = new Map<number, bigint>();
