// One suite over every match kind: the P4Runtime tie-breaks, the write errors,
// all-or-nothing batches, and lookups checked against a brute-force matcher.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { MatchKind } from "../../src/wasm/abi.js";
import { DataPlane } from "../../src/wasm/module.js";
import {
  type EntryAction,
  type EntryMatch,
  type KeyField,
  type TableLayout,
  type TableWrite,
  Tables,
  type WriteResult,
} from "../../src/wasm/tables.js";

// A key of two fields: `in` (2 bytes) and `addr` (4 bytes), padded to 8.
const KEY_LEN = 8;
const IN = { offset: 0, len: 2 };
const ADDR = { offset: 2, len: 4 };

function layout(id: number, kind: MatchKind, capacity = 64): TableLayout {
  const addrKind: MatchKind = kind === "optional" ? "optional" : kind;
  const inKind: MatchKind = kind === "exact" || kind === "lpm" ? "exact" : kind === "range" ? "range" : kind;
  const fields: KeyField[] = [
    { name: "in", ...IN, kind: inKind },
    { name: "addr", ...ADDR, kind: addrKind },
  ];
  return { id, role: "forward", kind, keyLen: KEY_LEN, capacity, fields };
}

function key(inLink: number, addr: number): Uint8Array {
  const k = new Uint8Array(KEY_LEN);
  const v = new DataView(k.buffer);
  v.setUint16(IN.offset, inLink);
  v.setUint32(ADDR.offset, addr >>> 0);
  return k;
}

/** value/mask from per-field (value, mask) pairs; masks as numbers. */
function ternaryMatch(inV: number, inM: number, addrV: number, addrM: number, priority = 0): EntryMatch {
  return { value: key(inV & inM, addrV & addrM), mask: key(inM, addrM), priority };
}
const exactMatch = (inV: number, addr: number): EntryMatch => ternaryMatch(inV, 0xffff, addr, 0xffffffff);
const prefixMask = (len: number): number => (len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0);
const lpmMatch = (inV: number, addr: number, len: number): EntryMatch =>
  ternaryMatch(inV, 0xffff, addr, prefixMask(len));
function rangeMatch(inLo: number, inHi: number, addrLo: number, addrHi: number, priority: number): EntryMatch {
  return { value: key(0, 0), mask: key(0, 0), lo: key(inLo, addrLo), hi: key(inHi, addrHi), priority };
}

/** An `out` action as the compiler writes it: the ports as little-endian u16 data, the first also in `arg`. */
const out = (...ports: number[]): EntryAction => ({
  name: "out",
  count: ports.length,
  arg: ports[0] ?? 0,
  data: Uint8Array.from(ports.flatMap((p) => [p & 0xff, p >> 8])),
});

/** An action as `Tables.action` reads it back (data: the bytes written, none for no data). */
const stored = (a: EntryAction) => ({
  name: a.name,
  count: a.count ?? 0,
  arg: a.arg ?? 0,
  arg2: a.arg2 ?? 0,
  data: a.data ?? new Uint8Array(0),
});

function setup(kind: MatchKind, capacity = 64): { tables: Tables; t: TableLayout } {
  const tables = new Tables(DataPlane.load());
  const t = layout(1, kind, capacity);
  tables.create(t);
  return { tables, t };
}

