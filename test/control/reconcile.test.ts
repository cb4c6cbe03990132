// The reconciler (src/control/reconcile.ts) against a fresh install: random
// sequences of changes to a description — rows, members, links, table kinds,
// and invalid changes — applied one at a time. After each accepted change the
// data plane, read back (Tables.count / action / lookup, and packets run
// through it), equals a fresh compile + install of the description; after
// each rejected change it equals what it was before.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { compile } from "../../src/control/compile.js";
import type { CompiledSpec } from "../../src/control/compiled.js";
import { resolveEndpoint } from "../../src/control/endpoints.js";
import { type Installed, install } from "../../src/control/install.js";
import { Reconciler, resolveTarget } from "../../src/control/reconcile.js";
import { SpecError } from "../../src/description/problems.js";
import { parseSpec } from "../../src/description/load.js";
import { openCapture } from "../../src/pcap/reader.js";
import { DROP_REASONS } from "../../src/wasm/abi.js";
import { DataPlane } from "../../src/wasm/module.js";
import { type InputBatch, Runner } from "../../src/wasm/runner.js";
import { Tables } from "../../src/wasm/tables.js";
import { ethernetFrame } from "../pipeline/helpers/packets.js";
import { recordIn } from "../pipeline/helpers/recorded.js";

// ── A small model of a description: one Ethernet network ──────────────────

interface Row {
  readonly dst: number;
  /** Match dst by a /40 prefix (a table of another kind) instead of exactly. */
  readonly prefix: boolean;
  /** Links (indices into Model.links, or a number no link has: invalid); none: out: drop. */
  readonly out: readonly number[];
}
interface Link {
  readonly a: number;
  readonly ai: number;
  readonly b: number;
  readonly bi: number;
}
interface Model {
  readonly members: readonly number[];
  readonly links: readonly Link[];
  readonly rows: ReadonlyMap<number, readonly Row[]>;
  /** Members whose acquire table also forwards what is not for them. */
  readonly forwards: ReadonlySet<number>;
  /** Text added to the description to make it invalid (not kept). */
  readonly broken?: string;
}

const mac = (k: number): string => `02:00:00:00:00:0${k}`;
const macBig = (k: number): bigint => 0x020000000000n + BigInt(k);

function identOf(m: Model, member: number, link: number): number {
  const l = m.links[link];
  if (l === undefined) return 90 + link; // a link that is not there: the description is invalid
  return l.a === member ? l.ai : l.b === member ? l.bi : 90 + link;
}

function render(m: Model): string {
  const lines = ["networks:", "  lan:", "    header: ethernet", "    members:"];
  for (const k of m.members) lines.push(`      m${k}: { name: "${mac(k)}" }`);
  if (m.links.length > 0) {
    lines.push("    links:");
    for (const l of m.links) lines.push(`      - { from: m${l.a}.${l.ai}, to: m${l.b}.${l.bi}, mode: two-way }`);
  }
  lines.push("    tables:");
  for (const k of m.members) {
    lines.push(`      m${k}:`);
    lines.push(
      `        acquire: [ { match: { dst: "${mac(k)}" }, ` +
        `do: receive }${m.forwards.has(k) ? ", { do: forward }" : ""} ]`,
    );
    lines.push("        receive: [ { do: deliver } ]");
    const rows = m.rows.get(k) ?? [];
    if (rows.length > 0) {
      lines.push("        forward:");
      for (const r of rows) {
        const dst = r.prefix ? `"02:00:00:00:0${r.dst}:00/40"` : `"${mac(r.dst)}"`;
        const out = r.out.length === 0 ? "drop" : `[${r.out.map((o) => identOf(m, k, o)).join(", ")}]`;
        lines.push(`          - { match: { dst: ${dst} }, out: ${out} }`);
      }
    }
    if (m.broken !== undefined && k === m.members[0]) lines.push(m.broken);
  }
  return `${lines.join("\n")}\n`;
}

