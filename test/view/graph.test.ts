// The picture strata view draws of a description: bands in layering order, link kinds
// (physical, virtual with the sessions carrying them, bridging, shared, external), group
// junctions, machine columns, and the rows inside a band.

import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compile } from "../../src/control/compile.js";
import { loadSpec, parseSpec } from "../../src/description/load.js";
import { type ViewGraph, viewGraph } from "../../src/view/graph.js";
import { rowsInBands, stackedLeaves } from "../../src/view/layout.js";
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

describe("large graphs: the leaves under one node stand in columns, at most √(all leaves) tall", () => {
  const described = (yaml: string): ViewGraph => viewGraph(compile(parseSpec(yaml, "large.yaml")));
  /** The columns ELK is asked to make: chains of leaves, by member name. */
  const columns = (g: ViewGraph): string[] => {
    const name = (id: string): string => g.nodes.find((n) => n.id === id)?.member ?? id;
    const chains: string[][] = [];
    for (const e of stackedLeaves(g)) {
      const [from, to] = [name(e.sources[0] ?? ""), name(e.targets[0] ?? "")];
      const chain = chains.find((c) => c.at(-1) === from);
      if (chain === undefined) chains.push([from, to]);
      else chain.push(to);
    }
    return chains.map((c) => c.join(" "));
  };
  it.each([
    // 16 hosts, 4 under each edge switch: √16 = 4, so each switch's hosts are one column.
    {
      name: "a fat-tree of 2 pods, 2 edge switches each, 4 hosts each",
      graph: () => described(fatTreeSpec(2, 2, 4).yaml),
      want: [
        "lan.h1 lan.h2 lan.h3 lan.h4",
        "lan.h5 lan.h6 lan.h7 lan.h8",
        "lan.h9 lan.h10 lan.h11 lan.h12",
        "lan.h13 lan.h14 lan.h15 lan.h16",
      ],
    },
    // 9 spokes on one hub: not a tower of 9, three columns of 3.
    {
      name: "a hub with 9 spokes",
      graph: () => described(hubSpec(9)),
      want: ["lan.h1 lan.h2 lan.h3", "lan.h4 lan.h5 lan.h6", "lan.h7 lan.h8 lan.h9"],
    },
    // A ring has no leaves; a chain's two ends hang off different nodes.
    { name: "a ring", graph: () => example("one-way-ring"), want: [] },
    { name: "a chain", graph: () => example("filter-chain"), want: [] },
  ])("$name", ({ graph, want }) => {
    expect(columns(graph())).toEqual(want);
  });
});
