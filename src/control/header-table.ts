// A member's header tables — acquire, forward, receive — from the rows a description writes: each row's key as the
// table's kind holds it, its action, and its text for people.
//
// A pattern table denotes the model's relation: a header is related to the
// action of the first row, in the order written, that matches it. Match kinds
// are chosen per field, as a P4 compiler would from the patterns the rows use,
// and the table's kind follows: a range anywhere → range; a mask → ternary; one
// prefix field with the rest exact → LPM; a field some rows leave out →
// optional; else exact. The kind never changes which row wins: LPM is chosen
// only when the longest prefix is also the first match; otherwise the rows go
// into a ternary table by their order. A table written `kind: lpm` asks for
// longest-prefix semantics instead, whatever the order.

import { SpecIssue } from "../description/problems.js";
import type { InLink, Pattern, RowSpec, TableSpec } from "../description/types.js";
import { formatValue } from "../description/notation.js";
import { type MatchKind, LINK_SELF, LINK_SHARED } from "../wasm/abi.js";
import type { EntryAction, EntryMatch, KeyField } from "../wasm/tables.js";
import type { FieldSlot, KeyLayout } from "../wire/designs.js";
import { capacityOf, type CompiledNetwork, type CompiledRow, type CompiledTable } from "./compiled.js";

type PatternKind = Pattern["kind"];

const GENERALITY: Record<MatchKind, number> = { exact: 0, lpm: 1, optional: 1, ternary: 2, range: 3 };

function fieldKind(kinds: ReadonlySet<PatternKind>, omitted: boolean): MatchKind {
  if (kinds.has("range")) return "range";
  if (kinds.has("ternary")) return "ternary";
  if (kinds.has("prefix")) return "lpm"; // a row without it matches the /0 prefix
  return omitted ? "optional" : "exact";
}

function tableKind(fields: readonly MatchKind[]): MatchKind {
  if (fields.includes("range")) return "range";
  if (fields.includes("ternary")) return "ternary";
  const lpm = fields.filter((k) => k === "lpm").length;
  if (lpm === 1 && !fields.includes("optional")) return "lpm";
  if (lpm > 0) return "ternary";
  return fields.includes("optional") ? "optional" : "exact";
}

/** Field kinds as a table of `kind` holds them: prefixes become masks outside LPM tables. */
function settle(kind: MatchKind, field: MatchKind): MatchKind {
  if (field === "lpm" && kind !== "lpm") return "ternary";
  return field;
}

/** The member of `network` on the machine of member `from` (layering's attachment), or −1. */
export type Attachment = (network: string, from: number) => number;

/**
 * How a table's rows use the key: how many there are and how many name their in-link; per field of the design after
 * the in-link, the pattern kinds the rows write there and whether some row leaves it out.
 */
export interface KeyUse {
  readonly rows: number;
  readonly inRows: number;
  readonly kinds: readonly ReadonlySet<PatternKind>[];
  readonly omitted: readonly boolean[];
}

/** How `rows` use the key, added to how the rows before them did (`before`). */
export function keyUse(layout: KeyLayout, rows: readonly RowSpec[], before?: KeyUse): KeyUse {
  const slots = layout.slots.slice(1);
  const kinds = slots.map((_, i) => new Set<PatternKind>(before?.kinds[i] ?? []));
  const omitted = slots.map((_, i) => before?.omitted[i] ?? false);
  let inRows = before?.inRows ?? 0;
  for (const r of rows) if (r.in !== undefined) inRows++;
  slots.forEach((slot, i) => {
    // One pass over the rows for each field, allocating nothing per row (100,000 rows, a dozen fields).
    const seen = kinds[i] as Set<PatternKind>;
    for (const r of rows) {
      const p = r.match.get(slot.field.name);
      if (p === undefined) omitted[i] = true;
      else seen.add(p.kind);
    }
  });
  return { rows: (before?.rows ?? 0) + rows.length, inRows, kinds, omitted };
}

/** The key's slots the rows match on (in-link first), and how each field's patterns are matched. */
function usedFields(layout: KeyLayout, use: KeyUse): { used: FieldSlot[]; fieldKinds: MatchKind[] } {
  const used: FieldSlot[] = [];
  const fieldKinds: MatchKind[] = [];
  const inSlot = layout.slots[0];
  if (inSlot !== undefined && use.inRows > 0) {
    used.push(inSlot);
    fieldKinds.push(use.inRows === use.rows ? "exact" : "optional");
  }
  layout.slots.slice(1).forEach((slot, i) => {
    const kinds = use.kinds[i];
    if (kinds === undefined || kinds.size === 0) return;
    used.push(slot);
    fieldKinds.push(fieldKind(kinds, use.omitted[i] ?? false));
  });
  return { used, fieldKinds };
}

