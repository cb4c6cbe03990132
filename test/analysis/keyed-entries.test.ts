// A controller's entries in transmit and send tables, read as rows
// (src/analysis/entry-rows.ts, keyedOther) and followed by a running analysis
// (Analysis.setOthers): on the IP router example, each step writes the data
// plane through its ledger, then one IPv4 packet from h1 (lanA's session 1, as
// h1's stack sends it) runs through it, and the analysis kept up to date and
// one made afresh from the same tables must say what the data plane did —
// delivered at ip.h2, or a miss in the table the step emptied — and so must
// the properties. Each step follows the one before.

import { describe, expect, it } from "vitest";
import { Analysis } from "../../src/analysis/analysis.js";
import { otherEntries } from "../../src/analysis/entry-rows.js";
import { LiveAnalysis } from "../../src/analysis/live.js";
import { currentProperties, type Relations } from "../../src/analysis/properties.js";
import { ComponentRelation } from "../../src/analysis/relations.js";
import { trafficRelation } from "../../src/analysis/traffic.js";
import { compile } from "../../src/control/compile.js";
import type { CompiledSpec, CompiledTable } from "../../src/control/compiled.js";
import { putBig } from "../../src/control/header-table.js";
import { loadSpec } from "../../src/description/load.js";
import { Engine } from "../../src/engine/engine.js";
import { openCapture } from "../../src/pcap/index.js";
import type { EntryAction, TableWrite, WriteOp } from "../../src/wasm/tables.js";

const root = new URL("../..", import.meta.url).pathname;
const compiled = compile(loadSpec(`${root}examples/ip-router/network.yaml`));

function table(c: CompiledSpec, member: string, role: "transmit" | "send"): CompiledTable {
  const t = c.members.find((m) => m.qualified === member)?.tables[role];
  if (t === undefined) throw new Error(`${member} has no ${role} table`);
  return t;
}

const index = (member: string): number => compiled.members.find((m) => m.qualified === member)?.index ?? -1;

/** A write of a transmit (out-link) or send (session) entry, keyed as src/control/compile.ts keys them. */
function keyed(
  op: WriteOp,
  member: string,
  role: "transmit" | "send",
  ident: number,
  action?: EntryAction,
): TableWrite {
  const t = table(compiled, member, role);
  const len = t.fields[0]?.len ?? 0;
  const value = new Uint8Array(t.keyLen);
  const mask = new Uint8Array(t.keyLen);
  putBig(value, { offset: 0, len }, BigInt(ident));
  mask.fill(0xff, 0, len);
  return { op, table: t, match: { value, mask, priority: 0 }, ...(action === undefined ? {} : { action }) };
}

const physical: EntryAction = { name: "physical" };
/** Out through session `session` of lanB's member r. */
const viaLanB = (session: number): EntryAction => ({ name: "external-session", arg: index("lanB.r"), arg2: session });
/** lanB.r's send row's push, with Ethernet source `src` and destination `dst` (type IPv4). */
function push(dst: bigint, src: bigint): EntryAction {
  const layout = compiled.networks[compiled.members[index("lanB.r")]?.network ?? -1]?.layout;
  if (layout === undefined) throw new Error("no layout");
  const data = new Uint8Array(layout.len);
  const header = new Map([
    ["dst", dst],
    ["src", src],
    ["type", 0x0800n],
  ]);
  for (const slot of layout.slots.slice(1)) putBig(data, slot, header.get(slot.field.name) ?? 0n);
  return { name: "push", count: data.length, arg: layout.design.id, data };
}
/** The action of the description's first row of `member`'s `role` table. */
function described(member: string, role: "transmit" | "send"): EntryAction {
  const a = table(compiled, member, role).rows[0]?.action;
  if (a === undefined) throw new Error(`${member} ${role} has no row`);
  return a;
}
const H2_MAC = 0x0200_0000_0b02n;
const R_MAC = 0x0200_0000_0bfen;

const LAYERING = "Underlay_satisfies_layering_demands";
const LANB_SYMMETRIC = "Effective_reachability_is_symmetric (lanB)";

/** Each step: its writes, whether the data plane then delivers h1's packet at ip.h2, a table the analysis must say a
 * class misses in, and the properties that fail. */
