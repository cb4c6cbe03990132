// A header table's rows compiled at the size of real tables: every row's key bytes as its pattern
// says (checked against the bytes written out by hand from the field's offset in the key), the
// keys of one table held in one buffer rather than four typed arrays a row, and the compiled rows
// kept whole through a structured clone (how `run` hands them to its workers).

import { describe, expect, test } from "vitest";
import { fibYaml } from "../../bench/load-scale.js";
import { compile } from "../../src/control/compile.js";
import type { CompiledTable } from "../../src/control/compiled.js";
import { parseSpec } from "../../src/description/load.js";

/** The forward table of the bench's router r, with `n` LPM rows and the default route after them. */
function fib(n: number): CompiledTable {
  const c = compile(parseSpec(fibYaml(n), "fib.yaml"));
  const table = c.tables.find((t) => t.role === "forward" && t.rows.length === n + 1);
  if (table === undefined) throw new Error("no forward table of that size");
  return table;
}

/** The value and mask bytes of `a.b.c.d/len` in a key of `keyLen` bytes whose dst field starts at `offset`. */
function expected(prefix: string, keyLen: number, offset: number): { value: number[]; mask: number[] } {
  const [addr = "", len = "32"] = prefix.split("/");
  const bytes = addr.split(".").map(Number);
  const value = new Array<number>(keyLen).fill(0);
  const mask = new Array<number>(keyLen).fill(0);
  for (let i = 0; i < 4; i++) {
    const bits = Math.max(0, Math.min(8, Number(len) - 8 * i));
    const m = bits === 0 ? 0 : (0xff << (8 - bits)) & 0xff;
    mask[offset + i] = m;
    value[offset + i] = (bytes[i] ?? 0) & m;
  }
  return { value, mask };
}

describe("an LPM table of many rows", () => {
  const table = fib(3_000);
  const dst = table.fields.find((f) => f.name === "dst");

  test("is an LPM table on dst alone", () => {
    expect([table.kind, table.fields.map((f) => [f.name, f.kind])]).toEqual(["lpm", [["dst", "lpm"]]]);
  });

  test.each([0, 1, 2, 1_499, 2_998, 2_999])("row %i's key is its prefix", (i) => {
    const row = table.rows[i];
    const written = table.spec?.rows[i]?.match.get("dst");
    if (row === undefined || written?.kind !== "prefix" || dst === undefined) throw new Error("no such row");
    const v = written.value;
    const prefix = `${[24, 16, 8, 0].map((s) => Number((v >> BigInt(s)) & 0xffn)).join(".")}/${written.len}`;
    const want = expected(prefix, table.keyLen, dst.offset);
    expect({ value: [...row.match.value], mask: [...row.match.mask] }).toEqual(want);
    expect(row.match.lo).toBeUndefined();
  });

  test("keeps its rows' keys in one buffer", () => {
    const buffers = new Set(table.rows.flatMap((r) => [r.match.value.buffer, r.match.mask.buffer]));
    expect(buffers.size).toBe(1);
  });

  test("comes through a structured clone whole", () => {
    const copy = structuredClone(table.rows);
    expect(copy.map((r) => [[...r.match.value], [...r.match.mask], r.action])).toEqual(
      table.rows.map((r) => [[...r.match.value], [...r.match.mask], r.action]),
    );
  });
});

describe("a table that matches no field: its kind has nothing to say how to match, so any kind is taken", () => {
  const yaml = (forward: string): string => `networks:
  lan:
    header: ipv4
    members: { a: { name: 10.0.0.1 }, b: { name: 10.0.0.2 } }
    links: [ { from: a.1, to: b.1, mode: two-way } ]
    tables:
      a: { forward: ${forward} }
`;
  const cases = (["exact", "lpm", "ternary", "range", "optional"] as const).flatMap((kind) => [
    { kind, rows: "[]", n: 0 },
    { kind, rows: "[ { match: {}, out: 1 } ]", n: 1 },
  ]);
  test.each(cases)("kind $kind with rows $rows: compiled keyless, as without the kind", ({ kind, rows, n }) => {
    const forward = (c: ReturnType<typeof compile>): CompiledTable | undefined =>
      c.tables.find((t) => t.role === "forward" && t.member === 0);
    const written = forward(compile(parseSpec(yaml(`{ kind: ${kind}, rows: ${rows} }`), "kind.yaml")));
    const inferred = forward(compile(parseSpec(yaml(`{ rows: ${rows} }`), "inferred.yaml")));
    expect(written?.rows.length).toBe(n);
    expect([written?.kind, written?.fields]).toEqual([inferred?.kind, []]);
  });
});