const BASE: Model = {
  members: [0, 1],
  links: [{ a: 0, ai: 1, b: 1, bi: 1 }],
  rows: new Map([
    [0, [{ dst: 1, prefix: false, out: [0] }]],
    [1, [{ dst: 0, prefix: false, out: [0] }]],
  ]),
  forwards: new Set([1]),
};

// ── Changes ────────────────────────────────────────────────────────────────

type Op =
  | { op: "addRow"; member: number; dst: number; prefix: boolean; out: number }
  | { op: "removeRow"; member: number; at: number }
  | { op: "modifyRow"; member: number; at: number; out: number }
  | { op: "duplicateRow"; member: number; at: number }
  | { op: "addMember"; member: number }
  | { op: "removeMember"; member: number; clean: boolean }
  | { op: "addLink"; a: number; b: number }
  | { op: "removeLink"; at: number; clean: boolean }
  | { op: "toggleForward"; member: number }
  | { op: "broken"; text: string };

const member = fc.integer({ min: 0, max: 4 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant("addRow" as const),
      member,
      dst: fc.integer({ min: 0, max: 5 }),
      prefix: fc.boolean(),
      out: fc.integer({ min: 0, max: 4 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("removeRow" as const), member, at: fc.nat(5) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("modifyRow" as const),
      member,
      at: fc.nat(5),
      out: fc.integer({ min: 0, max: 4 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("duplicateRow" as const), member, at: fc.nat(5) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("addMember" as const), member }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("removeMember" as const), member, clean: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("addLink" as const), a: member, b: member }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("removeLink" as const), at: fc.nat(4), clean: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("toggleForward" as const), member }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("broken" as const),
      text: fc.constantFrom(
        "        send: [ { session: 1, header: { nosuch: 1 } } ]",
        "        transmit: [ { out: 77, via: physical } ]",
        "        forward: oops",
      ),
    }),
  },
);

/** Rows of every member with links renumbered after link `gone` was taken out (rows on it dropped when `clean`). */
function withoutLink(m: Model, gone: number, clean: boolean): Map<number, Row[]> {
  const rows = new Map<number, Row[]>();
  for (const [k, list] of m.rows) {
    const kept = list
      .filter((r) => !(clean && r.out.includes(gone)))
      .map((r) => ({ ...r, out: r.out.map((o) => (o === gone ? 99 : o > gone ? o - 1 : o)) }));
    rows.set(k, kept);
  }
  return rows;
}