const steps: { name: string; writes: TableWrite[]; delivered: boolean; miss?: string; failing: string[] }[] = [
  { name: "the description's tables", writes: [], delivered: true, failing: [] },
  {
    name: "ip.r's transmit on out-link 2 made physical (no row of the description)",
    writes: [keyed("modify", "ip.r", "transmit", 2, physical)],
    delivered: true,
    failing: [],
  },
  {
    name: "that entry deleted: no transmit entry for out-link 2",
    writes: [keyed("delete", "ip.r", "transmit", 2)],
    delivered: false,
    failing: ["Fully_reachable (ip)"],
    miss: "ip.r transmit",
  },
  {
    name: "out-link 2 through lanB's session 2, in place of lanB.r's session 1 (no rows of the description)",
    writes: [
      keyed("delete", "lanB.r", "send", 1),
      keyed("insert", "lanB.r", "send", 2, push(H2_MAC, R_MAC)),
      keyed("insert", "ip.r", "transmit", 2, viaLanB(2)),
    ],
    delivered: true,
    failing: [],
  },
  {
    name: "session 2 deleted: no send entry for it",
    writes: [keyed("delete", "lanB.r", "send", 2)],
    delivered: false,
    failing: [LANB_SYMMETRIC, LAYERING],
  },
  {
    name: "lanB.r's session 1 and ip.r's transmit on out-link 2 as the description has them",
    writes: [
      keyed("insert", "lanB.r", "send", 1, described("lanB.r", "send")),
      keyed("modify", "ip.r", "transmit", 2, viaLanB(1)),
    ],
    delivered: true,
    failing: [],
  },
  {
    name: "lanB.r's default transmit on out-link 1 (it has no transmit table written) deleted",
    writes: [keyed("delete", "lanB.r", "transmit", 1)],
    delivered: false,
    failing: ["Fully_reachable (lanB)", "Network_satisfies_communication_demands (lanB)", LANB_SYMMETRIC, LAYERING],
    miss: "lanB.r transmit",
  },
  {
    name: "that default put back",
    writes: [keyed("insert", "lanB.r", "transmit", 1, physical)],
    delivered: true,
    failing: [],
  },
  {
    name: "lanB.r's session 1 pushes another source address (no row of the description)",
    writes: [keyed("modify", "lanB.r", "send", 1, push(H2_MAC, R_MAC + 1n))],
    delivered: true,
    failing: ["Only_authentic_traffic_delivered (lanB)"],
  },
  {
    name: "lanB.r's session 1 pushes a destination no one takes",
    writes: [keyed("modify", "lanB.r", "send", 1, push(H2_MAC + 1n, R_MAC))],
    delivered: false,
    failing: [LANB_SYMMETRIC, LAYERING],
  },
];

function ipPacket(): Uint8Array {
  for (const b of openCapture(`${root}pcaps/example-router-h1.pcap`).batches()) {
    const at = b.offset[0] ?? 0;
    // The Ethernet header off: what h1's ip member hands lanA's session 1.
    return b.data.slice(at + 14, at + (b.capLen[0] ?? 0));
  }
  throw new Error("empty capture");
}

/** What an analysis says of h1's packets to h2: whether ip.h1 reaches ip.h2, the misses, the failing properties. */
function said(a: Analysis, relations: Relations): { reaches: boolean; misses: string[]; failing: string[] } {
  const ip = a.components.find((c) => c.name === "ip");
  const rel = ip === undefined ? undefined : relations.relation.get(ip);
  const name = (m: number): string => a.member(m).member.qualified;
  const holes = [...relations.relation.values()].flatMap((r) => r.holes());
  const misses = [...new Set(holes.map((h) => `${name(h.hole.member)} ${h.hole.table}`))].sort();
  const failing = currentProperties(a, relations)
    .filter((p) => !p.holds)
    .map((p) => p.name);
  return { reaches: rel?.reaches(index("ip.h1"), index("ip.h2")) ?? false, misses, failing };
}

function fresh(engine: Engine): ReturnType<typeof said> {
  const a = new Analysis(compiled);
  a.apply(a.changesFrom(engine.installed));
  a.setOthers(otherEntries(engine.installed, engine.ledger));
  const relation = new Map(a.components.map((c) => [c, new ComponentRelation(a, c)]));
  const traffic = new Map(a.components.map((c) => [c, trafficRelation(a, c)]));
  return said(a, { relation, traffic });
}

describe("a controller's transmit and send entries are analysed as the rows they are", () => {
  const engine = Engine.open({ compiled });
  engine.connect({ deliveries: true });
  const live = new LiveAnalysis(compiled);
  const from = engine.endpointAt({ kind: "session", member: index("lanA.h1"), session: 1, link: -1 }, "test");
  const packet = ipPacket();
  const delivered: string[] = [];
  engine.onDeliver((member) => delivered.push(compiled.members[member]?.qualified ?? ""));

  it.each(steps)("$name", ({ writes, delivered: reached, miss, failing }) => {
    if (writes.length > 0) expect(engine.write(writes)).toMatchObject({ ok: true });
    delivered.length = 0;
    engine.submit(from, packet);
    engine.flush();
    // The data plane first: the step does what it says.
    expect(delivered).toEqual(reached ? ["ip.h2"] : []);
    live.update(engine.installed, undefined, otherEntries(engine.installed, engine.ledger));
    const now = said(live.analysis, live.relations);
    expect(now.failing).toEqual(failing);
    if (miss !== undefined) expect(now.misses).toContain(miss);
    // Static = dynamic: the packet is lost where the analysis says h1 does not reach h2, or its link's underlay fails.
    expect(!now.reaches || now.failing.includes(LAYERING)).toBe(!reached);
    // The analysis kept up to date says what one made afresh from the same tables says.
    expect(now).toEqual(fresh(engine));
  });

  it("ends with the properties of the description once its entries are back", () => {
    expect(engine.write([keyed("modify", "lanB.r", "send", 1, described("lanB.r", "send"))]).ok).toBe(true);
    live.update(engine.installed, undefined, otherEntries(engine.installed, engine.ledger));
    expect(otherEntries(engine.installed, engine.ledger).size).toBe(0);
    const a = new Analysis(compiled);
    const relation = new Map(a.components.map((c) => [c, new ComponentRelation(a, c)]));
    const traffic = new Map(a.components.map((c) => [c, trafficRelation(a, c)]));
    expect(said(live.analysis, live.relations)).toEqual(said(a, { relation, traffic }));
    engine.stop();
  });
});
