// Routes recomputed when links or members go down or come up (`--updates`,
// `strata serve`'s down/up): each routed network's routes kept between changes
// (./routes.ts NetworkRoutes, ./incremental.ts), so that a change costs what it
// changes; an l2 network's forwarding and flood tree made again whole (./l2.ts
// NetworkL2), its tables compared with the last. Only the forward tables of the
// members whose routes moved are made again (hand rows first, as at load). One Rerouter per running data plane: its
// state is what that data plane holds.

import type { MemberTables, NetworkSpec, Spec, TableSpec } from "../description/types.js";
import { mergeTables } from "./merge.js";
import { NetworkL2 } from "./l2.js";
import type { Down } from "./graph.js";
import { NetworkRoutes } from "./routes.js";
import { dstWidth } from "./width.js";

/** A member whose forward table the change made again. */
export interface Rerouted {
  readonly network: string;
  readonly member: string;
  readonly forward: TableSpec;
}

export class Rerouter {
  readonly #routes = new Map<string, { update(down: Down): Map<string, TableSpec> }>();
  #spec: Spec;

  /** Undefined when no network of `spec` has routes or l2. */
  static of(spec: Spec): Rerouter | undefined {
    const some = spec.networks.some((n) => n.intents?.routes !== undefined || n.intents?.l2 !== undefined);
    return some ? new Rerouter(spec) : undefined;
  }

  private constructor(spec: Spec) {
    this.#spec = spec;
    for (const n of spec.networks) {
      const routes = n.intents?.routes;
      if (routes !== undefined) this.#routes.set(n.name, new NetworkRoutes(n, routes));
      const l2 = n.intents?.l2;
      if (l2 !== undefined) this.#routes.set(n.name, new NetworkL2(n, l2));
    }
  }

  /** The description these routes are of (the last one update() returned). */
  get spec(): Spec {
    return this.#spec;
  }

  /** With these links and members down (qualified names, "net.link" and "net.member"): the description with the
   * forward tables that changed, and which. */
  update(downLinks: ReadonlySet<string>, downMembers: ReadonlySet<string>): { spec: Spec; changed: Rerouted[] } {
    const changed: Rerouted[] = [];
    const networks = this.#spec.networks.map((net) => {
      const routes = this.#routes.get(net.name);
      if (routes === undefined || net.intents === undefined) return net;
      const down = {
        links: new Set(net.links.filter((l) => downLinks.has(`${net.name}.${l.name}`)).map((l) => l.name)),
        members: new Set(net.members.filter((m) => downMembers.has(`${net.name}.${m.key}`)).map((m) => m.key)),
      };
      const tables = routes.update(down);
      if (tables.size === 0) return net;
      const merged = merge(net, tables);
      for (const [member, t] of merged)
        if (t.forward !== undefined) changed.push({ network: net.name, member, forward: t.forward });
      const all = new Map(net.tables);
      for (const [member, t] of merged) all.set(member, t);
      return { ...net, tables: all };
    });
    if (changed.length > 0) this.#spec = { ...this.#spec, networks };
    return { spec: this.#spec, changed };
  }
}

/** The members' new forward tables beside their hand rows, as at load; their other tables as they are. */
function merge(net: NetworkSpec, forward: ReadonlyMap<string, TableSpec>): Map<string, MemberTables> {
  const hand = new Map<string, MemberTables>();
  const intent = new Map<string, MemberTables>();
  for (const [key, t] of forward) {
    const h = net.intents?.hand.get(key);
    if (h !== undefined) hand.set(key, h);
    intent.set(key, { forward: t });
  }
  const out = new Map<string, MemberTables>();
  for (const [key, t] of mergeTables(hand, intent, dstWidth(net)))
    if (t.forward !== undefined) out.set(key, { ...net.tables.get(key), forward: t.forward });
  return out;
}
