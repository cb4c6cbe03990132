// The overlays intent as written (docs/spec.md, Intents: `overlays:`): which
// members of the overlay network form the mesh, the underlay whose sessions
// carry its links, the encapsulation, and the range its session identifiers
// come from. The mesh's links are added to the overlay network's link drafts
// here, before identifiers are allocated (src/description/load.ts), so that
// they are links like any other: allocated, named (`s1-s2`), recorded, and
// usable by the network's other intents (l2:, routes:) and hand rows. The mesh
// is taken in key order, whatever order `members:` writes it in, so that its
// links' names, and the identifiers the allocator keys by them, do not change
// when the list is reordered.

import { excerpt } from "../errors.js";
import type { NetworkContext } from "../description/context.js";
import { type EndpointAt, type Draft, linkName } from "../description/link-drafts.js";
import type { Path, Problems } from "../description/problems.js";
import type { RawMemberSet, RawNetwork, RawOverlays } from "../description/raw.js";
import { didYouMean } from "../description/suggest.js";
import type { TopologyDraft } from "../description/topology.js";
import type { MemberSpec, NetworkSpec } from "../description/types.js";

/** How one encapsulation carries an overlay: its underlay designs, the field that tells its sessions apart. */
export interface Encapsulation {
  readonly name: string;
  /** Underlay designs it rides (the underlay network's header). */
  readonly underlays: readonly string[];
  /** The underlay's header field that identifies a session (allocated per overlay link); none for IP in IP. */
  readonly idField?: string;
  /** Header fields of the underlay fixed by the overlay's design; undefined when the overlay cannot be carried. */
  carries(overlay: string, underlay: string): Readonly<Record<string, number>> | undefined;
}

const ETHERTYPES: Readonly<Record<string, number>> = { ethernet: 0x6558, ipv4: 0x0800, ipv6: 0x86dd, mpls: 0x8847 };
/** IP protocol numbers of what IP in IP carries: IPv4 (4), IPv6 (41). */
const IP_PROTOCOLS: Readonly<Record<string, number>> = { ipv4: 4, ipv6: 41 };

/** The encapsulations the data plane carries as layering (docs/spec.md, Layering), by name. */
export const ENCAPSULATIONS: ReadonlyMap<string, Encapsulation> = new Map(
  (
    [
      { name: "vxlan", underlays: ["vxlan"], idField: "vni", carries: (o) => (o === "ethernet" ? {} : undefined) },
      {
        name: "gre",
        underlays: ["gre"],
        idField: "key",
        carries: (o) => (ETHERTYPES[o] === undefined ? undefined : { type: ETHERTYPES[o], keyed: 1 }),
      },
      {
        name: "ip-in-ip",
        underlays: ["ipv4", "ipv6"],
        carries: (o, u) => {
          const p = IP_PROTOCOLS[o];
          return p === undefined ? undefined : u === "ipv4" ? { proto: p } : { next: p };
        },
      },
    ] satisfies Encapsulation[]
  ).map((e) => [e.name, e]),
);

/** The overlays intent of a network, read against it and its underlay. */
export interface OverlaysIntent {
  readonly encapsulation: Encapsulation;
  readonly underlay: NetworkSpec;
  /** The mesh's members, in key order (./overlays-read.ts meshMembers). */
  readonly mesh: readonly MemberSpec[];
  /** The identifiers allowed, when the encapsulation has an identifier field. */
  readonly ids?: { readonly lo: number; readonly hi: number };
}

/**
 * The mesh: members of the network (unknown ones reported with `problems`, or left out without), in key order, not
 * the order `members:` writes them: the pairs, their links' names and their identifiers follow from the set alone.
 */
export function meshMembers(
  members: readonly MemberSpec[],
  set: RawMemberSet | undefined,
  network: string,
  report?: { problems: Problems; path: Path },
): MemberSpec[] {
  if (set === undefined || set === "*") return [...members].sort(keyOrder);
  const keys = typeof set === "string" ? [set] : set;
  const byKey = new Map(members.map((m) => [m.key, m]));
  const out: MemberSpec[] = [];
  keys.forEach((k, i) => {
    const m = byKey.get(k);
    if (m !== undefined) {
      if (!out.includes(m)) out.push(m);
      return;
    }
    const all = members.map((x) => x.key);
    report?.problems.add(
      typeof set === "string" ? report.path : [...report.path, i],
      `no member '${excerpt(k)}' in network ${network}`,
      `${didYouMean(k, all)}members: ${all.slice(0, 8).join(", ")}${all.length > 8 ? ", …" : ""}`,
    );
  });
  return out.sort(keyOrder);
}

function keyOrder(a: MemberSpec, b: MemberSpec): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** The overlay link between two mesh members: a two-way link named by their keys in order (`a-b`, never `b-a`). */
export function meshLinkName(a: string, b: string): string {
  return a < b ? `${a}-${b}` : `${b}-${a}`;
}

/**
 * The network's drafts with its mesh's links after those written (every pair of mesh members, in key order). A written
 * link with a mesh link's name is refused here, as that link's: the mesh link is left out, the network incomplete.
 */