/** Whether a table written `kind: asked` holds rows whose patterns need `inferred`. */
function holds(asked: MatchKind, inferred: MatchKind): boolean {
  return (
    asked === inferred ||
    (GENERALITY[asked] > GENERALITY[inferred] && asked !== "lpm" && !(asked === "optional" && inferred === "lpm"))
  );
}

/**
 * Rows written after the rows of table `t` (which used the key as `before` says), compiled as compileHeaderTable
 * compiles them in the whole table written with t's kind: `first` is the index of the first of them, `n` the rows of
 * the whole. Undefined when they do not fit t's kind or match on other fields than t's (the whole table, compiled
 * again, refuses them or changes).
 */
export function compileAppended(
  t: CompiledTable,
  layout: KeyLayout,
  before: KeyUse,
  rows: readonly RowSpec[],
  place: { readonly first: number; readonly n: number },
  attached: (network: string) => number,
  sharedWith: () => number,
  problems: SpecIssue[],
): CompiledRow[] | undefined {
  const { used, fieldKinds } = usedFields(layout, keyUse(layout, rows, before));
  if (!holds(t.kind, tableKind(fieldKinds))) return undefined;
  const fields = used.map((s, i) => ({ name: s.field.name, kind: settle(t.kind, fieldKinds[i] ?? "exact") }));
  const same = (f: { name: string; kind: MatchKind }, i: number): boolean =>
    f.name === t.fields[i]?.name && f.kind === t.fields[i]?.kind;
  if (fields.length !== t.fields.length || !fields.every(same)) return undefined;
  const keys = keyArena(layout.len, t.kind, rows.length);
  return rows.map((r, i) =>
    headerRow(r, place.first + i, place.n, t.kind, keys(i), used, t.fields, problems, attached, sharedWith),
  );
}

export function compileHeaderTable(
  id: number,
  memberIndex: number,
  net: CompiledNetwork,
  t: TableSpec,
  attachment: Attachment,
  sharedWith: () => number,
  problems: SpecIssue[],
): CompiledTable {
  const layout = net.layout;
  const { used, fieldKinds } = usedFields(layout, keyUse(layout, t.rows));
  let inferred = tableKind(fieldKinds);
  if (inferred === "lpm" && t.kind === undefined && !firstMatchIsLongest(t.rows, used, fieldKinds))
    inferred = "ternary";
  let kind = inferred;
  // A table that matches no field (no rows, or only rows of `match: {}`) has no key for its kind to say how to match.
  if (t.kind !== undefined && used.length > 0) {
    if (holds(t.kind, inferred)) kind = t.kind;
    else {
      problems.push(
        new SpecIssue(
          t.at,
          `kind ${t.kind} cannot hold these rows: their patterns need ${inferred}`,
          `write kind: ${inferred}, or leave kind out`,
        ),
      );
    }
  }
  const fields: KeyField[] = used.map((s, i) => ({
    name: s.field.name,
    offset: s.offset,
    len: s.len,
    kind: settle(kind, fieldKinds[i] ?? "exact"),
  }));
  const keys = keyArena(layout.len, kind, t.rows.length);
  const rows = t.rows.map((r, i) =>
    headerRow(
      r,
      i,
      t.rows.length,
      kind,
      keys(i),
      used,
      fields,
      problems,
      (network) => attachment(network, memberIndex),
      sharedWith,
    ),
  );
  return {
    id,
    role: t.role,
    kind,
    keyLen: layout.len,
    capacity: capacityOf(t, t.rows.length),
    fields,
    member: memberIndex,
    rows,
    spec: t,
  };
}

/**
 * Whether, in these rows, the longest matching prefix is always the first
 * matching row: no earlier row with a shorter prefix covers a later, longer one
 * (with the same values in the other fields). Then an LPM table and the
 * written order agree.
 */
function firstMatchIsLongest(
  rows: readonly RowSpec[],
  used: readonly FieldSlot[],
  kinds: readonly MatchKind[],
): boolean {
  const lpmAt = kinds.indexOf("lpm");
  const slot = used[lpmAt];
  if (slot === undefined) return true;
  const bits = slot.field.bits;
  const seen = new Set<string>();
  const lengths = new Set<number>();
  for (const r of rows) {
    const rest = used
      .filter((_, i) => i !== lpmAt)
      .map((u) => (u.field.name === "in" ? String(r.in) : String(patternValue(r.match.get(u.field.name)))))
      .join("|");
    const p = r.match.get(slot.field.name);
    const len = p === undefined ? 0 : p.kind === "prefix" ? p.len : bits;
    const value = p === undefined ? 0n : patternValue(p);
    const key = (l: number): string => `${rest}|${l}|${value >> BigInt(bits - l)}`;
    for (const l of lengths) if (l < len && seen.has(key(l))) return false;
    seen.add(key(len));
    lengths.add(len);
  }
  return true;
}

