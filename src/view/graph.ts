// A compiled description as strata view draws it: each network a band, overlays above
// the networks they are layered on; each member a node in its network's band, placed in
// its machine's column; each declared link one edge (both directions of a two-way link
// together, as they share one recording); an external end and a group's junction as small
// nodes of their own. Everything is named as traces and summaries name it: a member as
// "network.key", a link by its qualified name "network.link".

import type { CompiledLink, CompiledSpec } from "../control/compiled.js";
import type { LinkMode } from "../description/types.js";

export type NodeKind = "member" | "external" | "junction";

export interface ViewNode {
  /** "m<member index>", "x<link index>" (an external end), "j<link index>" (a group link's junction). */
  readonly id: string;
  readonly kind: NodeKind;
  /** The network whose band holds the node. */
  readonly network: number;
  /** The member's key, the external end's name, the group's name. */
  readonly label: string;
  /** A member: "network.key", as traces and summaries name it. */
  readonly member?: string;
  /** A member: its name in the design's notation (its address). */
  readonly name?: string;
  readonly role?: "user" | "infra";
  readonly machine?: string;
}

/** How a link is implemented, and so how it is drawn. */
export type LinkKind = "physical" | "virtual" | "external";

export interface ViewSegment {
  readonly from: string;
  readonly to: string;
  /** The member the segment reaches, when a copy on it reaches one member only (a group link's receiver). */
  readonly receiver?: string;
}

export interface ViewLink {
  /** "network.name": the recording links/<name>.pcap, summary.json's key, the trace's name for it. */
  readonly qualified: string;
  readonly name: string;
  readonly network: number;
  readonly mode: LinkMode;
  readonly kind: LinkKind;
  /** Layering: the underlay sessions that implement it, "lan.1" (network.session), one per sending end. */
  readonly sessions: readonly string[];
  /** Bridging: the link joins members of two networks. */
  readonly bridging: boolean;
  /** Subduction: the overlay whose shared member shares the link. */
  readonly shared?: string;
  readonly group?: string;
  readonly external?: string;
  readonly segments: readonly ViewSegment[];
}

export interface ViewNetwork {
  readonly index: number;
  readonly name: string;
  readonly design: string;
  /** 0 is the top band. Overlays sit above the networks they are layered on. */
  readonly band: number;
  /** Networks this one is layered on (layering and subduction), by name. */
  readonly underlays: readonly string[];
}

export interface ViewMachine {
  readonly name: string;
  /** Its members' node ids, top band first. */
  readonly nodes: readonly string[];
}

export interface ViewGraph {
  readonly file: string;
  readonly networks: readonly ViewNetwork[];
  readonly nodes: readonly ViewNode[];
  readonly links: readonly ViewLink[];
  /** Machines that host members of more than one network: the columns. */
  readonly machines: readonly ViewMachine[];
}

export const memberNode = (index: number): string => `m${index}`;