export function withMeshLinks(ctx: NetworkContext, raw: RawNetwork, draft: TopologyDraft): TopologyDraft {
  const o = raw.overlays;
  if (o === undefined || ctx.schemaError(["overlays"])) return draft;
  const path = [...ctx.path, "overlays"];
  const mesh = meshMembers(draft.members, o.members, ctx.network, {
    problems: ctx.problems,
    path: [...path, "members"],
  });
  const drafts = [...draft.drafts];
  const written = new Map(drafts.map((d) => [linkName(d), d]));
  let index = raw.links?.length ?? 0;
  let complete = draft.complete;
  const end = (member: string): EndpointAt => ({ member, ident: 0, written: false, path });
  for (const [i, a] of mesh.entries())
    for (const b of mesh.slice(i + 1)) {
      const hand = written.get(meshLinkName(a.key, b.key));
      if (hand !== undefined) {
        nameClash(ctx, hand, a.key, b.key);
        complete = false; // as for any refused link: the network's rows and intents are not checked against the rest
        continue;
      }
      const link: Draft = {
        index: index++,
        path,
        raw: { from: a.key, to: b.key, mode: "two-way" },
        mode: "two-way",
        from: end(a.key),
        to: [end(b.key)],
        external: undefined,
      };
      drafts.push(link);
    }
  return { ...draft, drafts, complete };
}

/** A written link named as the mesh link between `a` and `b`: one line at the written link. */
function nameClash(ctx: NetworkContext, hand: Draft, a: string, b: string): void {
  const named = hand.raw.name !== undefined;
  ctx.problems.add(
    named ? [...hand.path, "name"] : hand.path,
    `link name '${excerpt(linkName(hand))}' is the name of ${ctx.network}'s overlay mesh link between ${a} and ${b} ` +
      "(overlays:)",
    `${named ? "rename this link" : "give this link a name of its own: NAME"}, or leave ${a} or ${b} out of ` +
      "overlays: members:",
  );
}

/** The intent read against the description's networks; undefined when something is wrong (reported). */
export function readOverlays(
  problems: Problems,
  net: NetworkSpec,
  raw: RawOverlays,
  networks: ReadonlyMap<string, NetworkSpec>,
): OverlaysIntent | undefined {
  const path = ["networks", net.name, "overlays"];
  const encapsulation = readEncapsulation(problems, raw.encapsulation, [...path, "encapsulation"]);
  const underlay = readUnderlay(problems, net, raw.underlay, networks, [...path, "underlay"]);
  if (encapsulation === undefined || underlay === undefined) return undefined;
  if (encapsulation.carries(net.design.name, underlay.design.name) === undefined) {
    problems.add(
      [...path, "encapsulation"],
      `${encapsulation.name} cannot carry ${net.name} (header ${net.design.name}) over ${underlay.name} ` +
        `(header ${underlay.design.name})`,
      carriesText(),
    );
    return undefined;
  }
  const ids = raw.ids === undefined ? undefined : readIds(problems, encapsulation, underlay, raw.ids, [...path, "ids"]);
  if (raw.ids !== undefined && ids === undefined) return undefined;
  const mesh = meshMembers(net.members, raw.members, net.name);
  return { encapsulation, underlay, mesh, ...(ids === undefined ? {} : { ids }) };
}

function readEncapsulation(problems: Problems, name: string, path: Path): Encapsulation | undefined {
  const e = ENCAPSULATIONS.get(name);
  if (e !== undefined) return e;
  const names = [...ENCAPSULATIONS.keys()];
  problems.add(
    path,
    name === "mpls"
      ? "mpls is not an overlays encapsulation: an MPLS member's name is its label, so a label cannot also tell " +
          "its sessions apart"
      : `unknown encapsulation '${excerpt(name)}'`,
    `${name === "mpls" ? "write MPLS label stacks as rows under tables:; " : didYouMean(name, names)}` +
      `encapsulations: ${names.join(", ")}`,
  );
  return undefined;
}

function readUnderlay(
  problems: Problems,
  net: NetworkSpec,
  name: string,
  networks: ReadonlyMap<string, NetworkSpec>,
  path: Path,
): NetworkSpec | undefined {
  const u = networks.get(name);
  if (u !== undefined && u !== net) return u;
  const others = [...networks.keys()].filter((n) => n !== net.name);
  problems.add(
    path,
    u === net ? `${net.name} cannot ride itself` : `there is no network '${excerpt(name)}'`,
    `${didYouMean(name, others)}the underlay is another network: ${others.join(", ") || "(none)"}`,
  );
  return undefined;
}

/** "LO..HI", each a value of the identifier field. */
function readIds(
  problems: Problems,
  e: Encapsulation,
  underlay: NetworkSpec,
  text: string,
  path: Path,
): { lo: number; hi: number } | undefined {
  const field = e.idField === undefined ? undefined : underlay.design.fields.find((f) => f.name === e.idField);
  if (field === undefined) {
    problems.add(
      path,
      `${e.name} has no session identifier to allocate`,
      "leave ids out: sessions are told apart by their addresses",
    );
    return undefined;
  }
  const [lo, hi] = text.split("..").map((x) => Number(x));
  const max = 2 ** field.bits - 1;
  if (lo === undefined || hi === undefined || !(lo <= hi) || hi > max) {
    problems.add(
      path,
      `ids ${excerpt(text)} is not a range of ${field.name}s (${field.bits} bits)`,
      `write LO..HI with LO ≤ HI ≤ ${max}, like 5000..5999`,
    );
    return undefined;
  }
  return { lo, hi };
}

/** What each encapsulation carries, for messages. */
function carriesText(): string {
  return (
    "vxlan carries ethernet over vxlan; gre carries ethernet, ipv4, ipv6 or mpls over gre; " +
    "ip-in-ip carries ipv4 or ipv6 over ipv4 or ipv6"
  );
}