describe.each<{
  kind: MatchKind;
  a: EntryMatch;
  b: EntryMatch;
  hitsA: Uint8Array;
  missesAll: Uint8Array;
  badMask: EntryMatch;
}>([
  {
    kind: "exact",
    a: exactMatch(1, 0x0a000001),
    b: exactMatch(1, 0x0a000002),
    hitsA: key(1, 0x0a000001),
    missesAll: key(2, 0x0a000001),
    badMask: ternaryMatch(1, 0xffff, 0x0a000000, 0xffffff00),
  },
  {
    kind: "lpm",
    a: lpmMatch(1, 0x0a000000, 8),
    b: lpmMatch(1, 0x0b000000, 8),
    hitsA: key(1, 0x0a0b0c0d),
    missesAll: key(1, 0x0c000000),
    badMask: ternaryMatch(1, 0xffff, 0x0a000000, 0xff00ff00),
  },
  {
    kind: "ternary",
    a: ternaryMatch(1, 0xffff, 0x0a000000, 0xff000000, 10),
    b: ternaryMatch(0, 0, 0x00000001, 0x000000ff, 5),
    hitsA: key(1, 0x0a000002),
    missesAll: key(2, 0x0b000002),
    badMask: { value: key(1, 0x0a000001), mask: key(0xffff, 0xff000000), priority: 1 }, // value bits outside the mask
  },
  {
    kind: "range",
    a: rangeMatch(1, 1, 100, 200, 10),
    b: rangeMatch(0, 0xffff, 300, 400, 5),
    hitsA: key(1, 150),
    missesAll: key(1, 250),
    badMask: rangeMatch(1, 1, 200, 100, 1), // lo > hi
  },
  {
    kind: "optional",
    a: ternaryMatch(1, 0xffff, 0x0a000001, 0xffffffff, 10),
    b: ternaryMatch(0, 0, 0x0a000002, 0xffffffff, 5),
    hitsA: key(1, 0x0a000001),
    missesAll: key(3, 0x0a000003),
    badMask: ternaryMatch(1, 0xffff, 0x0a000000, 0xff000000, 1), // partial mask on an optional field
  },
])("$kind table", ({ kind, a, b, hitsA, missesAll, badMask }) => {
  it("finds an inserted entry and counts its hits", () => {
    const { tables, t } = setup(kind);
    const r = tables.write([
      { op: "insert", table: t, match: a, action: out(1) },
      { op: "insert", table: t, match: b, action: out(2) },
    ]);
    expect(r).toEqual({ ok: true, entries: [0, 1] });
    expect(tables.lookup(t, hitsA)).toBe(0);
    expect(tables.lookup(t, hitsA)).toBe(0);
    expect(tables.lookup(t, missesAll)).toBe(-1);
    expect(Array.from(tables.hits(t).subarray(0, 2))).toEqual([2, 0]);
  });

  it("rejects a duplicate with DuplicateEntry", () => {
    const { tables, t } = setup(kind);
    tables.write([{ op: "insert", table: t, match: a, action: out(1) }]);
    expect(tables.write([{ op: "insert", table: t, match: a, action: out(2) }])).toEqual({
      ok: false,
      index: 0,
      error: "DuplicateEntry",
    });
  });

  it("rejects a malformed match with BadMatchKey", () => {
    const { tables, t } = setup(kind);
    expect(tables.write([{ op: "insert", table: t, match: badMask, action: out(1) }])).toEqual({
      ok: false,
      index: 0,
      error: "BadMatchKey",
    });
  });

  it("rejects an action the role cannot hold with BadAction", () => {
    const { tables, t } = setup(kind);
    expect(tables.write([{ op: "insert", table: t, match: a, action: { name: "deliver" } }])).toEqual({
      ok: false,
      index: 0,
      error: "BadAction",
    });
  });

  it("is full at its declared capacity", () => {
    const { tables, t } = setup(kind, 1);
    expect(tables.write([{ op: "insert", table: t, match: a, action: out(1) }]).ok).toBe(true);
    expect(tables.write([{ op: "insert", table: t, match: b, action: out(1) }])).toEqual({
      ok: false,
      index: 0,
      error: "TableFull",
    });
  });

  it("deletes by key; NotFound when absent", () => {
    const { tables, t } = setup(kind);
    tables.write([{ op: "insert", table: t, match: a, action: out(1) }]);
    expect(tables.write([{ op: "delete", table: t, match: a }]).ok).toBe(true);
    expect(tables.lookup(t, hitsA)).toBe(-1);
    expect(tables.write([{ op: "delete", table: t, match: a }])).toEqual({ ok: false, index: 0, error: "NotFound" });
  });

  // Entry 0 holds `a` → out(1) before each batch; `after` is entry 0's action read back.
  const modify = (action: EntryAction): Omit<TableWrite, "table"> => ({ op: "modify", match: a, action });
  const bad: Omit<TableWrite, "table"> = { op: "insert", match: badMask, action: out(3) };
  it.each<{ name: string; writes: Omit<TableWrite, "table">[]; result: WriteResult; after: EntryAction }>([
    {
      name: "replaces the ports (count, arg, data)",
      writes: [modify(out(7, 8, 9))],
      result: { ok: true, entries: [0] },
      after: out(7, 8, 9),
    },
    {
      name: "replaces the code and both arguments, dropping the data",
      writes: [modify({ name: "shared-forward", arg: 5, arg2: 6 })],
      result: { ok: true, entries: [0] },
      after: { name: "shared-forward", arg: 5, arg2: 6 },
    },
    {
      name: "replaces a dataless action with data",
      writes: [modify({ name: "drop" }), modify(out(4, 2))],
      result: { ok: true, entries: [0, 0] },
      after: out(4, 2),
    },
    {
      name: "of an absent entry fails with NotFound",
      writes: [{ op: "modify", match: b, action: out(9) }],
      result: { ok: false, index: 0, error: "NotFound" },
      after: out(1),
    },
    {
      name: "to an action the role cannot hold fails with BadAction",
      writes: [modify({ name: "deliver" })],
      result: { ok: false, index: 0, error: "BadAction" },
      after: out(1),
    },
    {
      name: "is undone when a later write fails",
      writes: [modify(out(7, 8)), bad],
      result: { ok: false, index: 1, error: "BadMatchKey" },
      after: out(1),
    },
    {
      name: "twice is undone to the first action when a later write fails",
      writes: [modify({ name: "drop" }), modify(out(7, 8)), bad],
      result: { ok: false, index: 2, error: "BadMatchKey" },
      after: out(1),
    },
  ])("MODIFY $name", ({ writes, result, after }) => {
    const { tables, t } = setup(kind);
    tables.write([{ op: "insert", table: t, match: a, action: out(1) }]);
    expect(tables.write(writes.map((w) => ({ ...w, table: t })))).toEqual(result);
    expect(tables.action(t, 0, after.data?.length ?? 0)).toEqual(stored(after));
    // The key is untouched: the same one entry, still found by it.
    expect(tables.count(t)).toBe(1);
    expect(tables.lookup(t, hitsA)).toBe(0);
  });

  it("applies a batch all or nothing", () => {
    const { tables, t } = setup(kind);
    tables.write([{ op: "insert", table: t, match: a, action: out(1) }]);
    const r = tables.write([
      { op: "insert", table: t, match: b, action: out(2) },
      { op: "delete", table: t, match: a },
      { op: "insert", table: t, match: badMask, action: out(3) },
    ]);
    expect(r).toEqual({ ok: false, index: 2, error: "BadMatchKey" });
    // Nothing changed: a is still entry 0, b is absent, and the count is 1.
    expect(tables.count(t)).toBe(1);
    expect(tables.lookup(t, hitsA)).toBe(0);
    expect(tables.action(t, 0)).toMatchObject({ name: "out" });
    expect(tables.write([{ op: "insert", table: t, match: b, action: out(2) }])).toEqual({ ok: true, entries: [1] });
  });
});

