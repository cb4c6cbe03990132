// Routes recomputed when links or members go down or come up (`--updates`,
// `strata serve`'s down/up): the routes intent of each network expanded again
// over what is up, merged with the hand rows as at load. A down member keeps the
// rows it had (it forwards nothing while down); the reconciler writes only the
// rows that differ from those installed.

import type { NetworkSpec, Spec } from "../description/types.js";
import { mergeTables } from "./merge.js";
import { routeTables } from "./routes.js";
import { dstWidth } from "./width.js";

/**
 * The description with every routed network's rows recomputed without the down links and members (qualified names,
 * "net.link" and "net.member"); undefined when no network has routes.
 */
export function reroute(
  spec: Spec,
  downLinks: ReadonlySet<string>,
  downMembers: ReadonlySet<string>,
): Spec | undefined {
  if (!spec.networks.some((n) => n.intents?.routes !== undefined)) return undefined;
  return { ...spec, networks: spec.networks.map((n) => rerouted(n, downLinks, downMembers)) };
}

function rerouted(net: NetworkSpec, downLinks: ReadonlySet<string>, downMembers: ReadonlySet<string>): NetworkSpec {
  const routes = net.intents?.routes;
  if (routes === undefined || net.intents === undefined) return net;
  const down = {
    links: new Set(net.links.filter((l) => downLinks.has(`${net.name}.${l.name}`)).map((l) => l.name)),
    members: new Set(net.members.filter((m) => downMembers.has(`${net.name}.${m.key}`)).map((m) => m.key)),
  };
  const tables = mergeTables(net.intents.hand, routeTables(net, routes, down), dstWidth(net));
  for (const key of down.members) {
    const was = net.tables.get(key);
    if (was !== undefined) tables.set(key, was);
  }
  return { ...net, tables };
}
