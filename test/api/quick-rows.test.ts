// The quick check of a batch (src/api/quick-rows.ts) against the whole check (src/api/row-check.ts): a table of bad
// rows, each refused by both with the same typed error and nothing of its batch applied, and random rows (a fixed
// seed) that the quick check takes exactly when the whole check does, compiled to the same entries.

import { afterEach, describe, expect, test } from "vitest";
import { compile } from "../../src/control/compile.js";
import { loaded } from "../../src/api/emulation.js";
import { QuickRows } from "../../src/api/quick-rows.js";
import { type CheckedRow, RowChecker } from "../../src/api/row-check.js";
import type { RowWrite } from "../../src/api/tables.js";
import { Emulation, TableWriteError } from "../../src/index.js";

const ROUTER = "examples/ip-router/network.yaml";
const HUB = "examples/hub-and-spoke/network.yaml";

/** Both checks of one description, over the tables it compiles to. */
function checks(file: string): {
  full: (batch: readonly RowWrite[]) => CheckedRow[] | TableWriteError;
  quick: (batch: readonly RowWrite[]) => CheckedRow[] | undefined;
} {
  const { description, spec } = loaded(file);
  const compiled = compile(spec);
  const checker = new RowChecker(description, spec.file, spec.allocation, () => compiled);
  const quick = new QuickRows(description, spec.file, spec.allocation);
  const places = (batch: readonly RowWrite[]) => batch.map((w, i) => checker.place(w.member, w.table, i));
  return {
    full: (batch) => {
      try {
        return checker.checked(batch, places(batch));
      } catch (err) {
        if (err instanceof TableWriteError) return err;
        throw err;
      }
    },
    quick: (batch) => quick.checked(batch, places(batch), compiled),
  };
}

const w = (member: string, table: RowWrite["table"], row: unknown, op: RowWrite["op"] = "insert"): RowWrite =>
  ({ op, member, table, row }) as RowWrite;
const route = (dst: string, out: unknown): RowWrite => w("ip:r", "forward", { match: { dst }, out });
const GOOD = route("10.9.0.0/16", 2);

let open: Emulation[] = [];
afterEach(async () => {
  await Promise.all(open.map((e) => e.close()));
  open = [];
});

/** What an error says, as a program looks into it. */
const said = (e: TableWriteError) => ({
  code: e.code,
  index: e.index,
  problem: e.problem,
  fix: e.fix,
  text: e.message,
});

describe("a bad row: refused the same by the quick and the whole check, nothing applied", () => {
  test.each([
    {
      case: "a key rows do not have",
      file: ROUTER,
      batch: [w("ip:r", "forward", { match: { dst: "10.9.0.0/16" }, out: 2, colour: 1 })],
    },
    { case: "no out", file: ROUTER, batch: [w("ip:r", "forward", { match: { dst: "10.9.0.0/16" } })] },
    { case: "not an address", file: ROUTER, batch: [route("10.9.0.300/16", 2)] },
    { case: "a prefix longer than the field", file: ROUTER, batch: [route("10.9.0.0/33", 2)] },
    { case: "an out-link the member has not", file: ROUTER, batch: [route("10.9.0.0/16", 7)] },
    { case: "an in-link the member has not", file: ROUTER, batch: [w("ip:r", "forward", { in: 9, out: 1 })] },
    { case: "a field the design has not", file: ROUTER, batch: [w("ip:r", "forward", { match: { vlan: 3 }, out: 1 })] },
    {
      case: "a field the table does not match on",
      file: ROUTER,
      batch: [w("ip:r", "forward", { match: { src: "10.0.0.1" }, out: 1 })],
    },
    {
      case: "a range in an LPM table",
      file: ROUTER,
      batch: [w("ip:r", "forward", { match: { dst: "10.0.0.1..10.0.0.9" }, out: 1 })],
    },
    { case: "a catch-all in an exact table", file: HUB, batch: [w("hub", "forward", { out: 1 })] },
    {
      case: "a mask in an exact table",
      file: HUB,
      batch: [w("hub", "forward", { match: { dst: "02:00:00:00:00:00/24" }, out: 1 })],
    },
    { case: "not a MAC", file: HUB, batch: [w("hub", "forward", { match: { dst: "02:00:00:00:00" }, out: 1 })] },
    {
      case: "an action acquire has not",
      file: HUB,
      batch: [w("h1", "acquire", { match: { dst: "02:00:00:00:00:09" }, do: "deliver" })],
    },
    {
      case: "out: shared without a shared link",
      file: HUB,
      batch: [w("hub", "forward", { match: { dst: "02:00:00:00:00:09" }, out: "shared" })],
    },
    {
      case: "a receive row to a link of no network",
      file: ROUTER,
      batch: [w("lanA:r", "receive", { match: { type: 0x0806 }, do: { link: "ipx.1" } })],
    },
    { case: "the second of a batch", file: ROUTER, batch: [GOOD, route("10.9.0.0/40", 2)] },
  ])("$case", async ({ file, batch }) => {
    const { full, quick } = checks(file);
    const whole = full(batch);
    expect(whole).toBeInstanceOf(TableWriteError);
    expect(quick(batch)).toBeUndefined();
    const em = Emulation.load(file);
    open.push(em);
    const p = batch[0] as RowWrite;
    const before = await em.read(p.member, p.table);
    const err = await em.write(batch).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TableWriteError);
    expect(said(err as TableWriteError)).toEqual(said(whole as TableWriteError));
    expect(await em.read(p.member, p.table)).toEqual(before);
  });

  test.each([
    { case: "an entry with the row's match is there", batch: [route("10.0.1.0/24", 2)], code: "DuplicateEntry" },
    { case: "no entry to modify", batch: [{ ...route("10.9.0.0/16", 2), op: "modify" } as RowWrite], code: "NotFound" },
    {
      case: "no entry to delete, after a good row",
      batch: [GOOD, { ...route("10.8.0.0/16", 2), op: "delete" } as RowWrite],
      code: "NotFound",
    },
  ])("the data plane's refusal, after both checks took the rows alike: $case", async ({ batch, code }) => {
    const { full, quick } = checks(ROUTER);
    expect(quick(batch)).toEqual(full(batch));
    const em = Emulation.load(ROUTER);
    open.push(em);
    const before = await em.read("ip:r", "forward");
    await expect(em.write(batch)).rejects.toMatchObject({ code });
    expect(await em.read("ip:r", "forward")).toEqual(before);
  });
});

