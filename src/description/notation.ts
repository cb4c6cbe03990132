// Writing and reading header values in a description: each name kind of the
// design registry (mac, ipv4, ipv6, uint) has its usual text notation, and every
// kind also accepts a plain unsigned integer (decimal, 0x, 0b, 0o), because YAML
// turns an unquoted 0x0800 into a number before we see it. Link identifiers and
// session ids are decimal. Nowhere is a decimal written with leading zeros read:
// `010` is 8 to some tools (C, YAML 1.1, inet_aton) and 10 to others.

import { excerpt } from "../errors.js";
import type { NameKind } from "../wire/designs.js";

export type Result<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string; readonly fix: string };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const fail = <T>(problem: string, fix = ""): Result<T> => ({ ok: false, problem, fix });

/** How a uint value was written, so a suggested correction reads the same way. */
export interface UintStyle {
  readonly radix: 2 | 10 | 16;
  /** Digits after the prefix as written ("0x0800" → 4), for zero padding. */
  readonly digits: number;
}

const DECIMAL: UintStyle = { radix: 10, digits: 0 };

/** Why a decimal with leading zeros is refused wherever a description writes one. */
export const LEADING_ZEROS = "leading zeros are ambiguous (octal to some tools)";

/** Decimal digits that start with a 0 and go on: `00001`, `0800`. */
export function hasLeadingZeros(text: string): boolean {
  return /^0\d+$/.test(text.trim());
}

/** Reads an unsigned integer literal: decimal without leading zeros, 0x…, 0b…, 0o… */
export function parseUint(text: string): bigint | undefined {
  if (!/^(0x[0-9a-f]+|0b[01]+|0o[0-7]+|0|[1-9][0-9]*)$/i.test(text)) return undefined;
  return BigInt(text.toLowerCase());
}

/**
 * A link identifier or session id as written (an endpoint's `h1.1`, `in`, `out`, `session`,
 * `ip.1`): decimal without leading zeros. Any other way of writing a number (`00001`, `0x1`,
 * `1e0`, which YAML reads as 1) is refused with the decimal to write. Ranges are the caller's.
 */
export function parseIdentifier(text: string): Result<number> {
  const t = text.trim();
  if (/^(0|[1-9][0-9]*)$/.test(t)) return ok(Number(t));
  const value = t === "" ? Number.NaN : Number(t);
  const fix = Number.isSafeInteger(value) && value >= 0 ? `write ${value}` : "write it in decimal, like 1";
  return fail(
    hasLeadingZeros(t)
      ? `identifier '${excerpt(t)}': ${LEADING_ZEROS}`
      : `identifier '${excerpt(t)}' is not written in decimal`,
    fix,
  );
}

export function uintStyle(text: string): UintStyle {
  const t = text.trim().toLowerCase();
  if (t.startsWith("0x")) return { radix: 16, digits: t.length - 2 };
  if (t.startsWith("0b")) return { radix: 2, digits: t.length - 2 };
  return DECIMAL;
}

const NOTATION: Record<NameKind, { readonly what: string; readonly example: string }> = {
  mac: { what: "a MAC address", example: "six hex pairs separated by ':' or '-', like 02:00:00:00:0a:01" },
  ipv4: { what: "an IPv4 address", example: "a dotted quad, like 10.0.1.254" },
  ipv6: { what: "an IPv6 address", example: "RFC 4291 text, like 2001:db8::1 or ::ffff:10.0.0.1" },
  uint: { what: "an unsigned integer", example: "decimal, 0x hex or 0b binary, like 2048, 0x0800 or 0b1010" },
};

/** Reads one value in the kind's notation (or as an integer literal). Width is checked by the caller. */
export function parseValue(text: string, kind: NameKind): Result<bigint> {
  const t = text.trim();
  if (hasLeadingZeros(t))
    return fail(`'${excerpt(t)}': ${LEADING_ZEROS}`, `write ${BigInt(t)} in decimal, or give the base: 0x…, 0o…, 0b…`);
  const asUint = parseUint(t);
  if (asUint !== undefined) return ok(asUint);
  const value =
    kind === "mac" ? parseMac(t) : kind === "ipv4" ? parseIpv4(t) : kind === "ipv6" ? parseIpv6(t) : undefined;
  if (typeof value === "bigint") return ok(value);
  const note = typeof value === "string" ? ` (${value})` : "";
  return fail(`'${excerpt(t)}' is not ${NOTATION[kind].what}${note}`, `write ${NOTATION[kind].example}`);
}

