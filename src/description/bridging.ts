// Links that join networks, checked once every network's members and links
// are known, before any table is: bridging links (seed §5.1) and shared links
// (subduction, seed §5.3) give members of one network identifiers in another,
// and that network's tables may name them.
//
// Bridging: a link of network N whose end is written `M:member.id` reaches a
// member of network M. The two networks have one header design; networks
// joined by bridging links form a bridged set, across which member names are
// unique and group names do not overlap member keys; a group with a receiver
// in another network is nonlocal, and its name is then one group across the set.
//
// Subduction: a link of the underlay network B written `shared: A` ends, at one
// of its ends, at two members on one machine: B's member there and the member
// of overlay A with the same name (the shared members). That member of A uses
// the link with the same identifier; no member is shared among three or more
// networks.
//
// A link refused here is reported once: the networks it would have given
// identifiers are returned, and their rows are not checked against links that
// are only partly known (./load.ts).

import type { DesignDef } from "../wire/designs.js";
import type { Path, Problems } from "./problems.js";
import { didYouMean } from "./suggest.js";
import { endName } from "./link-drafts.js";
import type { MemberLinks, Topology } from "./topology.js";
import type { Endpoint, LinkSpec, MemberSpec } from "./types.js";

export interface NetworkRead {
  readonly name: string;
  /** Groups the network declares nonlocal. */
  readonly nonlocal: ReadonlySet<string>;
  readonly design: DesignDef | undefined;
  readonly path: Path;
  readonly topology: Topology;
}

/** Joins the networks; returns those whose links are not all known, because a link between networks was refused. */
export function joinNetworks(problems: Problems, networks: readonly NetworkRead[]): ReadonlySet<string> {
  const joining = new Joining(problems, networks);
  // Bridging links: the far end's identifier joins that member's links.
  const bridges: [string, string][] = [];
  for (const net of networks) {
    for (const link of net.topology.links) {
      for (const e of ends(link)) {
        const far = joining.bridge(net, link, e);
        if (far !== undefined) bridges.push([net.name, far]);
      }
    }
  }
  checkBridgedSets(problems, networks, bridges);
  // Shared links: the overlay's shared member uses the link too, with the same identifier.
  for (const net of networks) {
    net.topology.links.forEach((link, i) => {
      if (link.shared !== undefined && !joining.joinShared(link, i, net, link.shared))
        joining.refuse(net.name, link.shared);
    });
  }
  return joining.unjoined;
}

type End = ReturnType<typeof ends>[number];

/** Networks being joined: the links between them checked one by one, and the networks a refused one leaves unjoined. */
class Joining {
  readonly unjoined = new Set<string>();
  /** "net.member" → the other network it is shared with. */
  readonly #sharedWith = new Map<string, string>();
  readonly #byName: ReadonlyMap<string, NetworkRead>;
  readonly #problems: Problems;
  readonly #networks: readonly NetworkRead[];

  constructor(problems: Problems, networks: readonly NetworkRead[]) {
    this.#problems = problems;
    this.#networks = networks;
    this.#byName = new Map(networks.map((n) => [n.name, n]));
  }

  refuse(...names: string[]): void {
    for (const n of names) this.unjoined.add(n);
  }

