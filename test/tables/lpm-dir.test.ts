// The DIR-16-8-8 that answers an IPv4 LPM table's lookups once it holds
// keyed-prefix.ts DIR_FROM entries (assembly/tables/indexes/dir.ts), held to a
// plain longest-match scan written here: the edge cases as a table of cases,
// then seeded random prefixes (every length /0–/32, crowded into a few /16s so
// that they overlap) inserted, deleted and given new actions one write at a
// time, with lookups between.

import { describe, expect, it } from "vitest";
import { DataPlane } from "../../src/wasm/module.js";
import { type TableLayout, type TableWrite, Tables } from "../../src/wasm/tables.js";

/** The key: in-link bytes left zero (no field there), the IPv4 destination at byte 2, padded to a word. */
const KEY_LEN = 8;
const DST_AT = 2;
/** Entries from which the table has its DIR (keyed-prefix.ts DIR_FROM): a filler of /32s far from the cases' addresses
 * takes it there. */
const DIR_FROM = 1024;
const FILLER = 0xac100000; // 172.16.0.0: /32s at 172.16.0.0 … 172.16.3.255

type Prefix = readonly [addr: number, len: number];

const maskOf = (len: number): number => (len === 0 ? 0 : (~0 << (32 - len)) >>> 0);

function keyOf(addr: number): Uint8Array {
  const k = new Uint8Array(KEY_LEN);
  new DataView(k.buffer).setUint32(DST_AT, addr >>> 0);
  return k;
}

/** The id (the action's arg) of the longest prefix in `live` holding `addr`, or −1. */
function reference(live: ReadonlyMap<string, { p: Prefix; id: number }>, addr: number): number {
  let best = -1;
  let bestLen = -1;
  for (const { p, id } of live.values()) {
    if ((addr & maskOf(p[1])) >>> 0 === p[0] && p[1] > bestLen) {
      best = id;
      bestLen = p[1];
    }
  }
  return best;
}

/** A data plane with one IPv4 LPM table, the filler in it; its live prefixes by "addr/len", with the id each
 * carries. */
class Lpm {
  readonly dp = DataPlane.load();
  readonly tables = new Tables(this.dp);
  readonly table: TableLayout = {
    id: 0,
    role: "forward",
    kind: "lpm",
    keyLen: KEY_LEN,
    capacity: 4 * DIR_FROM,
    fields: [{ name: "dst", offset: DST_AT, len: 4, kind: "lpm" }],
  };
  readonly live = new Map<string, { p: Prefix; id: number }>();

