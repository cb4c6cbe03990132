// What an IPv4 LPM lookup costs as the table grows: `npm run bench:lpm [-- --json]`.
// For 1 k, 64 k and 1 M prefixes (seeded, lengths spread as in a routing table:
// most /24, the rest /8–/32), one LPM table on an IPv4 destination is filled
// through the table writes strata uses, and a million addresses (half inside
// a prefix, half anywhere) are looked up in wasm as a packet's lookup does
// (assembly/index.ts tableLookupMany: no hit counted, no JavaScript per
// lookup). Figures: ns per lookup by CPU time (process.cpuUsage), median of
// rounds; what a write costs, by CPU time too (the table writes as a controller
// sends them, WRITES_AT_ONCE a call: each insert of the fill, then DELETES of the
// prefixes deleted); the linear memory the table took (its growth, in pages:
// the allocator grows memory by doubling, so this is coarse) and the bytes of
// the DIR-16-8-8 that answers the lookups of an IPv4 table from
// keyed-prefix.ts DIR_FROM entries on (tables/indexes/dir.ts; below that,
// one hashed probe per distinct prefix length, longest first).

import { DataPlane } from "../src/wasm/module.js";
import { type TableLayout, Tables, type TableWrite } from "../src/wasm/tables.js";
import { readFlags, refuse } from "./args.js";
import { cpuNs } from "./bound.js";
import { median } from "./stats.js";
import { isScript } from "./script.js";

/** The key: the in-link (2 bytes), the IPv4 destination (4), padded to a word. */
const KEY_LEN = 8;
const DST_AT = 2;
const LOOKUPS = 1 << 20;
const ROUNDS = 5;
const WRITES_AT_ONCE = 4096;
const DELETES = 4096;

export interface LpmResult {
  prefixes: number;
  /** Distinct prefix lengths in the table: the probes a miss makes. */
  lengths: number;
  nsPerLookup: number;
  /** Of the lookups, how many found a row. */
  found: number;
  memoryBytes: number;
  /** Bytes of the table's DIR (0: none). */
  dirBytes: number;
  /** CPU ns a write: an insert (the fill), a delete. */
  insertNs: number;
  deleteNs: number;
}

/** A seeded generator of u32s. */
function generator(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>>= 0);
  };
}

/** A prefix length as a routing table spreads them: 60 % /24, 20 % /16–/23, 10 % /8–/15, 10 % /25–/32. */
function length(r: number): number {
  const p = r % 100;
  const k = r >>> 8;
  return p < 60 ? 24 : p < 80 ? 16 + (k % 8) : p < 90 ? 8 + (k % 8) : 25 + (k % 8);
}

/** `n` distinct prefixes (address, length), the address masked to its length. */
export function prefixes(n: number, seed = 7): [number, number][] {
  const next = generator(seed);
  const seen = new Set<string>();
  const out: [number, number][] = [];
  while (out.length < n) {
    const len = length(next());
    const addr = (next() & (len === 0 ? 0 : ~0 << (32 - len))) >>> 0;
    const k = `${addr}/${len}`;
    if (seen.has(k)) continue;
    seen.add(k);
    out.push([addr, len]);
  }
  return out;
}

/** A key with `addr` as its destination. */
export function bytesOf(addr: number): Uint8Array {
  const k = new Uint8Array(KEY_LEN);
  new DataView(k.buffer).setUint32(DST_AT, addr);
  return k;
}

/** The write of prefix `addr`/`len` (its action for an insert from `row`). */
function writeOf(table: TableLayout, op: "insert" | "delete", [addr, len]: [number, number], row: number): TableWrite {
  const match = { value: bytesOf(addr), mask: bytesOf(len === 0 ? 0 : (~0 << (32 - len)) >>> 0), priority: 0 };
  return op === "insert"
    ? { op, table, match, action: { name: "out", count: 1, arg: row & 0xffff } }
    : { op, table, match };
}

/** Applies `writes`, WRITES_AT_ONCE a call. */
function apply(tables: Tables, writes: readonly TableWrite[]): void {
  for (let at = 0; at < writes.length; at += WRITES_AT_ONCE) {
    const r = tables.write(writes.slice(at, at + WRITES_AT_ONCE));
    if (!r.ok) throw new Error(`bench:lpm: write ${at + r.index} refused: ${r.error}`);
  }
}

