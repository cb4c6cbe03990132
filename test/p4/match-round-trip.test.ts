// A row's match and P4Runtime's field matches, both ways (src/p4/import.ts): importMatch then
// exportMatch gives back the canonical field matches written, for every match kind, with a
// don't-care field left out; and exportMatch leaves out what a row matches on any value.

import { describe, expect, it } from "vitest";
import type { DeviceTable } from "../../src/p4/device.js";
import { exportMatch, importMatch } from "../../src/p4/import.js";
import type { p4 } from "../../src/p4runtime/messages.js";
import type { MatchKind } from "../../src/wasm/abi.js";

/** A table of two keys: a 16-bit field in 2 bytes, and a 9-bit one in 2 (7 bits of padding above it). */
function table(kind: MatchKind): DeviceTable {
  const key = (name: string, bits: number, offset: number) => ({
    name,
    bits,
    kind,
    field: { name, kind, offset, len: 2 },
    expr: `meta.${name}`,
  });
  return {
    name: `t_${kind}`,
    table: { keyLen: 4, kind },
    keys: [key("a", 16, 0), key("b", 9, 2)],
  } as unknown as DeviceTable;
}
const NAMES = new Map([
  [1, "a"],
  [2, "b"],
]);
const b = (...bytes: number[]): Buffer => Buffer.from(bytes);

describe("importMatch, then exportMatch: the field matches written", () => {
  const cases: { kind: MatchKind; fields: p4.v1.FieldMatch[]; priority: number }[] = [
    {
      kind: "exact",
      fields: [
        { fieldId: 1, fieldMatchType: "exact", exact: { value: b(0x12, 0x34) } },
        { fieldId: 2, fieldMatchType: "exact", exact: { value: b(0x01, 0xff) } },
      ],
      priority: 0,
    },
    {
      kind: "exact",
      fields: [
        { fieldId: 1, fieldMatchType: "exact", exact: { value: b(0) } },
        { fieldId: 2, fieldMatchType: "exact", exact: { value: b(7) } },
      ],
      priority: 0,
    },
    {
      kind: "lpm",
      fields: [
        { fieldId: 1, fieldMatchType: "lpm", lpm: { value: b(0xab, 0x80), prefixLen: 9 } },
        { fieldId: 2, fieldMatchType: "lpm", lpm: { value: b(0x01, 0xf0), prefixLen: 5 } },
      ],
      priority: 0,
    },
    {
      kind: "lpm",
      fields: [{ fieldId: 2, fieldMatchType: "lpm", lpm: { value: b(0x01, 0xff), prefixLen: 9 } }],
      priority: 0,
    },
    {
      kind: "ternary",
      fields: [
        { fieldId: 1, fieldMatchType: "ternary", ternary: { value: b(0x10, 0x01), mask: b(0xf0, 0x0f) } },
        { fieldId: 2, fieldMatchType: "ternary", ternary: { value: b(0x01, 0x00), mask: b(0x01, 0x00) } },
      ],
      priority: 7,
    },
    {
      kind: "ternary",
      fields: [{ fieldId: 2, fieldMatchType: "ternary", ternary: { value: b(3), mask: b(3) } }],
      priority: 1,
    },
    {
      kind: "range",
      fields: [
        { fieldId: 1, fieldMatchType: "range", range: { low: b(0x10), high: b(0x20, 0x00) } },
        { fieldId: 2, fieldMatchType: "range", range: { low: b(0), high: b(0x01, 0xfe) } },
      ],
      priority: 3,
    },
    {
      kind: "range",
      fields: [{ fieldId: 1, fieldMatchType: "range", range: { low: b(1), high: b(0xff, 0xff) } }],
      priority: 2,
    },
    {
      kind: "optional",
      fields: [
        { fieldId: 1, fieldMatchType: "optional", optional: { value: b(0xbe, 0xef) } },
        { fieldId: 2, fieldMatchType: "optional", optional: { value: b(0) } },
      ],
      priority: 9,
    },
    {
      kind: "optional",
      fields: [{ fieldId: 2, fieldMatchType: "optional", optional: { value: b(0x01, 0x00) } }],
      priority: 4,
    },
    // Every field don't-care: nothing written, nothing read back.
    { kind: "ternary", fields: [], priority: 5 },
    { kind: "lpm", fields: [], priority: 0 },
    { kind: "range", fields: [], priority: 6 },
    { kind: "optional", fields: [], priority: 8 },
  ];
  it.each(cases.map((c) => ({ ...c, fieldIds: c.fields.map((f) => f.fieldId).join(",") || "none" })))(
    "$kind, fields $fieldIds",
    ({ kind, fields, priority }) => {
      const t = table(kind);
      const m = importMatch(t, fields, NAMES, priority);
      expect(m.priority).toBe(priority);
      expect(exportMatch(t, m)).toEqual(fields);
    },
  );
});

describe("exportMatch: what matches any value is left out", () => {
  const cases: { name: string; kind: MatchKind; value: number[]; mask: number[]; lo?: number[]; hi?: number[] }[] = [
    {
      name: "a ternary mask of 0 (value bits beside it ignored)",
      kind: "ternary",
      value: [1, 2, 3, 4],
      mask: [0, 0, 0, 0],
    },
    { name: "an LPM mask of 0", kind: "lpm", value: [0, 0, 0, 0], mask: [0, 0, 0, 0] },
    { name: "an optional mask of 0", kind: "optional", value: [9, 9, 0, 0], mask: [0, 0, 0, 0] },
    {
      name: "a range over every value of each field (padding bits aside)",
      kind: "range",
      value: [0, 0, 0, 0],
      mask: [0, 0, 0, 0],
      lo: [0, 0, 0, 0],
      hi: [0xff, 0xff, 0x01, 0xff],
    },
  ];
  it.each(cases)("$name", ({ kind, value, mask, lo, hi }) => {
    const m = {
      value: new Uint8Array(value),
      mask: new Uint8Array(mask),
      ...(lo !== undefined ? { lo: new Uint8Array(lo) } : {}),
      ...(hi !== undefined ? { hi: new Uint8Array(hi) } : {}),
      priority: 1,
    };
    expect(exportMatch(table(kind), m)).toEqual([]);
  });
});