function patternValue(p: Pattern | undefined): bigint {
  return p === undefined ? -1n : p.kind === "range" ? p.lo : p.value;
}

export function putBig(bytes: Uint8Array, slot: { offset: number; len: number }, value: bigint): void {
  if (value >= 0n && value < SAFE_BYTES) {
    // A value of six bytes or fewer (every field but IPv6's addresses) as a number: no bigint made per byte.
    let n = Number(value);
    for (let i = slot.len - 1; i >= 0; i--) {
      bytes[slot.offset + i] = n % 256;
      n = Math.floor(n / 256);
    }
    return;
  }
  let v = value;
  for (let i = slot.len - 1; i >= 0; i--) {
    bytes[slot.offset + i] = Number(v & 0xffn);
    v >>= 8n;
  }
}

/** Values below this are exact as numbers, and their bytes too. */
const SAFE_BYTES = 1n << 48n;

const ONES: bigint[] = [];

/** 2^bits − 1, made once per width. */
const ones = (bits: number): bigint => (ONES[bits] ??= (1n << BigInt(bits)) - 1n);

/** A row's key in the bytes a table of its kind holds: value and mask, and a range table's bounds. */
type KeyBytes = Required<Omit<EntryMatch, "priority">>;

/**
 * The keys of a table's rows, as views of one buffer: a typed array of its own for each of 100,000 rows' value, mask
 * and bounds cost more than a third of compiling them. A table of another kind than range has no bounds: its rows share
 * one pair of bytes that nothing reads.
 */
function keyArena(len: number, kind: MatchKind, rows: number): (row: number) => KeyBytes {
  const parts = kind === "range" ? 4 : 2;
  const buffer = new ArrayBuffer(len * parts * rows);
  const unread = new Uint8Array(len);
  return (row) => {
    const at = (part: number): Uint8Array => new Uint8Array(buffer, (row * parts + part) * len, len);
    return { value: at(0), mask: at(1), lo: parts === 4 ? at(2) : unread, hi: parts === 4 ? at(3) : unread };
  };
}

function headerRow(
  r: RowSpec,
  index: number,
  n: number,
  kind: MatchKind,
  key: KeyBytes,
  used: readonly FieldSlot[],
  fields: readonly KeyField[],
  problems: SpecIssue[],
  attached: (network: string) => number,
  sharedWith: () => number,
): CompiledRow {
  const parts: string[] = [];
  used.forEach((slot, i) => {
    const f = fields[i];
    if (f === undefined) return;
    const part =
      slot.field.name === "in" ? putInLink(key, slot, f.kind, r.in) : putPattern(key, slot, f.kind, r, problems);
    if (part !== undefined) parts.push(part);
  });
  const priority = kind === "exact" || kind === "lpm" ? 0 : n - index;
  const { value, mask, lo, hi } = key;
  const match: EntryMatch = kind === "range" ? { value, mask, lo, hi, priority } : { value, mask, priority };
  const { action, outLinks, text } = headerAction(r, attached, sharedWith);
  return {
    row: index,
    match,
    action,
    outLinks,
    at: r.at,
    text: `${parts.length === 0 ? "any" : parts.join(", ")} → ${text}`,
  };
}

/** Puts a row's in-link into its key; returns it as text, or undefined when the row takes any in-link. */
function putInLink(key: KeyBytes, slot: FieldSlot, kind: MatchKind, inLink: InLink | undefined): string | undefined {
  if (inLink === undefined) {
    if (kind === "range") putBig(key.hi, slot, ones(16));
    return undefined;
  }
  const v = BigInt(inValue(inLink));
  if (kind === "range") {
    putBig(key.lo, slot, v);
    putBig(key.hi, slot, v);
  } else {
    putBig(key.value, slot, v);
    putBig(key.mask, slot, ones(slot.len * 8));
  }
  return `in ${inLink}`;
}

/**
 * Puts a row's pattern for one field into its key, or says why a range table cannot hold it; returns the pattern as
 * text, or undefined when the row leaves the field out.
 */
