// Hand rows that contradict the routes intent in a way no order of rows can
// resolve: on the path a stated demand takes, a hand forward row that takes the
// demanded destination's packets first and drops them, or sends them round in a
// loop. Each demand's packet is followed from its sender, member by member: at
// each, the first hand forward row that takes every header to that destination
// (its match names the destination field alone, and the row's `in` is the link
// the packet came in on, or none), else the intent's next hop. Hand rows that
// match other fields too take only some packets; whether those arrive is the
// analysis's to say (`strata analyze`, Network_satisfies_communication_demands).

import type { Problems } from "../description/problems.js";
import type { Demand, InLink, MemberTables, NetworkSpec, Pattern, RowSpec } from "../description/types.js";
import { type Graph, pathsTo } from "./graph.js";
import { dstWidth } from "./width.js";

export function checkHandRows(
  problems: Problems,
  net: NetworkSpec,
  g: Graph,
  hand: ReadonlyMap<string, MemberTables>,
  demands: readonly Demand[],
): void {
  const rows = g.keys.map((k) => hand.get(k)?.forward?.rows ?? []);
  if (rows.every((r) => r.length === 0)) return;
  const via = new Map<number, Int32Array>();
  const blamed = new Set<RowSpec>();
  const walk: Walk = { g, rows, field: net.design.dstField, width: dstWidth(net) };
  for (const d of demands) {
    const to = g.index.get(d.to);
    const from = g.index.get(d.from);
    if (to === undefined || from === undefined) continue;
    let next = via.get(to);
    if (next === undefined) via.set(to, (next = pathsTo(g, to).via));
    const end = follow(walk, from, to, net.members[to]?.nameValue ?? 0n, next);
    if (end.kind === "arrives" || end.row === undefined || blamed.has(end.row)) continue;
    blamed.add(end.row);
    const where = g.keys[end.at] ?? "?";
    const what = `what ${d.at.path} asks for (${d.from} → ${d.to})`;
    if (end.kind === "drop")
      problems.addRef(
        end.row.at,
        `this hand row drops ${what} at ${where}, where the routes intent sends it on ${intentOut(g, next, end.at)}`,
        "take the row out, narrow its match, or remove the demand",
      );
    else if (end.kind === "stranded")
      problems.addRef(
        end.row.at,
        `this hand row sends ${what} to ${where}, a user member, which does not forward it`,
        "send it toward the destination, as the routes intent would, or take the row out",
      );
    else
      problems.addRef(
        end.row.at,
        `this hand row sends ${what} round a loop back to ${where}`,
        "send it toward the destination, as the routes intent would, or take the row out",
      );
  }
}

interface Walk {
  readonly g: Graph;
  /** Each member's hand forward rows. */
  readonly rows: readonly (readonly RowSpec[])[];
  readonly field: string;
  readonly width: number;
}

/** How a demand's packet ends: it arrives, or the last hand row it met is to blame for a drop, a dead end or a loop. */
type End =
  | { readonly kind: "arrives" }
  | { readonly kind: "drop" | "stranded" | "loop"; readonly at: number; readonly row?: RowSpec };

/** A packet from `from` to `to` followed member by member: a hand row that takes it first, else the intent's hop. */
function follow(w: Walk, from: number, to: number, dst: bigint, next: Int32Array): End {
  const seen = new Set<number>();
  let at = from;
  let arrived: InLink = "self";
  let last: RowSpec | undefined;
  while (at !== to) {
    if (seen.has(at)) return { kind: "loop", at, ...(last === undefined ? {} : { row: last }) };
    if (at !== from && w.g.relays[at] !== 1)
      return { kind: "stranded", at, ...(last === undefined ? {} : { row: last }) };
    seen.add(at);
    const row = (w.rows[at] ?? []).find((r) => takesAll(r, w.field, w.width, dst, arrived));
    if (row !== undefined) last = row;
    const edge = row === undefined ? w.g.edges[next[at] ?? -1] : edgeOf(w.g, at, row);
    if (edge === undefined) return { kind: "drop", at, ...(row === undefined ? {} : { row }) };
    const i = edge.to.indexOf(to);
    const hop = i >= 0 ? i : 0;
    at = edge.to[hop] ?? to;
    arrived = edge.inAt[hop] ?? 0;
  }
  return { kind: "arrives" };
}

/** The edge a hand row sends on (its first out-link); undefined for a drop or a link outside the graph. */
function edgeOf(g: Graph, member: number, row: RowSpec): Graph["edges"][number] | undefined {
  if (row.action.kind !== "out") return undefined;
  const out = row.action.outLinks[0];
  return (g.outOf[member] ?? []).map((e) => g.edges[e]).find((e) => e?.out === out);
}

function intentOut(g: Graph, via: Int32Array, member: number): string {
  const e = g.edges[via[member] ?? -1];
  return e === undefined ? "no link" : `out-link ${e.out} (${e.link})`;
}

/** The row takes every header to `dst` that arrives on `arrived`. */
function takesAll(r: RowSpec, field: string, width: number, dst: bigint, arrived: InLink): boolean {
  if (r.in !== undefined && r.in !== arrived) return false;
  if (r.match.size > 1 || (r.match.size === 1 && !r.match.has(field))) return false;
  const p = r.match.get(field);
  return p === undefined || covers(p, dst, width);
}

function covers(p: Pattern, v: bigint, width: number): boolean {
  switch (p.kind) {
    case "exact":
      return p.value === v;
    case "prefix": {
      const shift = BigInt(width - p.len);
      return v >> shift === p.value >> shift;
    }
    case "ternary":
      return (v & p.mask) === p.value;
    case "range":
      return p.lo <= v && v <= p.hi;
  }
}