describe("tie-breaks", () => {
  it("LPM: the longest prefix wins, whatever the insertion order", () => {
    const { tables, t } = setup("lpm");
    tables.write([
      { op: "insert", table: t, match: lpmMatch(1, 0x0a000000, 8), action: out(1) },
      { op: "insert", table: t, match: lpmMatch(1, 0x0a010100, 24), action: out(3) },
      { op: "insert", table: t, match: lpmMatch(1, 0x0a010000, 16), action: out(2) },
      { op: "insert", table: t, match: lpmMatch(1, 0, 0), action: out(0) },
    ]);
    expect(tables.lookup(t, key(1, 0x0a010101))).toBe(1);
    expect(tables.lookup(t, key(1, 0x0a010201))).toBe(2);
    expect(tables.lookup(t, key(1, 0x0a020201))).toBe(0);
    expect(tables.lookup(t, key(1, 0x0b000000))).toBe(3);
  });

  it.each<MatchKind>(["ternary", "optional", "range"])(
    "%s: the highest priority wins; then the smaller entry",
    (kind) => {
      const { tables, t } = setup(kind);
      const wide = kind === "range" ? rangeMatch(0, 0xffff, 0, 0xffffffff, 1) : ternaryMatch(0, 0, 0, 0, 1);
      const narrow = kind === "range" ? rangeMatch(1, 1, 5, 5, 9) : ternaryMatch(1, 0xffff, 5, 0xffffffff, 9);
      const wideToo = kind === "range" ? rangeMatch(0, 0xffff, 0, 0xfffffffe, 1) : ternaryMatch(1, 0xffff, 0, 0, 1);
      expect(
        tables.write([
          { op: "insert", table: t, match: wide, action: out(1) },
          { op: "insert", table: t, match: narrow, action: out(2) },
          { op: "insert", table: t, match: wideToo, action: out(3) },
        ]).ok,
      ).toBe(true);
      expect(tables.lookup(t, key(1, 5))).toBe(1);
      expect(tables.lookup(t, key(1, 6))).toBe(0); // entries 0 and 2 tie at priority 1
    },
  );
});

