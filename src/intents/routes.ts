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
import { aggregate, asNumbers, type Route } from "./aggregate.js";
import { type Down, type Graph, networkGraph, NOTHING_DOWN, pathsTo } from "./graph.js";

/** Each member's tables as the intent writes them (only the roles it writes: acquire, forward, receive). */
export type IntentTables = ReadonlyMap<string, MemberTables>;

/** The rows of the routes intent of `net`, with what is `down` left out of its graph. */
export function routeTables(net: NetworkSpec, intent: RoutesIntent, down: Down = NOTHING_DOWN): IntentTables {
  const g = networkGraph(net, intent.costs, down);
  const field = net.design.dstField;
  const width = dstWidth(net);
  const dests = destinations(net, intent, width);
  const hops = nextHops(g, dests);
  // In address order, so that a member's routes are too: ./aggregate.ts merges those in one pass.
  const order = dests.map((_, k) => k).sort((a, b) => compare(dests[a], dests[b]));
  const out = new Map<string, MemberTables>();
  const n = g.keys.length;
  net.members.forEach((m, i) => {
    if (g.down[i] === 1) return;
    const routes: Route<number | bigint>[] = [];
    for (const k of order) {
      const o = hops[k * n + i] ?? -1;
      const t = dests[k];
      if (o >= 0 && t !== undefined) routes.push({ value: t.value, len: t.len, out: o, first: k, last: k, count: 1 });
    }
    const label = (r: Route<number | bigint>): string => {
      const [first, last] = [dests[r.first]?.label ?? "?", dests[r.last]?.label ?? "?"];
      return r.count === 1 ? first : `${first}..${last} (${r.count})`;
    };
    const rows = aggregate(routes, width).map((r) => forwardRow(field, r, label(r), intent));
    out.set(m.key, ownTables(m, field, width, intent, rows));
  });
  return out;
}

/** A destination: a member's name or one of its prefixes, with the member's index. */
interface Destination {
  readonly member: number;
  readonly value: number | bigint;
  readonly len: number;
  readonly label: string;
}

function compare(a: Destination | undefined, b: Destination | undefined): number {
  if (a === undefined || b === undefined) return 0;
  return a.value < b.value ? -1 : a.value > b.value ? 1 : a.len - b.len;
}

/** Every destination, in the order of the members, a member's name before its prefixes. */
function destinations(net: NetworkSpec, intent: RoutesIntent, width: number): Destination[] {
  const v = (x: bigint): number | bigint => (asNumbers(width) ? Number(x) : x);
  return net.members.flatMap((d, member) => [
    { member, value: v(d.nameValue), len: width, label: d.key },
    ...(intent.prefixes.get(d.key) ?? []).map((p) => ({
      member,
      value: v(p.value),
      len: p.len,
      label: `${d.key} ${prefixText(net, p)}`,
    })),
  ]);
}

/** Per destination k and member m, at k·n + m: the out-link m forwards on toward k (−1: none). */
function nextHops(g: Graph, dests: readonly Destination[]): Int32Array {
  const n = g.keys.length;
  const hops = new Int32Array(dests.length * n).fill(-1);
  let k = 0;
  while (k < dests.length) {
    const member = dests[k]?.member ?? 0;
    const { via } = pathsTo(g, member);
    for (; k < dests.length && dests[k]?.member === member; k++)
      for (let m = 0; m < n; m++) {
        const e = g.edges[via[m] ?? -1];
        if (e !== undefined) hops[k * n + m] = e.out;
      }
  }
  return hops;
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

function forwardRow(field: string, r: Route<number | bigint>, destination: string, intent: RoutesIntent): RowSpec {
  return {
    match: new Map([[field, { kind: "prefix", value: BigInt(r.value), len: r.len }]]),
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