function step(m: Model, o: Op): Model {
  const rows = new Map([...m.rows].map(([k, v]) => [k, [...v]]));
  const present = m.members.includes.bind(m.members);
  switch (o.op) {
    case "addRow": {
      if (!present(o.member)) return m;
      const links = m.links.flatMap((l, i) => (l.a === o.member || l.b === o.member ? [i] : []));
      const out = links.length === 0 ? 99 : (links[o.out % links.length] ?? 99);
      rows.set(o.member, [...(rows.get(o.member) ?? []), { dst: o.dst, prefix: o.prefix, out: [out] }]);
      return { ...m, rows };
    }
    case "removeRow": {
      const list = rows.get(o.member) ?? [];
      if (list.length === 0) return m;
      list.splice(o.at % list.length, 1);
      return { ...m, rows };
    }
    case "modifyRow": {
      const list = rows.get(o.member) ?? [];
      const r = list[o.at % Math.max(1, list.length)];
      if (r === undefined) return m;
      const links = m.links.flatMap((l, i) => (l.a === o.member || l.b === o.member ? [i] : []));
      // 0: drop; else one of the member's links.
      list[o.at % list.length] = {
        ...r,
        out: o.out === 0 || links.length === 0 ? [] : [links[o.out % links.length] ?? 0],
      };
      return { ...m, rows };
    }
    case "duplicateRow": {
      const list = rows.get(o.member) ?? [];
      const r = list[o.at % Math.max(1, list.length)];
      if (r === undefined) return m;
      list.push(r);
      return { ...m, rows };
    }
    case "addMember":
      return present(o.member) ? m : { ...m, members: [...m.members, o.member].sort() };
    case "removeMember": {
      if (o.member === 0 || !present(o.member)) return m;
      let next: Model = { ...m, members: m.members.filter((k) => k !== o.member) };
      for (let i = next.links.length - 1; i >= 0; i--) {
        const l = next.links[i];
        if (l !== undefined && (l.a === o.member || l.b === o.member))
          next = { ...next, links: next.links.filter((_, j) => j !== i), rows: withoutLink(next, i, o.clean) };
      }
      const r = new Map(next.rows);
      r.delete(o.member);
      const forwards = new Set(next.forwards);
      forwards.delete(o.member);
      return { ...next, rows: r, forwards };
    }
    case "addLink": {
      if (o.a === o.b || !present(o.a) || !present(o.b)) return m;
      const next = (k: number): number =>
        1 + Math.max(0, ...m.links.flatMap((l) => [l.a === k ? l.ai : 0, l.b === k ? l.bi : 0]));
      return { ...m, links: [...m.links, { a: o.a, ai: next(o.a), b: o.b, bi: next(o.b) }] };
    }
    case "removeLink": {
      if (m.links.length === 0) return m;
      const at = o.at % m.links.length;
      return { ...m, links: m.links.filter((_, j) => j !== at), rows: withoutLink(m, at, o.clean) };
    }
    case "toggleForward": {
      if (!present(o.member)) return m;
      const forwards = new Set(m.forwards);
      if (forwards.has(o.member)) forwards.delete(o.member);
      else forwards.add(o.member);
      return { ...m, forwards };
    }
    case "broken":
      return { ...m, broken: o.text };
  }
}

// ── Reading a data plane back ──────────────────────────────────────────────

/** Packets m0 sends itself (in-link self), to every address and one nobody has. */
function probe(): InputBatch {
  const frames = [0, 1, 2, 3, 4, 5, 9].map((k) =>
    ethernetFrame({ dst: macBig(k), src: macBig(0), payload: new Uint8Array(30).fill(k) }),
  );
  const offset = new Uint32Array(frames.length);
  let at = 0;
  frames.forEach((f, i) => {
    offset[i] = at;
    at += f.length;
  });
  const data = new Uint8Array(at);
  frames.forEach((f, i) => data.set(f, offset[i]));
  return {
    data,
    count: frames.length,
    offset,
    capLen: Uint32Array.from(frames, (f) => f.length),
    origLen: Uint32Array.from(frames, (f) => f.length),
    tsSec: new Float64Array(frames.length).fill(1),
    tsNsec: Uint32Array.from(frames, (_, i) => i), // which probe a record is
    endpoint: 0,
  };
}

/**
 * Everything observable about installed tables and topology, by name (never by table id or
 * entry index, which a reconciled data plane may number differently): each table's entry
 * count, each row's stored action, which row wins a lookup of each row's own key, and the
 * fates of probe packets (links crossed, deliveries, drops by member and reason).
 */
function observe(dp: DataPlane, installed: Installed): unknown {
  const c = installed.compiled;
  const tables = new Tables(dp);
  const out: Record<string, unknown> = {};
  for (const t of c.tables) {
    const entries = installed.entries.get(t.id) ?? [];
    const rowOf = new Map(entries.map((e, k) => [e, k]));
    out[`${c.members[t.member]?.qualified}/${t.role}`] = {
      count: tables.count(t),
      actions: t.rows.map((r, k) => {
        const a = tables.action(t, entries[k] ?? -1, r.action.data?.length ?? 0);
        return a === undefined ? null : { ...a, data: Array.from(a.data) };
      }),
      winners: t.rows.map((r) => rowOf.get(tables.lookup(t, r.match.value)) ?? -1),
    };
  }
  dp.exports.countersReset();
  const fates: string[] = [];
  const recorded = recordIn(dp, c);
  const runner = new Runner(dp, { maxFanout: c.maxFanout, slotLen: 512 }, recorded);
  runner.run(probe(), 0, null);
  runner.flushRecordings();
  for (const [file, records] of recorded.files)
    for (const r of records) fates.push(`${r.tsNsec} ${file} ${r.bytes.length}`);
  for (const m of [...c.members, undefined]) {
    const counts = new BigUint64Array(dp.mem.u8.buffer, dp.exports.memberDrops(m?.index ?? -1), DROP_REASONS.length);
    DROP_REASONS.forEach((r, k) => {
      if ((counts[k] ?? 0n) > 0n) fates.push(`drop ${m?.qualified ?? "outside"} ${r} ${counts[k]}`);
    });
  }
  out["fates"] = fates.sort();
  return out;
}