export function viewGraph(compiled: CompiledSpec): ViewGraph {
  const networks = bands(compiled);
  const nodes: ViewNode[] = compiled.members.map((m) => ({
    id: memberNode(m.index),
    kind: "member",
    network: m.network,
    label: m.key,
    member: m.qualified,
    name: m.spec.name,
    role: m.spec.role,
    machine: compiled.machines[m.machine] ?? "",
  }));
  const byName = new Map<string, CompiledLink[]>();
  for (const l of compiled.links) {
    const same = byName.get(l.qualified);
    if (same === undefined) byName.set(l.qualified, [l]);
    else same.push(l);
  }
  const links: ViewLink[] = [];
  for (const [qualified, directions] of byName) {
    const first = directions[0] as CompiledLink;
    const spec = first.spec;
    const sessions = [...new Set(directions.flatMap((l) => sessionOf(compiled, l)))];
    const external = first.external;
    const group = spec.group;
    const segments: ViewSegment[] = [];
    // An external end is a node of its own, beside the member it is linked to.
    const outside = `x${first.index}`;
    if (external !== undefined) nodes.push({ id: outside, kind: "external", network: first.network, label: external });
    const sender = first.sender < 0 ? outside : memberNode(first.sender);
    const receivers = first.receivers.length === 0 ? [outside] : first.receivers.map((r) => memberNode(r.member));
    if (group !== undefined) {
      const junction = `j${first.index}`;
      nodes.push({ id: junction, kind: "junction", network: first.network, label: group });
      segments.push({ from: sender, to: junction });
      for (const to of receivers) segments.push({ from: junction, to, receiver: memberOf(nodes, to) ?? to });
    } else {
      for (const to of receivers) segments.push({ from: sender, to });
    }
    const ends = "external" in spec.from ? [] : [spec.from, ...(Array.isArray(spec.to) ? spec.to : [])];
    links.push({
      qualified,
      name: first.name,
      network: first.network,
      mode: first.mode,
      kind: sessions.length > 0 ? "virtual" : external !== undefined ? "external" : "physical",
      sessions,
      bridging: ends.some((e) => "network" in e && e.network !== undefined),
      ...(spec.shared !== undefined ? { shared: spec.shared } : {}),
      ...(group !== undefined ? { group } : {}),
      ...(external !== undefined ? { external } : {}),
      segments,
    });
  }
  const machines: ViewMachine[] = [];
  const onMachine = new Map<number, number[]>();
  for (const m of compiled.members) {
    const list = onMachine.get(m.machine);
    if (list === undefined) onMachine.set(m.machine, [m.index]);
    else list.push(m.index);
  }
  const bandOf = (member: number): number => networks[compiled.members[member]?.network ?? 0]?.band ?? 0;
  for (const [machine, members] of onMachine) {
    if (new Set(members.map((m) => compiled.members[m]?.network)).size < 2) continue;
    members.sort((a, b) => bandOf(a) - bandOf(b) || a - b);
    machines.push({ name: compiled.machines[machine] ?? "", nodes: members.map(memberNode) });
  }
  return { file: compiled.spec.file, networks, nodes, links, machines };
}

function memberOf(nodes: readonly ViewNode[], id: string): string | undefined {
  return id.startsWith("m") ? nodes[Number(id.slice(1))]?.member : undefined;
}

/** The underlay sessions a direction of a link is implemented by: its sender's transmit row for it. */
function sessionOf(compiled: CompiledSpec, l: CompiledLink): string[] {
  const sender = compiled.members[l.sender];
  if (sender === undefined) return [];
  const rows = compiled.networks[sender.network]?.spec.tables.get(sender.key)?.transmit?.rows ?? [];
  return rows.flatMap((r) =>
    r.out === l.senderOutLink && r.action.kind === "session" ? [`${r.action.network}.${r.action.session}`] : [],
  );
}

/**
 * Each network's band. A network is layered on the networks its transmit rows name sessions of,
 * those whose receive rows pop into it and those that share links with it (subduction); it sits
 * one band level above the highest of them. Networks of one level keep the description's order.
 */
function bands(compiled: CompiledSpec): ViewNetwork[] {
  const under = new Map<string, Set<string>>(compiled.networks.map((n) => [n.name, new Set<string>()]));
  const add = (overlay: string, underlay: string): void => {
    if (overlay !== underlay) under.get(overlay)?.add(underlay);
  };
  for (const n of compiled.networks) {
    for (const tables of n.spec.tables.values()) {
      for (const r of tables.transmit?.rows ?? []) if (r.action.kind === "session") add(n.name, r.action.network);
      for (const r of tables.receive?.rows ?? []) if (r.action.kind === "link") add(r.action.network, n.name);
    }
    for (const l of n.spec.links) if (l.shared !== undefined) add(l.shared, n.name);
  }
  const level = new Map<string, number>();
  const levelOf = (name: string, seen: ReadonlySet<string>): number => {
    const known = level.get(name);
    if (known !== undefined) return known;
    // The loader refuses a layering cycle; should one get here, it is cut rather than followed.
    const below = [...(under.get(name) ?? [])].filter((u) => !seen.has(u));
    let v = 0;
    for (const u of below) v = Math.max(v, 1 + levelOf(u, new Set([...seen, name])));
    level.set(name, v);
    return v;
  };
  const order = [...compiled.networks].sort(
    (a, b) => levelOf(b.name, new Set()) - levelOf(a.name, new Set()) || a.index - b.index,
  );
  const band = new Map(order.map((n, i) => [n.index, i]));
  return compiled.networks.map((n) => ({
    index: n.index,
    name: n.name,
    design: n.spec.design.name,
    band: band.get(n.index) ?? 0,
    underlays: [...(under.get(n.name) ?? [])],
  }));
}
