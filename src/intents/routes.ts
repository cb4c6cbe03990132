// The routes intent compiled to rows (docs/spec.md, Intents): every member's
// destinations are the other members' names and the prefixes they own; for each,
// the shortest path over the network's links (./graph.ts) gives the member's next
// hop, and the member's forward rows are those next hops, aggregated where that is
// exact (./aggregate.ts). Besides them a member acquires what is addressed to it
// (its name, its prefixes) for delivery, and an infrastructure member forwards
// the rest; it delivers what it receives.

import { formatValue } from "../description/notation.js";
import type { MemberSpec, MemberTables, NetworkSpec, Provenance, RoutesIntent, RowSpec } from "../description/types.js";
import { dstWidth } from "./width.js";
import { aggregate, type Route } from "./aggregate.js";
import { type Down, type Graph, networkGraph, NOTHING_DOWN, pathsTo } from "./graph.js";

/** Each member's tables as the intent writes them (only the roles it writes: acquire, forward, receive). */
export type IntentTables = ReadonlyMap<string, MemberTables>;

/** The rows of the routes intent of `net`, with what is `down` left out of its graph. */
export function routeTables(net: NetworkSpec, intent: RoutesIntent, down: Down = NOTHING_DOWN): IntentTables {
  const g = networkGraph(net, intent.costs, down);
  const field = net.design.dstField;
  const width = dstWidth(net);
  const routes = nextHops(net, intent, g, width);
  const out = new Map<string, MemberTables>();
  net.members.forEach((m, i) => {
    if (g.down[i] === 1) return;
    const rows = aggregate(routes[i] ?? [], width).map((r) => forwardRow(field, width, r, intent));
    out.set(m.key, ownTables(m, field, width, intent, rows));
  });
  return out;
}

/** Per member, a route to each destination it has a path to. */
function nextHops(net: NetworkSpec, intent: RoutesIntent, g: Graph, width: number): Route[][] {
  const routes: Route[][] = net.members.map(() => []);
  net.members.forEach((d, di) => {
    const dests = [{ value: d.nameValue, len: width, label: d.key }];
    for (const p of intent.prefixes.get(d.key) ?? []) dests.push({ ...p, label: `${d.key} ${prefixText(net, p)}` });
    const { via } = pathsTo(g, di);
    for (let m = 0; m < via.length; m++) {
      const e = g.edges[via[m] ?? -1];
      if (e === undefined) continue;
      for (const t of dests)
        routes[m]?.push({ value: t.value, len: t.len, out: e.out, first: t.label, last: t.label, count: 1 });
    }
  });
  return routes;
}

function ownTables(
  m: MemberSpec,
  field: string,
  width: number,
  intent: RoutesIntent,
  forward: RowSpec[],
): MemberTables {
  const own = (value: bigint, len: number, destination: string): RowSpec => ({
    match: new Map([[field, len === width ? { kind: "exact", value } : { kind: "prefix", value, len }]]),
    action: { kind: "receive" },
    at: intent.at,
    intent: provenance(intent, destination),
  });
  const acquire = [own(m.nameValue, width, m.key)];
  for (const p of intent.prefixes.get(m.key) ?? []) acquire.push(own(p.value, p.len, m.key));
  if (m.role === "infra")
    acquire.push({
      match: new Map(),
      action: { kind: "forward" },
      at: intent.at,
      intent: provenance(intent, "transit"),
    });
  const receive: RowSpec = {
    match: new Map(),
    action: { kind: "deliver" },
    at: intent.at,
    intent: provenance(intent, m.key),
  };
  return {
    acquire: { role: "acquire", rows: acquire, at: intent.at },
    forward: { role: "forward", kind: "lpm", rows: forward, at: intent.at },
    receive: { role: "receive", rows: [receive], at: intent.at },
  };
}

function forwardRow(field: string, width: number, r: Route, intent: RoutesIntent): RowSpec {
  const destination = r.count === 1 ? r.first : `${r.first}..${r.last} (${r.count})`;
  return {
    match: new Map([[field, { kind: "prefix", value: r.value, len: r.len }]]),
    action: { kind: "out", outLinks: [r.out] },
    at: intent.at,
    intent: provenance(intent, destination),
  };
}

function provenance(intent: RoutesIntent, destination: string): Provenance {
  return { intent: "routes", destination, at: intent.at };
}

function prefixText(net: NetworkSpec, p: { value: bigint; len: number }): string {
  return `${formatValue(p.value, net.design.nameKind)}/${p.len}`;
}