  /** The network a link names, of `from`'s design; why not is reported. */
  #other(name: string, from: NetworkRead, link: LinkSpec, what: string): NetworkRead | undefined {
    const net = this.#byName.get(name);
    if (net === undefined) {
      this.refuse(...this.#byName.keys()); // the network meant may be any of them
      const names = this.#networks.map((n) => n.name);
      this.#problems.addRef(
        link.at,
        `${what}: there is no network '${name}'`,
        `${didYouMean(name, names)}networks: ${names.join(", ")}`,
      );
      return undefined;
    }
    if (net.design?.name !== from.design?.name) {
      this.#problems.addRef(
        link.at,
        `${what}: ${from.name} is ${from.design?.name ?? "?"} and ${name} is ${net.design?.name ?? "?"}; bridged ` +
          `and subducted networks have one header design`,
        "join networks of one design, or layer one on the other",
      );
      return undefined;
    }
    return net;
  }

  /** An end of `net`'s link in another network: the far member's links take its identifier. The far network's name,
   * or undefined when the end is in `net` or was refused. */
  bridge(net: NetworkRead, link: LinkSpec, { end, sends, receives }: End): string | undefined {
    if (end.network === undefined) return undefined;
    const far = this.#other(end.network, net, link, `link ${link.name} reaches ${endName(end)}`);
    const m = far?.topology.members.find((x) => x.key === end.member);
    if (far !== undefined && m === undefined) {
      const keys = far.topology.members.map((x) => x.key);
      this.#problems.addRef(
        link.at,
        `link ${link.name}: no member '${end.member}' in network ${far.name}`,
        `${didYouMean(end.member, keys)}members of ${far.name}: ${keys.join(", ")}`,
      );
    }
    if (
      far === undefined ||
      m === undefined ||
      !usePort(this.#problems, far, m, end.ident, link, sends, receives, `${net.name} link ${link.name}`)
    ) {
      this.refuse(net.name, end.network);
      return undefined;
    }
    return far.name;
  }

  /** Whether shared link `link` (links[i] of `net`) joins its overlay's shared member; why it does not is reported. */
  joinShared(link: LinkSpec, i: number, net: NetworkRead, shared: string): boolean {
    const overlay = this.#other(shared, net, link, `shared link ${link.name}`);
    if (overlay === undefined) return false;
    if (overlay === net) {
      this.#problems.addRef(
        link.at,
        `link ${link.name} is shared with its own network`,
        "shared names the overlay network whose member shares the link",
      );
      return false;
    }
    const at = this.#sharedEnd(link, net, overlay);
    if (at === undefined || !this.#shareMembers(link, [net.name, at.m.key], [overlay.name, at.partner.key]))
      return false;
    const by = `${net.name} shared link ${link.name}`;
    if (!usePort(this.#problems, overlay, at.partner, at.end.ident, link, at.sends, at.receives, by)) return false;
    (net.topology.links as LinkSpec[])[i] = { ...link, sharedAt: { member: at.m.key, partner: at.partner.key } };
    return true;
  }

  /** The one end of a shared link whose member has a partner in the overlay, of its name on its machine. */
  #sharedEnd(
    link: LinkSpec,
    net: NetworkRead,
    overlay: NetworkRead,
  ): (End & { m: MemberSpec; partner: MemberSpec }) | undefined {
    const candidates = ends(link).flatMap((e) => {
      const m = net.topology.members.find((x) => x.key === e.end.member);
      const partner =
        m === undefined
          ? undefined
          : overlay.topology.members.find((x) => x.machine === m.machine && x.nameValue === m.nameValue);
      return m === undefined || partner === undefined ? [] : [{ ...e, m, partner }];
    });
    const at = candidates[0];
    if (at !== undefined && candidates.length === 1) return at;
    this.#problems.addRef(
      link.at,
      at === undefined
        ? `no member of ${overlay.name} has the name and machine of an end of shared link ${link.name}`
        : `both ends of shared link ${link.name} have a member of ${overlay.name} with their name and machine`,
      `the shared members are one member of ${net.name} and one of ${overlay.name} with the same name on the ` +
        `same machine, at exactly one end of the link`,
    );
    return undefined;
  }

  /** Records two members, each [network, key], as shared with each other's network, unless either is shared with a
   * third. */
  #shareMembers(link: LinkSpec, [net, key]: [string, string], [overlay, partnerKey]: [string, string]): boolean {
    const pairs = [
      [`${net}.${key}`, overlay, `${overlay}.${partnerKey}`],
      [`${overlay}.${partnerKey}`, net, `${net}.${key}`],
    ] as const;
    for (const [m, network, other] of pairs) {
      const earlier = this.#sharedWith.get(m);
      if (earlier !== undefined && earlier !== network) {
        this.#problems.addRef(
          link.at,
          `${m} is already shared with ${earlier}; with ${other} it would be shared among three networks`,
          "a member is shared with at most one other network (seed §5.3.2)",
        );
        return false;
      }
    }
    for (const [m, network] of pairs) this.#sharedWith.set(m, network);
    return true;
  }
}

