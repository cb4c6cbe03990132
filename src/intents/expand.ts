// The intent pass (docs/spec.md, Intents): after a description's networks are
// read and their hand rows checked, and before anything compiles them, each
// network's intents are read and expanded into ordinary rows of its members'
// tables, every row with its provenance. What is compiled, installed, analysed
// and exported afterwards is rows; nothing downstream knows intents exist.

import type { Problems } from "../description/problems.js";
import type { RawNetwork } from "../description/raw.js";
import type { Demand, NetworkSpec } from "../description/types.js";
import { type Graph, networkGraph, pathsTo } from "./graph.js";
import { mergeTables } from "./merge.js";
import { readDemands, readL2, readRoutes } from "./read.js";
import { l2Tables } from "./l2.js";
import { routeTables } from "./routes.js";
import { checkHandRows } from "./contradictions.js";
import { dstWidth } from "./width.js";

/** Each network with its intents' rows merged into its tables; `known(network)`: its links are all known. */
export function expandIntents(
  problems: Problems,
  raw: Readonly<Record<string, RawNetwork>>,
  networks: readonly NetworkSpec[],
  known: (network: string) => boolean,
): NetworkSpec[] {
  return networks.map((net) => {
    const r = raw[net.name];
    if (r === undefined || (r.routes === undefined && r.l2 === undefined && r.demands === undefined)) return net;
    if (!known(net.name)) return net;
    const path = ["networks", net.name];
    const routes = r.routes === undefined ? undefined : readRoutes(problems, net, r.routes, [...path, "routes"]);
    const l2 = r.l2 === undefined ? undefined : readL2(problems, net, r.l2, [...path, "l2"]);
    const demands = r.demands === undefined ? [] : readDemands(problems, net, r.demands, [...path, "demands"]);
    const intents = { ...(routes === undefined ? {} : { routes }), ...(l2 === undefined ? {} : { l2 }), demands };
    const read = { ...intents, hand: net.tables };
    const made = routes ?? l2;
    if (made === undefined) return { ...net, intents: read };
    const g = networkGraph(net, made.costs);
    checkReachable(problems, net, g, demands);
    checkHandRows(problems, net, g, net.tables, demands);
    const rows = routes !== undefined ? routeTables(net, routes) : l2 === undefined ? new Map() : l2Tables(net, l2);
    const tables = mergeTables(net.tables, rows, dstWidth(net), { problems, tablesPath: [...path, "tables"] });
    return { ...net, tables, intents: read };
  });
}

/** A demand the routes cannot meet, because no path over the network's links leads there, is an error. */
function checkReachable(problems: Problems, net: NetworkSpec, g: Graph, demands: readonly Demand[]): void {
  if (demands.length === 0) return;
  const byDest = new Map<number, Float64Array>();
  const reported = new Set<string>();
  for (const d of demands) {
    const to = g.index.get(d.to);
    const from = g.index.get(d.from);
    if (to === undefined || from === undefined) continue;
    let dist = byDest.get(to);
    if (dist === undefined) byDest.set(to, (dist = pathsTo(g, to).dist));
    if (dist[from] !== Infinity || reported.has(d.at.path)) continue;
    reported.add(d.at.path);
    problems.addRef(
      d.at,
      `${d.to} cannot be reached from ${d.from}: no path over ${net.name}'s links leads there` +
        (g.relays.some((x) => x === 1) ? " through infra members" : " (only infra members relay)"),
      `link ${d.from} to ${d.to}'s side, or remove the demand`,
    );
  }
}