/** The canonical text of a value: lower-case MAC pairs, dotted quad, RFC 5952 IPv6, uint in the given style. */
export function formatValue(value: bigint, kind: NameKind, style: UintStyle = DECIMAL): string {
  switch (kind) {
    case "mac":
      return formatMac(value);
    case "ipv4":
      return formatIpv4(value);
    case "ipv6":
      return formatIpv6(value);
    case "uint":
      return formatUint(value, style);
  }
}

function formatUint(value: bigint, style: UintStyle = DECIMAL): string {
  if (style.radix === 10) return value.toString(10);
  const digits = value.toString(style.radix).padStart(style.digits, "0");
  return `${style.radix === 16 ? "0x" : "0b"}${digits}`;
}

// A failed parse returns undefined, or a string saying what in particular is wrong.

function parseMac(text: string): bigint | string | undefined {
  const m = /^([0-9a-f]{2})([:-])([0-9a-f]{2})\2([0-9a-f]{2})\2([0-9a-f]{2})\2([0-9a-f]{2})\2([0-9a-f]{2})$/i.exec(
    text,
  );
  if (m === null) return undefined;
  return BigInt(`0x${[1, 3, 4, 5, 6, 7].map((i) => m[i] ?? "").join("")}`);
}

function formatMac(value: bigint): string {
  return value.toString(16).padStart(12, "0").match(/../g)?.join(":") ?? "";
}

/** Four parts of one to three digits: every address of a 100,000-row table goes through it. */
const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

function parseIpv4(text: string): bigint | string | undefined {
  const m = IPV4.exec(text);
  if (m === null) return undefined;
  const parts = [m[1] ?? "", m[2] ?? "", m[3] ?? "", m[4] ?? ""];
  if (parts.some(hasLeadingZeros)) return LEADING_ZEROS;
  let value = 0;
  for (const part of parts) {
    const b = Number(part);
    if (b > 255) return "each part is 0..255";
    value = value * 256 + b;
  }
  return BigInt(value);
}

function formatIpv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((s) => ((value >> s) & 0xffn).toString()).join(".");
}

/** RFC 4291 §2.2: eight hex groups, one `::` for one or more zero groups, an IPv4 tail. */
function parseIpv6(text: string): bigint | string | undefined {
  if (!text.includes(":")) return undefined;
  if (text.includes("%")) return "zone indices are not part of an address";
  const halves = text.split("::");
  if (halves.length > 2) return "'::' may appear once";
  const head = groupsOf(halves[0] ?? "", halves.length === 1 || halves[1] === "");
  const tail = halves.length === 2 ? groupsOf(halves[1] ?? "", true) : [];
  if (head === undefined || tail === undefined) return undefined;
  const count = head.length + tail.length;
  if (halves.length === 1 ? count !== 8 : count > 7)
    return halves.length === 1 ? "it needs eight groups, or '::'" : "too many groups";
  const groups = [...head, ...new Array<number>(8 - count).fill(0), ...tail];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

/** 16-bit groups of one side of `::`; the last may be a dotted quad when `last` is set. */
function groupsOf(side: string, last: boolean): number[] | undefined {
  if (side === "") return [];
  const parts = side.split(":");
  const groups: number[] = [];
  for (const [i, part] of parts.entries()) {
    if (last && i === parts.length - 1 && part.includes(".")) {
      const v4 = parseIpv4(part);
      if (typeof v4 !== "bigint") return undefined;
      groups.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
    } else if (/^[0-9a-f]{1,4}$/i.test(part)) {
      groups.push(parseInt(part, 16));
    } else {
      return undefined;
    }
  }
  return groups;
}

/** RFC 5952: lower case, no leading zeros, the longest run (≥ 2) of zero groups as `::`. */
function formatIpv6(value: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(112 - 16 * i)) & 0xffffn));
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (gs: number[]): string => gs.map((g) => g.toString(16)).join(":");
  if (bestStart < 0) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLen))}`;
}
