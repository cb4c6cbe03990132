// The groups of members the model's relations range over (seed §2.6, §5.1,
// §5.3): each network; networks joined by bridging links (a bridged set); and
// bridged sets joined by shared links (a subduction group).

import type { CompiledSpec } from "../control/compiled.js";
import type { Topology } from "../model/topology.js";
import type { Component, ComponentKind, MemberView } from "./members.js";

export /** Networks, bridged sets (two networks or more) and subduction groups (with a shared link). */
function groupComponents(compiled: CompiledSpec, t: Topology, members: readonly MemberView[]): Component[] {
  const nets = compiled.spec.networks.map((n) => n.name);
  const netOf = (m: number): string => t.member(m).network.name;
  const find = (parent: Map<string, string>, x: string): string => {
    let r = x;
    while (parent.get(r) !== r) r = parent.get(r) ?? r;
    return r;
  };
  const union = (parent: Map<string, string>, a: string, b: string): void => {
    const ra = find(parent, a);
    const rb = find(parent, b);
    if (ra !== rb) parent.set(ra < rb ? rb : ra, ra < rb ? ra : rb);
  };
  const bridged = new Map(nets.map((n) => [n, n]));
  for (const l of t.links) {
    if (l === undefined) continue;
    const ends = [l.sender, ...l.receivers.map((r) => r.member)].filter((m) => m >= 0).map(netOf);
    for (const n of ends) union(bridged, ends[0] ?? n, n);
  }
  const sub = new Map(bridged);
  let shared = false;
  for (const net of compiled.spec.networks) {
    for (const l of net.links) {
      if (l.shared === undefined) continue;
      shared = true;
      union(sub, find(bridged, net.name), find(bridged, l.shared));
    }
  }
  const make = (kind: ComponentKind, networks: readonly string[]): Component => {
    const set = new Set(networks);
    const ms = members.filter((v) => set.has(v.member.network.name));
    const has = new Uint8Array(members.length);
    for (const v of ms) has[v.index] = 1;
    const first = ms[0];
    if (first === undefined) throw new Error(`no members in ${networks.join("+")}`);
    return {
      kind,
      name: networks.join("+"),
      networks,
      members: ms.map((v) => v.index),
      has,
      shared: kind === "subduction",
      space: first.space,
      decrements: ms.some((v) => v.decrements),
    };
  };
  const groups = (parent: Map<string, string>): string[][] => {
    const by = new Map<string, string[]>();
    for (const n of nets) {
      const r = find(parent, n);
      by.set(r, [...(by.get(r) ?? []), n]);
    }
    return [...by.values()];
  };
  const out = nets.map((n) => make("network", [n]));
  for (const g of groups(bridged)) if (g.length > 1) out.push(make("bridged", g));
  if (shared)
    for (const g of groups(sub))
      if (g.some((n) => compiled.spec.networks.find((x) => x.name === n)?.links.some((l) => l.shared !== undefined)))
        out.push(make("subduction", g));
  return out;
}