// ── Lookups against brute force ───────────────────────────────────────────

interface RefEntry {
  match: EntryMatch;
  index: number;
}

const bytesMatch = (k: Uint8Array, m: EntryMatch): boolean =>
  k.every((b, i) => (b & (m.mask[i] ?? 0)) === (m.value[i] ?? 0));
const inRange = (k: Uint8Array, m: EntryMatch, f: { offset: number; len: number }): boolean => {
  const n = (a: Uint8Array | undefined): bigint =>
    a === undefined ? 0n : BigInt(`0x${Buffer.from(a.subarray(f.offset, f.offset + f.len)).toString("hex")}`);
  const v = n(k);
  return n(m.lo) <= v && v <= n(m.hi);
};
const popcount = (a: Uint8Array): number => a.reduce((n, b) => n + b.toString(2).replaceAll("0", "").length, 0);

function reference(kind: MatchKind, entries: readonly RefEntry[], k: Uint8Array): number {
  const matching = entries.filter(({ match }) =>
    kind === "range" ? inRange(k, match, IN) && inRange(k, match, ADDR) : bytesMatch(k, match),
  );
  const rank = (e: RefEntry): number =>
    kind === "lpm" ? popcount(e.match.mask) : kind === "exact" ? 0 : e.match.priority;
  matching.sort((x, y) => rank(y) - rank(x) || x.index - y.index);
  return matching[0]?.index ?? -1;
}

const small = fc.integer({ min: 0, max: 3 });
const addr = fc.integer({ min: 0, max: 15 }).map((n) => (n * 0x11111111) >>> 0);

function entryArb(kind: MatchKind): fc.Arbitrary<EntryMatch> {
  const prio = fc.integer({ min: 0, max: 5 });
  switch (kind) {
    case "exact":
      return fc.tuple(small, addr).map(([i, a]) => exactMatch(i, a));
    case "lpm":
      return fc.tuple(small, addr, fc.integer({ min: 0, max: 32 })).map(([i, a, l]) => lpmMatch(i, a, l));
    case "ternary":
      return fc
        .tuple(small, fc.constantFrom(0, 0xffff), addr, fc.constantFrom(0, 0xf0000000, 0x0000000f, 0xffffffff), prio)
        .map(([i, im, a, am, p]) => ternaryMatch(i, im, a, am, p));
    case "optional":
      return fc
        .tuple(small, fc.constantFrom(0, 0xffff), addr, fc.constantFrom(0, 0xffffffff), prio)
        .map(([i, im, a, am, p]) => ternaryMatch(i, im, a, am, p));
    case "range":
      return fc
        .tuple(small, small, addr, addr, prio)
        .map(([i1, i2, a1, a2, p]) =>
          rangeMatch(Math.min(i1, i2), Math.max(i1, i2), Math.min(a1, a2), Math.max(a1, a2), p),
        );
  }
}