  constructor() {
    this.tables.create(this.table);
    const filler = Array.from({ length: DIR_FROM }, (_, i): [Prefix, number] => [[FILLER + i, 32], 60000 + i]);
    const r = this.tables.write(filler.map(([p, id]) => this.#writeOf("insert", p, id)));
    if (!r.ok) throw new Error(`filler: ${r.error}`);
    for (const [p, id] of filler) this.live.set(`${p[0]}/${p[1]}`, { p, id });
  }

  #writeOf(op: TableWrite["op"], [addr, len]: Prefix, id: number): TableWrite {
    const match = { value: keyOf(addr), mask: keyOf(maskOf(len)), priority: 0 };
    return op === "delete"
      ? { op, table: this.table, match }
      : { op, table: this.table, match, action: { name: "out", count: 1, arg: id } };
  }

  #write(op: TableWrite["op"], p: Prefix, id: number): void {
    const r = this.tables.write([this.#writeOf(op, p, id)]);
    if (!r.ok) throw new Error(`${op} ${p[0]}/${p[1]}: ${r.error}`);
  }
  insert(p: Prefix, id: number): void {
    this.#write("insert", p, id);
    this.live.set(`${p[0]}/${p[1]}`, { p, id });
  }
  modify(p: Prefix, id: number): void {
    this.#write("modify", p, id);
    this.live.set(`${p[0]}/${p[1]}`, { p, id });
  }
  delete(p: Prefix): void {
    this.#write("delete", p, 0);
    this.live.delete(`${p[0]}/${p[1]}`);
  }
  /** The id the data plane's lookup finds for `addr` (its action's arg), or −1. */
  find(addr: number): number {
    const { row, action } = this.tables.lookupAction(this.table, keyOf(addr));
    return row < 0 ? -1 : (action?.arg ?? -2);
  }
  dirBytes(): number {
    return this.dp.exports.tableDirBytes(this.table.id);
  }
}

const ip = (s: string): number => s.split(".").reduce((a, b) => a * 256 + Number(b), 0);
const pfx = (s: string): Prefix => {
  const [a = "", l = "0"] = s.split("/");
  return [(ip(a) & maskOf(Number(l))) >>> 0, Number(l)];
};

interface Case {
  name: string;
  /** "+p" inserts p (its id its place in the list), "-p" deletes it. */
  writes: string[];
  /** address → the id of the prefix that wins, or −1. */
  want: Record<string, number>;
}

const cases: Case[] = [
  {
    name: "/0 holds everything",
    writes: ["+0.0.0.0/0"],
    want: { "0.0.0.0": 0, "255.255.255.255": 0, "172.16.0.1": 60001 },
  },
  { name: "/0 deleted: misses", writes: ["+0.0.0.0/0", "-0.0.0.0/0"], want: { "1.2.3.4": -1, "0.0.0.0": -1 } },
  {
    name: "/32 inside a /24 inside /0",
    writes: ["+0.0.0.0/0", "+10.1.1.0/24", "+10.1.1.7/32"],
    want: { "10.1.1.7": 2, "10.1.1.6": 1, "10.1.1.8": 1, "10.1.2.7": 0 },
  },
  {
    name: "/8 /16 /24 and their edges",
    writes: ["+10.0.0.0/8", "+10.1.0.0/16", "+10.1.1.0/24"],
    want: {
      "9.255.255.255": -1,
      "10.0.0.0": 0,
      "10.1.0.255": 1,
      "10.1.1.0": 2,
      "10.1.1.255": 2,
      "10.1.2.0": 1,
      "10.1.255.255": 1,
      "10.2.0.0": 0,
      "10.255.255.255": 0,
      "11.0.0.0": -1,
    },
  },
  {
    name: "/15 /17 /23 /25 across the levels",
    writes: ["+10.0.0.0/15", "+10.1.128.0/17", "+10.1.130.0/23", "+10.1.131.128/25"],
    want: {
      "10.0.5.5": 0,
      "10.1.127.255": 0,
      "10.1.128.0": 1,
      "10.1.130.9": 2,
      "10.1.131.127": 2,
      "10.1.131.128": 3,
      "10.2.0.0": -1,
    },
  },
  {
    name: "the longer prefix deleted: the covering one takes its place again",
    writes: ["+10.0.0.0/8", "+10.1.1.0/24", "+10.1.1.128/25", "-10.1.1.0/24", "-10.1.1.128/25"],
    want: { "10.1.1.1": 0, "10.1.1.200": 0 },
  },
  {
    name: "a covering prefix deleted: the longer ones stay, the rest falls to the next shorter",
    writes: ["+0.0.0.0/0", "+10.0.0.0/8", "+10.1.0.0/16", "+10.1.1.0/24", "+10.1.1.1/32", "-10.1.0.0/16"],
    want: { "10.1.1.1": 4, "10.1.1.2": 3, "10.1.2.0": 1, "10.9.0.0": 1, "11.0.0.0": 0 },
  },
  {
    name: "a shorter prefix inserted after the longer ones under it",
    writes: ["+10.1.1.0/24", "+10.1.1.64/26", "+10.0.0.0/8"],
    want: { "10.1.1.1": 0, "10.1.1.65": 1, "10.1.2.1": 2, "10.200.0.0": 2 },
  },
  {
    name: "everything under a /16 deleted: misses, and the filler still found",
    writes: ["+10.1.0.0/16", "+10.1.1.0/24", "+10.1.1.1/32", "-10.1.1.1/32", "-10.1.1.0/24", "-10.1.0.0/16"],
    want: { "10.1.1.1": -1, "10.1.0.0": -1, "172.16.3.255": 61023, "172.16.4.0": -1 },
  },
];

describe("an IPv4 LPM table's DIR-16-8-8", () => {
  it.each(cases)("$name", ({ writes, want }) => {
    const t = new Lpm();
    expect(t.dirBytes()).toBeGreaterThan(0);
    writes.forEach((w, id) => (w.startsWith("+") ? t.insert(pfx(w.slice(1)), id) : t.delete(pfx(w.slice(1)))));
    for (const [addr, id] of Object.entries(want)) {
      expect({ addr, found: t.find(ip(addr)) }).toEqual({ addr, found: id });
      // The reference agrees with the case as written (ids are the writes' places).
      expect(reference(t.live, ip(addr))).toBe(id);
    }
  });

  it("agrees with a longest-match scan over seeded inserts, deletes and new actions", () => {
    let s = 2024;
    const next = (): number => {
      s ^= s << 13;
      s ^= s >>> 17;
      s ^= s << 5;
      return (s >>>= 0);
    };
    // Addresses crowded into three /16s (and, for short prefixes, anywhere their bits say).
    const bases = [ip("10.0.0.0"), ip("10.1.0.0"), ip("192.168.0.0")];
    const address = (): number => ((bases[next() % bases.length] ?? 0) | (next() & 0xffff)) >>> 0;
    const t = new Lpm();
    let id = 0;
    let lookups = 0;
    for (let op = 0; op < 400; op++) {
      const r = next() % 10;
      const mine = [...t.live.values()].filter((v) => v.id < 60000); // not the filler
      const chosen = mine[next() % Math.max(1, mine.length)]?.p;
      if (r < 3 && chosen !== undefined) t.delete(chosen);
      else if (r < 4 && chosen !== undefined) t.modify(chosen, id++ % 60000);
      else {
        const len = next() % 33;
        const p: Prefix = [(address() & maskOf(len)) >>> 0, len];
        if (!t.live.has(`${p[0]}/${p[1]}`)) t.insert(p, id++ % 60000);
      }
      if (op % 50 === 49) {
        for (let k = 0; k < 300; k++, lookups++) {
          const a = k & 1 ? next() : address();
          expect({ a, found: t.find(a) }).toEqual({ a, found: reference(t.live, a) });
        }
      }
    }
    expect(lookups).toBe(2400);
    expect(t.dirBytes()).toBeGreaterThan(0);
  });
});