/** mulberry32: the same rows on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Parts rows are made of, good (most of the time) and bad: a row takes some of them at random. */
const PARTS = {
  mac: {
    good: ["02:00:00:00:00:09", "02:00:00:00:00:01", "ff:ff:ff:ff:ff:ff"],
    bad: ["02:00:00:00:00", "02:00:00:00:00:00/24", "*", 7],
  },
  ip: {
    good: ["10.9.0.0/16", "10.0.1.0/24", "10.0.1.7", "10.0.0.0/8"],
    bad: ["10.9.0.0/33", "10.0.0.1..10.0.0.9", "x", "10.0.0.0/8/8"],
  },
  out: { good: [1, 2, 3, 4, [1, 2]], bad: [7, [], "shared", "1", undefined] },
  in: { good: [undefined, undefined, 1], bad: [9, "self", "shared", -1] },
  acquire: { good: ["receive", "forward", "both"], bad: ["deliver", "shared", "drop", undefined, 3] },
  receive: { good: ["deliver"], bad: ["forward", "drop", { link: "lan.9" }, undefined] },
};

type Rand = { pick: <T>(xs: readonly T[]) => T; chance: (p: number) => boolean };
const part = (r: Rand, p: { good: readonly unknown[]; bad: readonly unknown[] }, good = 0.85): unknown =>
  r.pick(r.chance(good) ? p.good : p.bad);

function randomWrite(r: Rand): { file: string; write: RowWrite } {
  const hub = r.chance(0.5);
  const role = r.pick(["forward", "forward", "acquire", "receive"] as const);
  const member = hub
    ? { forward: "hub", acquire: r.pick(["hub", "h1"]), receive: "h1" }[role]
    : r.pick(["ip:r", "ip:h1"]);
  const field = r.chance(0.85) ? "dst" : r.pick(hub ? ["src", "type"] : ["src", "proto"]);
  const value = field === "dst" || field === "src" ? part(r, hub ? PARTS.mac : PARTS.ip) : r.pick([6, 0x0800, 70000]);
  const matched = r.chance(role === "receive" ? 0.15 : 0.9);
  const inLink = role === "receive" && r.chance(0.9) ? undefined : part(r, PARTS.in, 0.9);
  const base = {
    ...(inLink === undefined ? {} : { in: inLink }),
    ...(matched ? { match: { [field]: value } } : {}),
    ...(r.chance(0.05) ? { colour: 1 } : {}),
  };
  const row =
    role === "forward"
      ? { ...base, ...(r.chance(0.97) ? { out: part(r, PARTS.out) } : {}) }
      : { ...base, do: part(r, role === "acquire" ? PARTS.acquire : PARTS.receive) };
  return { file: hub ? HUB : ROUTER, write: w(member, role, row, r.pick(["insert", "insert", "modify", "delete"])) };
}

describe("random rows: the quick check takes exactly what the whole check takes", () => {
  test("400 rows (seed 31), one or two a batch, compiled alike", () => {
    const rand = random(31);
    const r: Rand = {
      pick: (xs) => xs[Math.floor(rand() * xs.length)] as (typeof xs)[number],
      chance: (p) => rand() < p,
    };
    const both = new Map([HUB, ROUTER].map((f) => [f, checks(f)]));
    let taken = 0;
    let refused = 0;
    for (let i = 0; i < 400; i++) {
      const first = randomWrite(r);
      const second = r.chance(0.3) ? randomWrite(r) : undefined;
      const batch = second !== undefined && second.file === first.file ? [first.write, second.write] : [first.write];
      const c = both.get(first.file) as ReturnType<typeof checks>;
      const whole = c.full(batch);
      const quick = c.quick(batch);
      const at = `${i}: ${JSON.stringify(batch)}`;
      if (whole instanceof TableWriteError) {
        refused++;
        expect(quick, at).toBeUndefined();
      } else {
        taken++;
        expect(quick, at).toEqual(whole);
      }
    }
    console.log(`random rows: ${taken} batches taken by both checks, ${refused} refused by both`);
    // Neither kind of row is rare: the property is tested on both.
    expect(taken).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(100);
  });
});