function fresh(compiled: CompiledSpec, endpoints: readonly string[]): unknown {
  const dp = DataPlane.load();
  return observe(
    dp,
    install(
      dp,
      compiled,
      endpoints.map((e) => resolveEndpoint(compiled, e)),
    ),
  );
}

function compileText(text: string): CompiledSpec {
  return compile(parseSpec(text, "update.yaml"));
}

const ENDPOINTS = ["lan:m0"];

describe("Reconciler.apply", () => {
  it("random sequences of changes: accepted ones converge to a fresh install, rejected ones change nothing", () => {
    let accepted = 0;
    let rejected = 0;
    let rebuilt = 0;
    let diffs = 0;
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 10 }), (ops) => {
        const dp = DataPlane.load();
        let model = BASE;
        const rec = Reconciler.install(dp, compileText(render(model)), ENDPOINTS);
        for (const o of ops) {
          const candidate = step(model, o);
          if (candidate === model) continue;
          const before = observe(dp, rec.current());
          let compiled: CompiledSpec | undefined;
          try {
            compiled = compileText(render(candidate));
            const change = rec.apply(compiled);
            if (change.rebuilt) rebuilt++;
            else if (change.inserted + change.modified + change.deleted + change.tablesBuilt > 0) diffs++;
          } catch (err) {
            if (!(err instanceof SpecError)) throw err;
            rejected++;
            expect(observe(dp, rec.current())).toEqual(before);
            continue;
          }
          accepted++;
          const { broken: _, ...kept } = candidate;
          model = kept;
          expect(observe(dp, rec.current())).toEqual(fresh(compiled, ENDPOINTS));
        }
      }),
      { numRuns: 120, seed: 9 },
    );
    // The generator reaches every path: row diffs, rebuilt topologies and rejections.
    expect({ accepted: accepted > 100, rejected: rejected > 30, rebuilt: rebuilt > 20, diffs: diffs > 40 }).toEqual({
      accepted: true,
      rejected: true,
      rebuilt: true,
      diffs: true,
    });
  });

  it.each([
    {
      name: "a changed out-link: one modify, no table built",
      change: (m: Model): Model => ({ ...m, links: [...m.links, { a: 0, ai: 2, b: 1, bi: 2 }] }),
      then: (m: Model): Model => ({ ...m, rows: new Map([...m.rows, [0, [{ dst: 1, prefix: false, out: [1] }]]]) }),
      expected: { inserted: 0, modified: 1, deleted: 0, tablesBuilt: 0, tablesRemoved: 0, rebuilt: false },
    },
    {
      name: "a row added and one taken away",
      change: (m: Model): Model => m,
      then: (m: Model): Model => ({ ...m, rows: new Map([...m.rows, [0, [{ dst: 2, prefix: false, out: [0] }]]]) }),
      expected: { inserted: 1, modified: 0, deleted: 1, tablesBuilt: 0, tablesRemoved: 0, rebuilt: false },
    },
    {
      name: "a prefix row: the forward table changes kind, built aside",
      change: (m: Model): Model => m,
      then: (m: Model): Model => ({
        ...m,
        rows: new Map([
          ...m.rows,
          [
            0,
            [
              { dst: 1, prefix: false, out: [0] },
              { dst: 2, prefix: true, out: [0] },
            ],
          ],
        ]),
      }),
      expected: { inserted: 0, modified: 0, deleted: 0, tablesBuilt: 1, tablesRemoved: 1, rebuilt: false },
    },
    {
      name: "a member's forward table taken away",
      change: (m: Model): Model => m,
      then: (m: Model): Model => ({ ...m, rows: new Map([...m.rows, [0, []]]) }),
      expected: { inserted: 0, modified: 0, deleted: 0, tablesBuilt: 0, tablesRemoved: 1, rebuilt: false },
    },
  ])("$name", ({ change, then, expected }) => {
    const dp = DataPlane.load();
    const first = change(BASE);
    const rec = Reconciler.install(dp, compileText(render(first)), ENDPOINTS);
    const next = compileText(render(then(first)));
    const { topology, ...counts } = rec.apply(next);
    expect(topology).toEqual([]);
    expect(counts).toEqual(expected);
    expect(observe(dp, rec.current())).toEqual(fresh(next, ENDPOINTS));
  });

  it.each([
    {
      name: "a member added",
      then: (m: Model): Model => ({ ...m, members: [0, 1, 2] }),
      topology: ["member lan.m2 added"],
    },
    {
      name: "a link added",
      then: (m: Model): Model => ({ ...m, links: [...m.links, { a: 0, ai: 2, b: 1, bi: 2 }] }),
      topology: ["link lan.m0.2-m1.2 (m0→m1) added", "link lan.m0.2-m1.2 (m1→m0) added"],
    },
  ])("the topology changed ($name): rebuilt aside and swapped", ({ then, topology }) => {
    const dp = DataPlane.load();
    const rec = Reconciler.install(dp, compileText(render(BASE)), ENDPOINTS);
    const next = compileText(render(then(BASE)));
    const change = rec.apply(next);
    expect(change.rebuilt).toBe(true);
    expect(change.topology).toEqual(topology);
    expect(observe(dp, rec.current())).toEqual(fresh(next, ENDPOINTS));
  });

  it.each([
    {
      name: "a duplicate row",
      then: (m: Model): Model => ({
        ...m,
        rows: new Map([
          ...m.rows,
          [
            1,
            [
              { dst: 0, prefix: false, out: [0] },
              { dst: 0, prefix: false, out: [0] },
            ],
          ],
        ]),
      }),
      message:
        /^update\.yaml: \d+:\d+ networks\.lan\.tables\.m1\.forward\[1\]: this forward row matches exactly what row 0/,
    },
    {
      name: "the input endpoint's member removed",
      then: (m: Model): Model => ({ ...m, members: [1], links: [], rows: new Map([[1, []]]) }),
      message: /update\.yaml: the input endpoint lan:m0 is not in this description/,
    },
  ])("refuses $name and keeps what was installed", ({ then, message }) => {
    const dp = DataPlane.load();
    const rec = Reconciler.install(dp, compileText(render(BASE)), ENDPOINTS);
    const before = observe(dp, rec.current());
    const installed = rec.current();
    expect(() => rec.apply(compileText(render(then(BASE))))).toThrow(message);
    expect(rec.current()).toBe(installed);
    expect(observe(dp, rec.current())).toEqual(before);
  });

  it("frees what it replaces: many changes back and forth leave linear memory as it was", () => {
    const dp = DataPlane.load();
    const rec = Reconciler.install(dp, compileText(render(BASE)), ENDPOINTS);
    const models = [
      BASE,
      { ...BASE, members: [0, 1, 2] },
      { ...BASE, rows: new Map([...BASE.rows, [0, [{ dst: 1, prefix: true, out: [0] }]]]) },
    ];
    const compiled = models.map((m) => compileText(render(m)));
    const cycle = (): void => {
      for (const c of [...compiled, compiled[0] as CompiledSpec]) rec.apply(c);
    };
    for (let i = 0; i < 5; i++) cycle();
    const bytes = dp.mem.u8.buffer.byteLength;
    // Each cycle builds every table (1024 entries each) twice over: a leak would grow memory by megabytes.
    for (let i = 0; i < 100; i++) cycle();
    expect(dp.mem.u8.buffer.byteLength).toBe(bytes);
    expect(observe(dp, rec.current())).toEqual(fresh(compiled[0] as CompiledSpec, ENDPOINTS));
  });

  it("frees the tables it replaces: their ids are used again", () => {
    const dp = DataPlane.load();
    const rec = Reconciler.install(dp, compileText(render(BASE)), ENDPOINTS);
    const ids = (): number[] =>
      rec
        .current()
        .compiled.tables.map((t) => t.id)
        .sort((a, b) => a - b);
    const start = ids();
    // Back and forth between two topologies: every table is rebuilt each time, the ids stay few.
    for (let i = 0; i < 6; i++) rec.apply(compileText(render(i % 2 === 0 ? { ...BASE, members: [0, 1, 2] } : BASE)));
    expect(ids()).toEqual(start);
  });
});

