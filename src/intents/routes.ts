// The routes intent compiled to rows (docs/spec.md, Intents): every member's
// destinations are the other members' names and the prefixes they own; for each,
// the shortest path over the network's links (./graph.ts) gives the member's next
// hop, and the member's forward rows are those next hops, aggregated where that is
// exact (./aggregate.ts). Besides them a member acquires what is addressed to it
// (its name, its prefixes) for delivery, and an infrastructure member forwards
// the rest; it delivers what it receives.

import { formatValue } from "../description/notation.js";
import type {
  MemberSpec,
  MemberTables,
  NetworkSpec,
  Provenance,
  RoutesIntent,
  RowSpec,
  TableSpec,
} from "../description/types.js";
import { dstWidth } from "./width.js";
import { aggregate, asNumbers, type Route } from "./aggregate.js";
import { type Down, networkGraph, NOTHING_DOWN } from "./graph.js";
import { RouteState } from "./incremental.js";

/** Each member's tables as the intent writes them (only the roles it writes: acquire, forward, receive). */
export type IntentTables = ReadonlyMap<string, MemberTables>;

/** The rows of the routes intent of `net`, with what is `down` left out of its graph. */
export function routeTables(net: NetworkSpec, intent: RoutesIntent, down: Down = NOTHING_DOWN): IntentTables {
  const r = new NetworkRoutes(net, intent, down);
  const out = new Map<string, MemberTables>();
  net.members.forEach((m, i) => {
    if (r.state.graph.down[i] !== 1) out.set(m.key, ownTables(m, r.field, r.width, intent, r.forwardTable(i)));
  });
  return out;
}

/** A routed network's state kept between changes (./incremental.ts), and its rows made member by member. */
export class NetworkRoutes {
  readonly state: RouteState;
  readonly field: string;
  readonly width: number;
  readonly #net: NetworkSpec;
  readonly #intent: RoutesIntent;
  readonly #dests: readonly Destination[];
  /** Destinations in address order, so that a member's routes are too: ./aggregate.ts merges those in one pass. */
  readonly #order: readonly number[];

  constructor(net: NetworkSpec, intent: RoutesIntent, down: Down = NOTHING_DOWN) {
    this.#net = net;
    this.#intent = intent;
    this.field = net.design.dstField;
    this.width = dstWidth(net);
    this.state = new RouteState(networkGraph(net, intent.costs, down));
    const dests = (this.#dests = destinations(net, intent, this.width));
    this.#order = dests.map((_, k) => k).sort((a, b) => compare(dests[a], dests[b]));
  }

  /** Member i's forward rows toward every destination it has an out-link for, aggregated. */
  forwardRows(i: number): RowSpec[] {
    const dests = this.#dests;
    const n = this.state.graph.keys.length;
    const routes: Route<number | bigint>[] = [];
    for (const k of this.#order) {
      const t = dests[k];
      const o = t === undefined ? -1 : (this.state.outs[t.member * n + i] ?? -1);
      if (o >= 0 && t !== undefined && t.member !== i)
        routes.push({ value: t.value, len: t.len, out: o, first: k, last: k, count: 1 });
    }
    const label = (r: Route<number | bigint>): string => {
      const [first, last] = [dests[r.first]?.label ?? "?", dests[r.last]?.label ?? "?"];
      return r.count === 1 ? first : `${first}..${last} (${r.count})`;
    };
    return aggregate(routes, this.width).map((r) => forwardRow(this.field, r, label(r), this.#intent));
  }

  /** Member i's forward table as the intent writes it. */
  forwardTable(i: number): TableSpec {
    return forwardTable(this.forwardRows(i), this.#intent);
  }

  /** What is down changed: the members whose forward tables changed, by key, with their new tables. */
  update(down: Down): Map<string, TableSpec> {
    const out = new Map<string, TableSpec>();
    for (const i of this.state.update(down)) {
      const key = this.#net.members[i]?.key;
      if (key !== undefined) out.set(key, this.forwardTable(i));
    }
    return out;
  }
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

function ownTables(
  m: MemberSpec,
  field: string,
  width: number,
  intent: RoutesIntent,
  forward: TableSpec,
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
    forward,
    receive: { role: "receive", rows: [receive], at: intent.at },
  };
}

/**
 * A forward table of these rows: kind lpm, longest first. A member that reaches nobody (no links, or none that lead
 * anywhere) has none, and its table no kind: the compiler's for no rows, every packet a miss (an LPM table needs
 * its prefix field, which no row names).
 */
function forwardTable(rows: RowSpec[], intent: RoutesIntent): TableSpec {
  if (rows.length === 0) return { role: "forward", rows, at: intent.at };
  return { role: "forward", kind: "lpm", rows, at: intent.at };
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