/** Fills an LPM table with `list`; returns its layout. */
function fill(dp: DataPlane, list: readonly [number, number][]): TableLayout {
  const tables = new Tables(dp);
  const table: TableLayout = {
    id: 0,
    role: "forward",
    kind: "lpm",
    keyLen: KEY_LEN,
    capacity: list.length,
    fields: [{ name: "dst", offset: DST_AT, len: 4, kind: "lpm" }],
  };
  tables.create(table);
  apply(
    tables,
    list.map((p, i) => writeOf(table, "insert", p, i)),
  );
  return table;
}

/** A data plane with an LPM table of `n` prefixes, and `lookups` keys at `keys` in its memory (their addresses too). */
export interface LpmSetup {
  readonly dp: DataPlane;
  readonly table: TableLayout;
  readonly list: readonly [number, number][];
  readonly keys: number;
  readonly addresses: Uint32Array;
  readonly memoryBytes: number;
  readonly insertNs: number;
}

export function setUpLpm(n: number, lookups: number): LpmSetup {
  const dp = DataPlane.load();
  const list = prefixes(n);
  const before = dp.mem.u8.buffer.byteLength;
  const t0 = cpuNs();
  const table = fill(dp, list);
  const insertNs = (cpuNs() - t0) / n;
  const memoryBytes = dp.mem.u8.buffer.byteLength - before;
  // Half the addresses inside a prefix of the table (any of its addresses), half anywhere.
  const next = generator(11);
  const addresses = new Uint32Array(lookups);
  for (let i = 0; i < lookups; i++) {
    const [addr, len] = list[next() % list.length] ?? [0, 0];
    addresses[i] = i & 1 ? next() : len === 32 ? addr : (addr | (next() & (~0 >>> len))) >>> 0;
  }
  const keys = dp.alloc(lookups * KEY_LEN);
  const view = dp.mem.view;
  addresses.forEach((a, i) => view.setUint32(keys + i * KEY_LEN + DST_AT, a));
  return { dp, table, list, keys, addresses, memoryBytes, insertNs };
}

/** How many of the set-up keys find a row: one call, the lookups in wasm. */
export function lookUpAll(s: LpmSetup): number {
  const x = s.dp.exports as unknown as { tableLookupMany(id: number, keys: number, len: number, n: number): number };
  return x.tableLookupMany(s.table.id, s.keys, KEY_LEN, s.addresses.length);
}

export function measureLpm(n: number, lookups = LOOKUPS, rounds = ROUNDS): LpmResult {
  const s = setUpLpm(n, lookups);
  let found = 0;
  const ns: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const t0 = cpuNs();
    found = lookUpAll(s);
    ns.push((cpuNs() - t0) / lookups);
  }
  const lengths = new Set(s.list.map(([, len]) => len)).size;
  const dirBytes = s.dp.exports.tableDirBytes(s.table.id);
  return { prefixes: n, lengths, nsPerLookup: median(ns), found, memoryBytes: s.memoryBytes, dirBytes, ...writes(s) };
}

/** CPU ns an insert (the fill's) and a delete (of DELETES seeded prefixes, or a quarter of a smaller table). */
function writes(s: LpmSetup): { insertNs: number; deleteNs: number } {
  const next = generator(13);
  const chosen = new Set<number>();
  const want = Math.min(DELETES, s.list.length >> 2);
  while (chosen.size < want) chosen.add(next() % s.list.length);
  const deletes = [...chosen].map((i) => writeOf(s.table, "delete", s.list[i] ?? [0, 0], i));
  const t0 = cpuNs();
  apply(new Tables(s.dp), deletes);
  return { insertNs: s.insertNs, deleteNs: (cpuNs() - t0) / want };
}

if (isScript(import.meta.url)) {
  const flags = readFlags({ args: process.argv.slice(2), options: { json: { type: "boolean", default: false } } });
  if (typeof flags === "string") {
    refuse("bench:lpm", flags, "npm run bench:lpm [-- --json]");
    process.exit();
  }
  const results = [1 << 10, 1 << 16, 1 << 20].map((n) => measureLpm(n));
  if (flags.values.json) process.stdout.write(`${JSON.stringify(results)}\n`);
  else
    for (const r of results)
      process.stdout.write(
        `${String(r.prefixes).padStart(8)} prefixes (${r.lengths} lengths): ${r.nsPerLookup.toFixed(1)} ns a lookup, ` +
          `${((100 * r.found) / LOOKUPS).toFixed(0)} % found; ${(r.memoryBytes / 2 ** 20).toFixed(1)} MiB grown, ` +
          `DIR ${(r.dirBytes / 2 ** 20).toFixed(1)} MiB; a write ${(r.insertNs / 1000).toFixed(1)} µs insert, ` +
          `${(r.deleteNs / 1000).toFixed(1)} µs delete\n`,
      );
}