describe.each<MatchKind>(["exact", "lpm", "ternary", "range", "optional"])(
  "%s lookups agree with brute force",
  (kind) => {
    it("on random tables, with inserts and deletes", () => {
      fc.assert(
        fc.property(
          fc.array(entryArb(kind), { maxLength: 24 }),
          fc.array(fc.tuple(small, addr), { minLength: 1, maxLength: 16 }),
          fc.array(fc.nat(), { maxLength: 6 }),
          (entries, keys, deletes) => {
            const { tables, t } = setup(kind);
            const live: RefEntry[] = [];
            for (const match of entries) {
              const r = tables.write([{ op: "insert", table: t, match, action: out(1) }]);
              if (r.ok) live.push({ match, index: r.entries[0] ?? -1 });
              else expect(r.error).toBe("DuplicateEntry");
            }
            for (const d of deletes) {
              if (live.length === 0) break;
              const [gone] = live.splice(d % live.length, 1);
              if (gone !== undefined)
                expect(tables.write([{ op: "delete", table: t, match: gone.match }]).ok).toBe(true);
            }
            for (const [i, a] of keys) {
              const k = key(i, a);
              expect(tables.lookup(t, k)).toBe(reference(kind, live, k));
            }
          },
        ),
        { numRuns: 150 },
      );
    });
  },
);

describe("hashing", () => {
  // Keys that differ only in their last bytes (MACs, host addresses) must still spread
  // over the slots: a weak hash keeps such keys together and every probe walks a chain.
  it.each([
    { name: "addresses varying in the low byte", addr: (i: number) => 0x0a000000 + i },
    { name: "addresses varying in the high bits", addr: (i: number) => (i << 22) >>> 0 },
    { name: "sequential addresses", addr: (i: number) => i },
  ])("$name spread over the index", ({ addr: at }) => {
    const dp = DataPlane.load();
    const tables = new Tables(dp);
    const t = layout(1, "exact", 4096);
    tables.create(t);
    const writes = Array.from({ length: 4096 }, (_, i) => ({
      op: "insert" as const,
      table: t,
      match: exactMatch(i & 3, at(i >> 2)),
      action: out(1),
    }));
    expect(tables.write(writes).ok).toBe(true);
    expect(dp.exports.tableProbeDistance(t.id)).toBeLessThan(1.5);
  });

  // A MAC's last bytes sit at the top of a little-endian key word (key bytes 6 and 7): the
  // bench's 1,024 MAC rows once probed 11.7 slots past home on average.
  it.each([
    { name: "values varying in the key's last bytes (exact, keyed index)", kind: "exact" as const },
    { name: "values varying in the key's last bytes (ternary, tuple space)", kind: "ternary" as const },
    { name: "values varying in the key's last bytes (LPM, keyed index)", kind: "lpm" as const },
  ])("$name spread over the index", ({ kind }) => {
    const dp = DataPlane.load();
    const tables = new Tables(dp);
    const t: TableLayout = {
      id: 1,
      role: "forward",
      kind,
      keyLen: KEY_LEN,
      capacity: 1024,
      fields: [{ name: "tail", offset: 4, len: 4, kind }],
    };
    tables.create(t);
    const match = (i: number): EntryMatch => {
      const value = new Uint8Array(KEY_LEN);
      new DataView(value.buffer).setUint32(4, 0x02000000 + i);
      return { value, mask: Uint8Array.from([0, 0, 0, 0, 255, 255, 255, 255]), priority: 1 };
    };
    expect(
      tables.write(
        Array.from({ length: 1024 }, (_, i) => ({
          op: "insert" as const,
          table: t,
          match: match(i + 1),
          action: out(1),
        })),
      ).ok,
    ).toBe(true);
    expect(dp.exports.tableProbeDistance(t.id)).toBeLessThan(1.5);
  });
});