function putPattern(
  key: KeyBytes,
  slot: FieldSlot,
  kind: MatchKind,
  r: RowSpec,
  problems: SpecIssue[],
): string | undefined {
  const p = r.match.get(slot.field.name);
  const text = p === undefined ? undefined : `${slot.field.name} ${describePattern(p, slot)}`;
  if (kind === "range") {
    const bounds = asRange(p, slot.field.bits);
    if (bounds === undefined) {
      problems.push(
        new SpecIssue(
          r.at,
          `${slot.field.name}: a mask that is not a prefix cannot share a field with ranges (another row of ` +
            `this table matches ${slot.field.name} by range)`,
          "write this row's pattern as a range or a prefix, or put the masked rows in another member's table",
        ),
      );
      return text;
    }
    putBig(key.lo, slot, bounds[0]);
    putBig(key.hi, slot, bounds[1]);
    return text;
  }
  if (p === undefined) return undefined;
  const width = slot.len * 8;
  const pad = ones(width) ^ ones(slot.field.bits); // bytes' bits above the field: always 0 in keys
  const m =
    p.kind === "exact"
      ? ones(width)
      : p.kind === "prefix"
        ? pad | (ones(slot.field.bits) ^ ones(slot.field.bits - p.len))
        : p.kind === "ternary"
          ? pad | p.mask
          : 0n;
  const v = p.kind === "range" ? 0n : p.value;
  putBig(key.value, slot, v & m);
  putBig(key.mask, slot, m);
  return text;
}

/** A pattern as the range of values it matches; undefined for a mask with holes (no single range). */
function asRange(p: Pattern | undefined, bits: number): [bigint, bigint] | undefined {
  if (p === undefined) return [0n, ones(bits)];
  switch (p.kind) {
    case "range":
      return [p.lo, p.hi];
    case "exact":
      return [p.value, p.value];
    case "prefix":
      return [p.value, p.value | ones(bits - p.len)];
    case "ternary": {
      const host = ~p.mask & ones(bits);
      // A prefix mask: the bits it leaves out are all below the bits it keeps.
      return (host & (host + 1n)) === 0n ? [p.value, p.value | host] : undefined;
    }
  }
}

function inValue(i: InLink): number {
  return i === "self" ? LINK_SELF : i === "shared" ? LINK_SHARED : i;
}

function describePattern(p: Pattern, slot: FieldSlot): string {
  const f = (v: bigint): string => formatValue(v, slot.field.kind);
  switch (p.kind) {
    case "exact":
      return f(p.value);
    case "prefix":
      return `${f(p.value)}/${p.len}`;
    case "ternary":
      return `${f(p.value)} &&& ${f(p.mask)}`;
    case "range":
      return `${f(p.lo)}..${f(p.hi)}`;
  }
}

function headerAction(
  r: RowSpec,
  attached: (network: string) => number,
  shared: () => number,
): { action: EntryAction; outLinks: number[]; text: string } {
  const a = r.action;
  switch (a.kind) {
    case "forward":
    case "receive":
    case "both":
      return { action: { name: a.kind }, outLinks: [], text: a.kind };
    case "out": {
      const data = new Uint8Array(a.outLinks.length * 2);
      // Read natively (little-endian) by wasm.
      a.outLinks.forEach((p, i) => {
        data[i * 2] = p & 0xff;
        data[i * 2 + 1] = p >>> 8;
      });
      // The first out-link also rides in `arg`: the common single out-link needs no second load.
      return {
        action: { name: "out", count: a.outLinks.length, arg: a.outLinks[0] ?? 0, data },
        outLinks: [...a.outLinks],
        text: `out ${a.outLinks.join(", ")}`,
      };
    }
    case "drop":
      return { action: { name: "drop" }, outLinks: [], text: "drop" };
    case "deliver":
      return { action: { name: "deliver" }, outLinks: [], text: "deliver" };
    case "shared-acquire":
    case "shared-forward":
      // Subduction: arg is the shared member of the other network on this machine.
      return {
        action: { name: a.kind, arg: shared() },
        outLinks: [],
        text:
          a.kind === "shared-acquire"
            ? "shared (to the overlay's shared member)"
            : "out shared (to the underlay's shared member)",
      };
    case "link":
      // ExternalLink: arg is the overlay member on this machine, arg2 the link it arrives on.
      return {
        action: { name: "external-link", arg: attached(a.network), arg2: a.ident },
        outLinks: [],
        text: `pop, to ${a.network} in ${a.ident}`,
      };
    case "physical":
    case "session":
    case "push":
      throw new Error(`${a.kind} is not an action of a header table`);
  }
}