// The data plane numbers networks, members and links by position; a description that writes the
// same ones in another order is the same topology, numbered as the one running (src/control/numbering.ts).
describe("Reconciler.apply: the same topology written in another order", () => {
  const root = new URL("../..", import.meta.url).pathname;
  interface Doc {
    networks: Record<string, { members: Record<string, unknown>; links?: unknown[] }>;
  }
  const reversed = <T>(record: Record<string, T>): Record<string, T> =>
    Object.fromEntries(Object.entries(record).reverse());
  /** Networks, every network's members and links in reverse order; `also` changes the document further. */
  const reorder = (text: string, also: (d: Doc) => void = () => {}): string => {
    const doc = parseYaml(text, { merge: true }) as Doc;
    doc.networks = reversed(doc.networks);
    for (const net of Object.values(doc.networks)) {
      net.members = reversed(net.members);
      if (net.links !== undefined) net.links = [...net.links].reverse();
    }
    also(doc);
    return stringifyYaml(doc);
  };
  /** Every record of the example's captures on `dp`, by recording (link crossed or member delivered to), with its
   * time and bytes. */
  const replay = (dp: DataPlane, c: CompiledSpec, inputs: readonly string[]): string[] => {
    const recorded = recordIn(dp, c);
    const runner = new Runner(dp, { maxFanout: c.maxFanout, slotLen: 2048 }, recorded);
    inputs.forEach((input, endpoint) => {
      const reader = openCapture(join(root, input.slice(input.indexOf("=") + 1)));
      try {
        for (const b of reader.batches()) runner.run({ ...b, endpoint }, 0, null);
      } finally {
        reader.close();
      }
    });
    runner.flushRecordings();
    return [...recorded.files]
      .flatMap(([file, records]) =>
        records.map((r) => `${file} ${r.tsSec}.${r.tsNsec} ${Buffer.from(r.bytes).toString("hex")}`),
      )
      .sort();
  };

  it.each(["ip-router", "subduction", "l2vpn"])(
    "%s: no topology change, no row written, the numbering kept; it runs as a fresh install",
    (example) => {
      const text = readFileSync(join(root, "examples", example, "network.yaml"), "utf8");
      const { inputs } = JSON.parse(readFileSync(join(root, "examples", example, "example.json"), "utf8")) as {
        inputs: string[];
      };
      const endpoints = inputs.map((i) => i.slice(0, i.indexOf("=")));
      const dp = DataPlane.load();
      const first = compileText(text);
      const rec = Reconciler.install(dp, first, endpoints);
      const next = compileText(reorder(text));
      expect(next.members.map((m) => m.qualified)).not.toEqual(first.members.map((m) => m.qualified));
      // As a reload of strata serve (rebuild: false) and an update of strata run --updates (no rebuild) need it.
      expect(rec.apply(next, { rebuild: false })).toEqual({
        inserted: 0,
        modified: 0,
        deleted: 0,
        tablesBuilt: 0,
        tablesRemoved: 0,
        rebuilt: false,
        topology: [],
      });
      const now = rec.current().compiled;
      expect(now.members.map((m) => m.qualified)).toEqual(first.members.map((m) => m.qualified));
      expect(now.links.map((l) => l.qualified)).toEqual(first.links.map((l) => l.qualified));
      expect(now.networks.map((n) => n.name)).toEqual(first.networks.map((n) => n.name));
      const fresh = DataPlane.load();
      Reconciler.install(fresh, next, endpoints);
      const outputs = replay(dp, now, inputs);
      expect(outputs.length).toBeGreaterThan(0);
      expect(outputs).toEqual(replay(fresh, next, inputs));
    },
  );

  it("a member renamed is still a topology change", () => {
    const text = readFileSync(join(root, "examples", "ip-router", "network.yaml"), "utf8");
    const rec = Reconciler.install(DataPlane.load(), compileText(text), []);
    // lanB.h2 becomes h9, on the same machine (where ip.h2 attaches to it).
    const renamed = reorder(text, (d) => {
      const lanB = d.networks["lanB"] as {
        members: Record<string, object>;
        links: { from: string; to: string }[];
        tables: Record<string, unknown>;
      };
      lanB.members = Object.fromEntries(
        Object.entries(lanB.members).map(([k, v]) => (k === "h2" ? ["h9", { ...v, machine: "h2" }] : [k, v])),
      );
      lanB.links = lanB.links.map((l) => ({
        ...l,
        from: l.from.replace("h2.", "h9."),
        to: l.to.replace("h2.", "h9."),
      }));
      lanB.tables = Object.fromEntries(Object.entries(lanB.tables).map(([k, v]) => [k === "h2" ? "h9" : k, v]));
    });
    expect(() => rec.apply(compileText(renamed), { rebuild: false })).toThrow(
      /this change needs another topology \(member lanB\.h9 added, member lanB\.h2 removed/,
    );
  });
});

describe("Reconciler.setDown", () => {
  const fatesOf = (dp: DataPlane, rec: Reconciler): string[] =>
    (observe(dp, rec.current()) as { fates: string[] }).fates;
  it.each([
    { name: "a link by endpoint", target: { link: "lan:m0.1" }, drops: ["drop lan.m0 link-down 1"] },
    { name: "a link by its name", target: { link: "lan.m0.1-m1.1" }, drops: ["drop lan.m0 link-down 1"] },
    { name: "a member", target: { member: "lan:m1" }, drops: ["drop lan.m1 member-down 1"] },
    { name: "a machine", target: { machine: "m0" }, drops: ["drop lan.m0 member-down 7"] },
  ])("$name: down drops with its reason, up restores, and it stays down across a change", ({ target, drops }) => {
    const dp = DataPlane.load();
    const rec = Reconciler.install(dp, compileText(render(BASE)), ENDPOINTS);
    const normal = fatesOf(dp, rec);
    rec.setDown(target, true);
    const down = fatesOf(dp, rec);
    expect(down.filter((f) => f.startsWith("drop") && f.includes("down"))).toEqual(drops);
    // A change of tables and then of topology: the target stays down.
    rec.apply(compileText(render({ ...BASE, forwards: new Set([0, 1]) })));
    rec.apply(compileText(render({ ...BASE, members: [0, 1, 3] })));
    expect(fatesOf(dp, rec).filter((f) => f.includes("-down"))).toEqual(drops);
    rec.apply(compileText(render(BASE)));
    rec.setDown(target, false);
    expect(fatesOf(dp, rec)).toEqual(normal);
  });

  it.each([
    { target: { link: "lan:m0.7" }, problem: "lan.m0 has no link with identifier 7" },
    { target: { link: "nosuch" }, problem: "no link 'nosuch'" },
    { target: { member: "lan:m9" }, problem: "no member 'lan:m9'" },
    { target: { machine: "m9" }, problem: "no machine 'm9'" },
  ])("refuses $target", ({ target, problem }) => {
    const c = compileText(render(BASE));
    expect(resolveTarget(c, target)).toMatchObject({ problem });
  });
});
