// Exact tables take the road their fields allow (assembly/tables/table.ts
// roadFor, the indexes in assembly/tables/indexes/): keyless, a direct index
// (an in-link, `self`, a session), one keyed word at any word of the key,
// several keyed words, or the tuple space; LPM tables a keyed index by prefix
// when their fields lie in two words, else the tuple space. The keyed slots carry the entry's action when it fits
// in a word, and a packet's lookup reads it there: these cases check, road by
// road, that what a lookup sees is the entry's action after every kind of
// change — insert, modify, a batch rolled back, delete, growth past the first
// allocation.

import { describe, expect, it } from "vitest";
import { DataPlane } from "../../src/wasm/module.js";
import {
  type EntryAction,
  type EntryMatch,
  type KeyField,
  type TableLayout,
  type TableWrite,
  Tables,
} from "../../src/wasm/tables.js";

interface Road {
  readonly road: string;
  readonly kind?: "lpm";
  readonly keyLen: number;
  /** Fields: (offset, len); for an LPM table the last is the LPM field, the others exact. */
  readonly fields: readonly (readonly [number, number])[];
  /** Field values of row k (one per field); distinct for distinct k. */
  readonly values: (k: number) => readonly number[];
}

/**
 * LPM rows: row k's address has its own first byte and a prefix of 8, 16, 24
 * or 32 bits (four groups), so the full address is row k's and no other's.
 */
const lpmAddress = (k: number): number => (((k + 1) << 24) | ((k * 0x10101) & 0xffffff)) >>> 0;
const prefixOf = (k: number): number => 8 * (1 + (k % 4));

const ROADS: readonly Road[] = [
  { road: "keyless", keyLen: 8, fields: [], values: () => [] },
  { road: "direct: an in-link", keyLen: 8, fields: [[0, 2]], values: (k) => [k] },
  // `self` and the top identifiers, small ones (indexed) and others above the index (hashed).
  {
    road: "direct: `self`, small and large identifiers",
    keyLen: 8,
    fields: [[0, 2]],
    values: (k) => [k < 4 ? 0xffff - k : k % 2 === 0 ? k : 2000 + k * 1000],
  },
  {
    road: "direct: a session (four bytes)",
    keyLen: 8,
    fields: [[0, 4]],
    values: (k) => [k * 7 + (k % 3 === 0 ? 100_000 : 0)],
  },
  { road: "one word: word 0", keyLen: 24, fields: [[2, 6]], values: (k) => [0x0200_0000_0000 + k * 0x1_0000] },
  { road: "one word: word 1 (a type)", keyLen: 24, fields: [[14, 2]], values: (k) => [0x0800 + k] },
  { road: "one word: word 2 (a VNI)", keyLen: 24, fields: [[16, 3]], values: (k) => [100 + k * 4099] },
  {
    road: "keyed: two words",
    keyLen: 24,
    fields: [
      [0, 2],
      [14, 2],
    ],
    values: (k) => [k % 3, 0x0800 + k],
  },
  {
    road: "keyed: three words",
    keyLen: 24,
    fields: [
      [6, 4],
      [16, 3],
    ],
    values: (k) => [0xc0000200 + k, 100 + (k % 5)],
  },
  {
    road: "hashed: past three words",
    keyLen: 32,
    fields: [
      [2, 4],
      [24, 4],
    ],
    values: (k) => [0x0a000000 + k, k % 7],
  },
  { road: "LPM keyed: one word", kind: "lpm", keyLen: 24, fields: [[2, 4]], values: (k) => [lpmAddress(k)] },
  {
    road: "LPM keyed: two words (an in-link and an IPv4 dst)",
    kind: "lpm",
    keyLen: 24,
    fields: [
      [0, 2],
      [6, 4],
    ],
    values: (k) => [k % 3, lpmAddress(k)],
  },
  {
    road: "LPM tuple space: past two words",
    kind: "lpm",
    keyLen: 24,
    fields: [
      [16, 2],
      [2, 4],
    ],
    values: (k) => [k % 5, lpmAddress(k)],
  },
];

function writeField(bytes: Uint8Array, offset: number, len: number, value: number): void {
  for (let i = len - 1, v = value; i >= 0; i--, v = Math.floor(v / 256)) bytes[offset + i] = v % 256;
}

function key(r: Road, k: number): Uint8Array {
  const bytes = new Uint8Array(r.keyLen);
  const values = r.values(k);
  r.fields.forEach(([offset, len], f) => writeField(bytes, offset, len, values[f] ?? 0));
  return bytes;
}

function match(r: Road, k: number): EntryMatch {
  const mask = new Uint8Array(r.keyLen);
  r.fields.forEach(([offset, len], f) => {
    const lpm = r.kind === "lpm" && f === r.fields.length - 1;
    for (let b = 0; b < len; b++)
      mask[offset + b] = lpm ? 0xff & ~(0xff >> Math.min(8, Math.max(0, prefixOf(k) - 8 * b))) : 0xff;
  });
  const value = key(r, k).map((byte, i) => byte & (mask[i] ?? 0));
  return { value, mask, priority: 0 };
}

function layout(r: Road): TableLayout {
  const fields: KeyField[] = r.fields.map(([offset, len], f) => ({
    name: `f${f}`,
    offset,
    len,
    kind: r.kind === "lpm" && f === r.fields.length - 1 ? "lpm" : "exact",
  }));
  return { id: 1, role: "forward", kind: r.kind ?? "exact", keyLen: r.keyLen, capacity: 256, fields };
}

