// The picture strata view draws of a description: bands in layering order, link kinds
// (physical, virtual with the sessions carrying them, bridging, shared, external), group
// junctions, machine columns, and the rows inside a band.

import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compile } from "../../src/control/compile.js";
import { loadSpec, parseSpec } from "../../src/description/load.js";
import { type ViewGraph, viewGraph } from "../../src/view/graph.js";
import { layOut } from "../../src/view/layout.js";
import { leafBlocks, rowsInBands } from "../../src/view/shape.js";
import { fatTreeSpec, hubSpec } from "../../bench/dataplane.js";

const root = new URL("../..", import.meta.url).pathname;
const example = (name: string): ViewGraph => viewGraph(compile(loadSpec(join(root, "examples", name, "network.yaml"))));
const bandsOf = (g: ViewGraph): string[] => [...g.networks].sort((a, b) => a.band - b.band).map((n) => n.name);
const link = (g: ViewGraph, qualified: string) => g.links.find((l) => l.qualified === qualified);

describe("bands: overlays above the networks they are layered on", () => {
  it.each([
    { example: "vxlan", bands: ["tenant", "overlay", "lan"] },
    { example: "ip-router", bands: ["ip", "lanA", "lanB"] },
    { example: "gre", bands: ["tunnel", "gre", "lan"] },
    { example: "subduction", bands: ["tenant", "core"] },
    { example: "l2vpn", bands: ["lanA", "lanB", "wan"] },
    { example: "bridged-lans", bands: ["lanA", "lanB"] },
    { example: "hub-and-spoke", bands: ["lan"] },
  ])("$example: $bands", ({ example: name, bands }) => {
    expect(bandsOf(example(name))).toEqual(bands);
  });
});

describe("links: one per capture, drawn by how they are implemented", () => {
  it.each([
    {
      example: "vxlan",
      capture: "overlay.a.1-b.1",
      want: { kind: "virtual", sessions: ["lan.1"], bridging: false, mode: "two-way" },
    },
    { example: "vxlan", capture: "tenant.vm3.1-vm5.1", want: { kind: "virtual", sessions: ["overlay.1"] } },
    { example: "vxlan", capture: "lan.a.1-sw.1", want: { kind: "physical", sessions: [] } },
    {
      example: "vxlan",
      capture: "lan.tap",
      want: { kind: "external", external: "tap", segments: [{ from: expect.stringMatching(/^x/), to: "m2" }] },
    },
    { example: "l2vpn", capture: "lanA.trunk", want: { kind: "virtual", sessions: ["wan.1"], bridging: true } },
    { example: "bridged-lans", capture: "lanA.trunk", want: { kind: "physical", bridging: true } },
    { example: "subduction", capture: "core.to-mb", want: { kind: "physical", shared: "tenant" } },
  ])("$example $capture", ({ example: name, capture, want }) => {
    expect(link(example(name), capture)).toMatchObject(want);
  });

  it("a group link has a junction, and a segment to each receiver naming it", () => {
    const g = viewGraph(
      compile(
        parseSpec(
          `networks:
  lan:
    header: ethernet
    members:
      sw: { name: "02:00:00:00:00:fe", role: infra }
      h1: { name: "02:00:00:00:00:01" }
      h2: { name: "02:00:00:00:00:02" }
    links:
      - { from: sw.5, to: [h1.2, h2.2], mode: allcast, group: everyone }
`,
          "group.yaml",
        ),
      ),
    );
    const l = link(g, "lan.sw.5-everyone");
    expect(l?.group).toBe("everyone");
    expect(l?.segments).toEqual([
      { from: "m0", to: expect.stringMatching(/^j/) },
      { from: expect.stringMatching(/^j/), to: "m1", receiver: "lan.h1" },
      { from: expect.stringMatching(/^j/), to: "m2", receiver: "lan.h2" },
    ]);
    expect(g.nodes.find((n) => n.kind === "junction")?.label).toBe("everyone");
  });
});