/** The ends of a link inside networks, and whether each sends and receives on it. */
function ends(link: LinkSpec): { end: Endpoint; sends: boolean; receives: boolean }[] {
  const twoWay = link.mode === "two-way";
  const out: { end: Endpoint; sends: boolean; receives: boolean }[] = [];
  if (!("external" in link.from)) out.push({ end: link.from, sends: true, receives: twoWay });
  if (Array.isArray(link.to))
    for (const r of link.to as readonly Endpoint[]) out.push({ end: r, sends: twoWay, receives: true });
  return out;
}

/** Gives member `m` of `net` identifier `ident` for `link`, unless it names another of its links there (reported:
 * false). */
function usePort(
  problems: Problems,
  net: NetworkRead,
  m: MemberSpec,
  ident: number,
  link: LinkSpec,
  sends: boolean,
  receives: boolean,
  what: string,
): boolean {
  const links: MemberLinks | undefined = net.topology.memberLinks.get(m.key);
  if (links === undefined) return false;
  const taken = links.outs.get(ident) ?? links.ins.get(ident);
  if (taken !== undefined && taken !== link) {
    problems.addRef(
      link.at,
      `${what}: ${net.name}.${m.key} already uses identifier ${ident} for link ${taken.name}`,
      `give this link an identifier that ${m.key} does not use yet`,
    );
    return false;
  }
  if (sends) links.outs.set(ident, link);
  if (receives) links.ins.set(ident, link);
  return true;
}

/** Seed §5.1.1: across networks bridged together, names are unique and groups are local or nonlocal. */
function checkBridgedSets(
  problems: Problems,
  networks: readonly NetworkRead[],
  bridges: readonly [string, string][],
): void {
  const parent = new Map(networks.map((n) => [n.name, n.name]));
  const root = (n: string): string => {
    let r = n;
    while (parent.get(r) !== r) r = parent.get(r) ?? r;
    return r;
  };
  for (const [a, b] of bridges) parent.set(root(a), root(b));
  const sets = new Map<string, NetworkRead[]>();
  for (const n of networks) sets.set(root(n.name), [...(sets.get(root(n.name)) ?? []), n]);
  for (const set of sets.values()) {
    if (set.length < 2) continue;
    const together = set.map((n) => n.name).join(", ");
    const names = new Map<bigint, string>();
    const keys = new Set<string>();
    for (const net of set) {
      for (const m of net.topology.members) {
        keys.add(m.key);
        const owner = names.get(m.nameValue);
        if (owner !== undefined) {
          problems.addRef(
            m.at,
            `${m.name} is already the name of ${owner}: networks bridged together (${together}) have disjoint names`,
            "give this member another name, or do not bridge the networks",
          );
        } else {
          names.set(m.nameValue, `${net.name}.${m.key}`);
        }
      }
    }
    // Groups: nonlocal when a link of the group reaches another network; then one group across the set.
    const groups = new Map<string, { network: string; nonlocal: boolean; mode: string; at: LinkSpec["at"] }[]>();
    for (const net of set) {
      for (const l of net.topology.links) {
        if (l.group === undefined) continue;
        const nonlocal = ends(l).some((e) => e.end.network !== undefined); // reaches another network
        groups.set(l.group, [...(groups.get(l.group) ?? []), { network: net.name, nonlocal, mode: l.mode, at: l.at }]);
      }
    }
    for (const [group, uses] of groups) {
      const first = uses[0];
      if (first === undefined) continue;
      if (keys.has(group))
        problems.addRef(
          first.at,
          `group '${group}' has the name of a member of the bridged networks (${together})`,
          "group names and member names do not overlap across bridged networks",
        );
      const nonlocal = uses.find((u) => u.nonlocal);
      if (nonlocal === undefined) continue; // local groups of different networks may share a name
      // A local group stays in one network: a group that reaches another network is declared nonlocal.
      if (!set.some((n) => n.nonlocal.has(group))) {
        problems.addRef(
          nonlocal.at,
          `group '${group}' reaches another network, so it is not local to ${nonlocal.network}`,
          `declare it nonlocal: \`nonlocal: [${group}]\` in network ${nonlocal.network} (a local group's members ` +
            `are all in one network)`,
        );
      }
      for (const u of uses) {
        if (u.mode !== nonlocal.mode)
          problems.addRef(
            u.at,
            `group '${group}' is ${nonlocal.mode} in ${nonlocal.network}`,
            `every link of a nonlocal group has its mode: ${nonlocal.mode}`,
          );
      }
    }
  }
}
