// The description's members and one-way links as the reference walks them,
// read from the description (src/description/types.ts): two-way links as two one-way
// links, bridging ends (`network:member.id`) in the other network, the shared
// members of a shared link (subduction) and the attachments of layering (the
// member of another network on the same machine). Only the numbering comes
// from the compiled spec, so that counters and outputs can be compared.

import type { CompiledSpec } from "../control/compiled.js";
import type { Endpoint, LinkMode, LinkSpec, MemberSpec, MemberTables, NetworkSpec } from "../description/types.js";
import { headerDesign, type HeaderDesign } from "./headers.js";

export interface Member {
  /** The compiled spec's number for the member. */
  readonly index: number;
  readonly network: NetworkSpec;
  readonly spec: MemberSpec;
  /** "network.member". */
  readonly qualified: string;
  readonly design: HeaderDesign;
  /** The member's tables as the description writes them (none written: empty). */
  readonly tables: MemberTables;
}

export interface Receiver {
  readonly member: number;
  readonly inLink: number;
}

/** One direction of a declared link. */
export interface Link {
  /** The compiled spec's number for this direction. */
  readonly index: number;
  /** Member number, or −1 when the packet comes from outside the network. */
  readonly sender: number;
  readonly senderOutLink: number;
  /** Empty when the link leaves the network. */
  readonly receivers: readonly Receiver[];
  readonly mode: LinkMode;
  /** Whether its packets are recorded (the description's `record`). */
  readonly recorded: boolean;
}

export class Topology {
  readonly members: readonly Member[];
  readonly links: readonly Link[];
  /** member → identifier → the links it sends on with that identifier. */
  readonly #sends = new Map<number, Map<number, Link[]>>();
  /** Subduction: each shared member's partner in the other network. */
  readonly #partner = new Map<number, number>();

  constructor(compiled: CompiledSpec) {
    const spec = compiled.spec;
    const byName = new Map<string, Member>();
    const members: Member[] = [];
    // The compiled spec's numbers, looked up by name: a description of thousands of members is read in linear time.
    const compiledMember = new Map(compiled.members.map((c, i) => [c.qualified, i]));
    const compiledLinks = new Map<string, number[]>();
    for (const c of compiled.links) {
      const key = `${c.network}|${c.name}|${c.sender}`;
      compiledLinks.set(key, [...(compiledLinks.get(key) ?? []), c.index]);
    }
    for (const net of spec.networks) {
      const design = headerDesign(net.design.name);
      for (const m of net.members) {
        const qualified = `${net.name}.${m.key}`;
        const index = compiledMember.get(qualified) ?? -1;
        if (index < 0) throw new Error(`the compiled spec numbers no member ${qualified}`);
        const member = { index, network: net, spec: m, qualified, design, tables: net.tables.get(m.key) ?? {} };
        members[index] = member;
        byName.set(qualified, member);
      }
    }
    this.members = members;
    const number = (net: NetworkSpec, e: Endpoint): number => {
      const m = byName.get(`${e.network ?? net.name}.${e.member}`);
      if (m === undefined) throw new Error(`link end ${e.network ?? net.name}:${e.member}.${e.ident} names no member`);
      return m.index;
    };

    const links: Link[] = [];
    for (const net of spec.networks) {
      for (const l of net.links) {
        // A shared link (subduction): the underlay's member at its shared end, and the overlay's partner there.
        const shared =
          l.shared === undefined || l.sharedAt === undefined
            ? undefined
            : {
                here: byName.get(`${net.name}.${l.sharedAt.member}`)?.index ?? -1,
                there: byName.get(`${l.shared}.${l.sharedAt.partner}`)?.index ?? -1,
              };
        if (shared !== undefined) {
          this.#partner.set(shared.here, shared.there);
          this.#partner.set(shared.there, shared.here);
        }
        for (const { from, to } of directions(l)) {
          const sender = from === undefined ? -1 : number(net, from);
          const link: Link = {
            index: compiledLink(compiled, compiledLinks, net, l, sender),
            sender,
            senderOutLink: from?.ident ?? 0,
            receivers: to.map((e) => ({ member: number(net, e), inLink: e.ident })),
            mode: l.mode,
            recorded: l.record,
          };
          links[link.index] = link;
          if (sender >= 0) this.#addSend(sender, link);
          // A shared link: the overlay's shared member sends on it too, with the same identifier (seed §5.3.1).
          if (shared !== undefined && sender === shared.here) this.#addSend(shared.there, link);
        }
      }
    }
    this.links = links;
  }

  #addSend(member: number, link: Link): void {
    const byIdent = this.#sends.get(member) ?? new Map<number, Link[]>();
    byIdent.set(link.senderOutLink, [...(byIdent.get(link.senderOutLink) ?? []), link]);
    this.#sends.set(member, byIdent);
  }

  member(i: number): Member {
    const m = this.members[i];
    if (m === undefined) throw new Error(`no member ${i}`);
    return m;
  }

  link(i: number): Link {
    const l = this.links[i];
    if (l === undefined) throw new Error(`no link ${i}`);
    return l;
  }

  /** The links `member` sends on with identifier `outLink`. */
  sends(member: number, outLink: number): readonly Link[] {
    return this.#sends.get(member)?.get(outLink) ?? [];
  }

  /** The identifiers `member` sends on, ascending. */
  outLinks(member: number): number[] {
    return [...(this.#sends.get(member)?.keys() ?? [])].sort((a, b) => a - b);
  }

  /** Layering's attachment: the member of network `network` on the machine of `member` (the description's checks make
   * it one). */
  attachment(network: string, member: number): number {
    const machine = this.member(member).spec.machine;
    const on = this.members.filter((m) => m.network.name === network && m.spec.machine === machine);
    const [m] = on;
    if (m === undefined || on.length > 1)
      throw new Error(`${on.length} members of ${network} on machine ${machine}: a checked description has one`);
    return m.index;
  }

  /** Subduction: the shared member of the same name in the other network, on this machine. */
  partner(member: number): number {
    const p = this.#partner.get(member);
    if (p === undefined || p < 0)
      throw new Error(
        `${this.member(member).qualified} shares no link: a checked description hands nothing over from it`,
      );
    return p;
  }
}

/** The one-way links a declared link stands for: the link itself, and for a two-way link its reverse. */
function directions(l: LinkSpec): { from?: Endpoint; to: readonly Endpoint[] }[] {
  const from = "external" in l.from ? undefined : l.from;
  const to = Array.isArray(l.to) ? (l.to as readonly Endpoint[]) : [];
  const forward = from === undefined ? { to } : { from, to };
  if (l.mode !== "two-way") return [forward];
  // The reverse: the receiver sends, the sender receives, each with its identifier.
  const [back] = to;
  return [
    forward,
    back === undefined
      ? { to: from === undefined ? [] : [from] }
      : { from: back, to: from === undefined ? [] : [from] },
  ];
}

/** The compiled spec's number for one direction of link `l` of `net`: the one with its name and sender. */
function compiledLink(
  compiled: CompiledSpec,
  byKey: ReadonlyMap<string, readonly number[]>,
  net: NetworkSpec,
  l: LinkSpec,
  sender: number,
): number {
  const n = compiled.networks.findIndex((c) => c.name === net.name);
  const found = byKey.get(`${n}|${l.name}|${sender}`) ?? [];
  const [c] = found;
  if (c === undefined || found.length > 1)
    throw new Error(
      `the compiled spec numbers ${found.length} directions of link ${net.name}.${l.name} sent by member ${sender}`,
    );
  return c;
}