describe("machines: a column for each machine with members in several networks", () => {
  it.each([
    {
      example: "vxlan",
      machines: { a: ["tenant.vm3", "overlay.a", "lan.a"], b: ["tenant.vm5", "overlay.b", "lan.b"] },
    },
    {
      example: "ip-router",
      machines: { h1: ["ip.h1", "lanA.h1"], r: ["ip.r", "lanA.r", "lanB.r"], h2: ["ip.h2", "lanB.h2"] },
    },
    { example: "subduction", machines: { gw: ["tenant.gw", "core.gw"] } },
    { example: "hub-and-spoke", machines: {} },
  ])("$example", ({ example: name, machines }) => {
    const g = example(name);
    const member = (id: string): string => g.nodes.find((n) => n.id === id)?.member ?? id;
    expect(Object.fromEntries(g.machines.map((m) => [m.name, m.nodes.map(member)]))).toEqual(machines);
  });
});

describe("rows inside a band: leaves peeled, what is left last on top", () => {
  const rows = (name: string): Record<string, number | undefined> => {
    const g = example(name);
    const r = rowsInBands(g);
    return Object.fromEntries(g.nodes.map((n) => [n.member ?? n.label, r.get(n.id)]));
  };
  it.each([
    // A star: the hub on top.
    { example: "hub-and-spoke", want: { "lan.hub": 0, "lan.h1": 1, "lan.h4": 1 } },
    // A chain m0 - m1 - m2 - m3: peeled from both ends, the middle pair on top.
    { example: "filter-chain", want: { "chain.m1": 0, "chain.m2": 0, "chain.m0": 1, "chain.m3": 1 } },
    // A ring is never peeled: one row.
    { example: "one-way-ring", want: { "ring.m0": 0, "ring.m1": 0, "ring.m2": 0, "ring.m3": 0 } },
    // Two peers share a row; a switch with an external end sits above its hosts.
    { example: "vxlan", want: { "tenant.vm3": 0, "tenant.vm5": 0, "lan.sw": 0, "lan.a": 1, "lan.b": 1, tap: 1 } },
  ])("$example", ({ example: name, want }) => {
    expect(rows(name)).toMatchObject(want);
  });
});