// One out-link (fits the slot's word: its data repeats arg), several (data: read from the entry), drop, and a hand-over
// (arg: a member).
const outTo = (port: number): EntryAction => ({
  name: "out",
  count: 1,
  arg: port,
  data: Uint8Array.of(port & 0xff, port >> 8),
});
const outToMany = (...ports: number[]): EntryAction => ({
  name: "out",
  count: ports.length,
  arg: ports[0] ?? 0,
  data: Uint8Array.from(ports.flatMap((p) => [p & 0xff, p >> 8])),
});
const drop: EntryAction = { name: "drop" };
const shared = (member: number): EntryAction => ({ name: "shared-forward", arg: member });

/** What a lookup should see: the action as written (its data only for several out-links: one is `arg`). */
function expected(a: EntryAction): { name: string; count: number; arg: number; arg2: number; data: Uint8Array } {
  const data = a.name === "out" && (a.count ?? 0) > 1 ? (a.data ?? new Uint8Array(0)) : new Uint8Array(0);
  return { name: a.name, count: a.count ?? 0, arg: a.arg ?? 0, arg2: a.arg2 ?? 0, data };
}

describe.each(ROADS)("table road: $road", (r) => {
  const rows = r.fields.length === 0 ? 1 : 40;

  function setup(): { tables: Tables; t: TableLayout; actions: Map<number, EntryAction> } {
    const tables = new Tables(DataPlane.load());
    const t = layout(r);
    tables.create(t);
    return { tables, t, actions: new Map() };
  }

  function write(tables: Tables, writes: TableWrite[]): boolean {
    // As the compiler writes them: an out action's data lists its out-links, one or several.
    return tables.write(writes).ok;
  }

  function expectSeen(tables: Tables, t: TableLayout, actions: Map<number, EntryAction>): void {
    for (let k = 0; k < rows; k++) {
      const want = actions.get(k);
      const dataLen = want?.name === "out" && (want.count ?? 0) > 1 ? 2 * (want.count ?? 0) : 0;
      const seen = tables.lookupAction(t, key(r, k), dataLen);
      if (want === undefined) {
        expect(seen.row, `row ${k} should miss`).toBe(-1);
        continue;
      }
      expect(seen.row, `row ${k}`).toBeGreaterThanOrEqual(0);
      expect(seen.action, `row ${k}`).toEqual(expected(want));
      // The entry itself holds the same: the slot's copy is never ahead of or behind it.
      expect(tables.action(t, seen.row, dataLen)).toEqual(seen.action);
    }
  }

  const cycle = [outTo(3), outToMany(1, 2), drop, shared(70_000), outTo(65_535), shared(12)];
  const initial = (k: number): EntryAction => cycle[k % cycle.length] ?? drop;

  it("a lookup sees each row's action, past the first allocation (the index re-made as the table grows)", () => {
    const { tables, t, actions } = setup();
    for (let k = 0; k < rows; k++) {
      expect(write(tables, [{ op: "insert", table: t, match: match(r, k), action: initial(k) }])).toBe(true);
      actions.set(k, initial(k));
    }
    expectSeen(tables, t, actions);
  });

  it("after modify, a rolled-back modify, delete, a rolled-back delete and insert again", () => {
    const { tables, t, actions } = setup();
    const all: TableWrite[] = [];
    for (let k = 0; k < rows; k++) {
      all.push({ op: "insert", table: t, match: match(r, k), action: initial(k) });
      actions.set(k, initial(k));
    }
    expect(write(tables, all)).toBe(true);

    // Modify every row to the next action in the cycle: compact to not, and back.
    const modified = (k: number): EntryAction => cycle[(k + 1) % cycle.length] ?? drop;
    expect(
      write(
        tables,
        Array.from({ length: rows }, (_, k) => ({
          op: "modify" as const,
          table: t,
          match: match(r, k),
          action: modified(k),
        })),
      ),
    ).toBe(true);
    for (let k = 0; k < rows; k++) actions.set(k, modified(k));
    expectSeen(tables, t, actions);

    // A batch that modifies, then fails on a duplicate: every modify is undone.
    const failing: TableWrite[] = [
      ...Array.from({ length: rows }, (_, k) => ({
        op: "modify" as const,
        table: t,
        match: match(r, k),
        action: outTo(9),
      })),
      { op: "insert", table: t, match: match(r, 0), action: drop },
    ];
    expect(write(tables, failing)).toBe(false);
    expectSeen(tables, t, actions);

    // Delete every other row; a batch that deletes the rest, then fails, puts them back.
    const deleted = Array.from({ length: rows }, (_, k) => k).filter((k) => k % 2 === 1 || rows === 1);
    expect(
      write(
        tables,
        deleted.map((k) => ({ op: "delete" as const, table: t, match: match(r, k) })),
      ),
    ).toBe(true);
    for (const k of deleted) actions.delete(k);
    expectSeen(tables, t, actions);
    const kept = [...actions.keys()];
    if (kept.length > 0) {
      expect(
        write(tables, [
          ...kept.map((k) => ({ op: "delete" as const, table: t, match: match(r, k) })),
          { op: "delete", table: t, match: match(r, deleted[0] ?? 0) },
        ]),
      ).toBe(false);
      expectSeen(tables, t, actions);
    }

    // Insert the deleted rows again, with new actions.
    expect(
      write(
        tables,
        deleted.map((k) => ({ op: "insert" as const, table: t, match: match(r, k), action: outTo(100 + k) })),
      ),
    ).toBe(true);
    for (const k of deleted) actions.set(k, outTo(100 + k));
    expectSeen(tables, t, actions);
  });
});
