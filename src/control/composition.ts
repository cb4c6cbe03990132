// How compiled members find each other across networks (seed §5), resolved to
// member indices once, so that the data plane never looks anything up by name:
//
// - bridging: an end written `network:member.id` is a member of that network;
// - layering: ExternalSession and ExternalLink reach the member of the named
//   network on the same machine (the description's checks made it unique);
// - subduction: the two shared members of a shared link are each other's partner.

import type { Endpoint, LinkSpec } from "../description/types.js";
import type { CompiledMember, CompiledNetwork } from "./compiled.js";

export class Composition {
  readonly #index = new Map<string, number>(); // "network.member"
  readonly #onMachine = new Map<string, number>(); // "network@machine"
  readonly #members: readonly CompiledMember[];
  readonly #partner = new Map<number, number>();

  constructor(networks: readonly CompiledNetwork[], members: readonly CompiledMember[]) {
    this.#members = members;
    for (const m of members) {
      const net = networks[m.network]?.name ?? "";
      this.#index.set(`${net}.${m.key}`, m.index);
      this.#onMachine.set(`${net}@${m.machine}`, m.index);
    }
    for (const net of networks) {
      for (const l of net.spec.links) {
        const shared = this.shared(net, l);
        if (shared === undefined) continue;
        this.#partner.set(shared.here, shared.there);
        this.#partner.set(shared.there, shared.here);
      }
    }
  }

  /** The member an end of a link of `net` names: in `net`, or in the network written before `:` (bridging). −1 if none.
   * */
  member(net: CompiledNetwork, end: Pick<Endpoint, "member" | "network">): number {
    return this.#index.get(`${end.network ?? net.name}.${end.member}`) ?? -1;
  }

  /** Layering: the member of `network` on the machine of member `from`, or −1. */
  attachment(network: string, from: number): number {
    return this.#onMachine.get(`${network}@${this.#members[from]?.machine ?? -1}`) ?? -1;
  }

  /** Subduction: the shared member of the other network paired with `member`, or −1. */
  partner(member: number): number {
    return this.#partner.get(member) ?? -1;
  }

  /** Subduction: a shared link's shared member in `net` (here) and in the overlay (there). */
  shared(net: CompiledNetwork, l: LinkSpec): { here: number; there: number } | undefined {
    if (l.sharedAt === undefined || l.shared === undefined) return undefined;
    return {
      here: this.member(net, { member: l.sharedAt.member }),
      there: this.#index.get(`${l.shared}.${l.sharedAt.partner}`) ?? -1,
    };
  }
}