describe("large graphs: the leaves under one node laid out by strata, in a block under it", () => {
  const described = (yaml: string): ViewGraph => viewGraph(compile(parseSpec(yaml, "large.yaml")));
  const names = (g: ViewGraph, ids: readonly string[]): string[] =>
    ids.map((id) => g.nodes.find((n) => n.id === id)?.member ?? id);
  it.each([
    {
      name: "a fat-tree of 2 pods, 2 edge switches each, 4 hosts each: each edge switch's hosts",
      graph: () => described(fatTreeSpec(2, 2, 4).yaml),
      want: {
        "lan.e1": ["lan.h1", "lan.h2", "lan.h3", "lan.h4"],
        "lan.e2": ["lan.h5", "lan.h6", "lan.h7", "lan.h8"],
        "lan.e3": ["lan.h9", "lan.h10", "lan.h11", "lan.h12"],
        "lan.e4": ["lan.h13", "lan.h14", "lan.h15", "lan.h16"],
      },
    },
    {
      name: "a hub: its spokes",
      graph: () => described(hubSpec(3)),
      want: { "lan.hub": ["lan.h1", "lan.h2", "lan.h3"] },
    },
    // A chain's two ends hang off different nodes; a ring has no leaves.
    {
      name: "a chain",
      graph: () => example("filter-chain"),
      want: { "chain.m1": ["chain.m0"], "chain.m2": ["chain.m3"] },
    },
    { name: "a ring", graph: () => example("one-way-ring"), want: {} },
    // The switches joined across networks stay with ELK; their hosts do not.
    {
      name: "bridged LANs",
      graph: () => example("bridged-lans"),
      want: { "lanA.sw1": ["lanA.h1", "lanA.h2"], "lanB.sw2": ["lanB.h3", "lanB.h4"] },
    },
    // Members standing in a machine's column stay with ELK, which keeps the column straight.
    { name: "vxlan: every host on a machine of several networks", graph: () => example("vxlan"), want: {} },
  ])("$name", ({ graph, want }) => {
    const g = graph();
    const blocks = Object.fromEntries(
      [...leafBlocks(g)].map(([parent, leaves]) => [names(g, [parent])[0], names(g, leaves)]),
    );
    expect(blocks).toEqual(want);
  });

  /** Each parent's leaves as laid out: columns left to right, each top to bottom, and whether all lie below it. */
  const columns = async (g: ViewGraph): Promise<Record<string, { columns: string[][]; below: boolean }>> => {
    const layout = await layOut(g);
    const out: Record<string, { columns: string[][]; below: boolean }> = {};
    for (const [parent, leaves] of leafBlocks(g)) {
      const top = layout.nodes.get(parent);
      const boxes = leaves.map((id) => ({ id, box: layout.nodes.get(id) }));
      const xs = [...new Set(boxes.map((b) => b.box?.x ?? NaN))].sort((a, b) => a - b);
      out[names(g, [parent])[0] ?? parent] = {
        columns: xs.map((x) =>
          names(
            g,
            boxes
              .filter((b) => b.box?.x === x)
              .sort((a, b) => (a.box?.y ?? 0) - (b.box?.y ?? 0))
              .map((b) => b.id),
          ),
        ),
        below: boxes.every((b) => top !== undefined && (b.box?.y ?? 0) > top.y + top.height),
      };
    }
    return out;
  };
  const hosts = (from: number, to: number): string[] =>
    Array.from({ length: to - from + 1 }, (_, i) => `lan.h${from + i}`);
  it.each([
    // 400 spokes: columns of √400 = 20, in the description's order.
    {
      name: "a hub of 400 spokes: 20 columns of 20",
      graph: () => described(hubSpec(400)),
      want: {
        "lan.hub": { columns: Array.from({ length: 20 }, (_, c) => hosts(20 * c + 1, 20 * c + 20)), below: true },
      },
    },
    // 320 hosts, 10 under each edge switch: √320 is past 17, so each switch's hosts are one column.
    {
      name: "a fat-tree of 320 hosts, 10 under each of 32 edge switches: a column of 10 under each",
      graph: () => described(fatTreeSpec(4, 8, 10).yaml),
      want: Object.fromEntries(
        Array.from({ length: 32 }, (_, e) => [
          `lan.e${e + 1}`,
          { columns: [hosts(10 * e + 1, 10 * e + 10)], below: true },
        ]),
      ),
    },
  ])("$name", async ({ graph, want }) => {
    expect(await columns(graph())).toEqual(want);
  });

  it("a block's links run from its parent to each of its leaves", async () => {
    const g = described(hubSpec(400));
    const layout = await layOut(g);
    const hub = layout.nodes.get("m0");
    expect(layout.segments).toHaveLength(400);
    for (const s of layout.segments) {
      const link = g.links.find((l) => l.qualified === s.link);
      const seg = link?.segments[s.segment];
      const [from, to] = [layout.nodes.get(seg?.from ?? ""), layout.nodes.get(seg?.to ?? "")];
      const [first, last] = [s.points[0], s.points.at(-1)];
      // A spoke sends (h.1 → hub.N): its route leaves the spoke's left side and ends on the hub's bottom.
      expect(from).toBeDefined();
      expect(to).toBe(hub);
      expect(first).toEqual({ x: from?.x, y: (from?.y ?? 0) + (from?.height ?? 0) / 2 });
      expect(last?.y).toBe((hub?.y ?? 0) + (hub?.height ?? 0));
    }
  });
});
