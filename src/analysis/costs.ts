// What crossing a virtual link costs against the hop limit. The data plane
// counts every link a packet crosses (assembly/pipeline/steps.ts linkStep), a
// virtual link's included, and a packet carried by an underlay session is the
// same descriptor all the way down: its underlay crossings count too. So a
// virtual link costs one, and the links the session that implements it
// crosses before the receive row at the far end pops it into the link — each
// of them a virtual link of a lower network again, perhaps. Costs are found
// network by network from the lowest underlay up (layering is a hierarchy),
// each with the costs below already known, so no walk descends into layers.

import type { Budget } from "./budget.js";
import { largestOf, sessionAt, transmitRow, type Walkable } from "./members.js";
import { Walker, type WalkEvents } from "./walk.js";

/** A link implemented by a session of an underlay. */
interface VirtualLink {
  readonly link: number;
  readonly overlay: string;
  readonly underlay: string;
  readonly session: number;
}

/**
 * Each virtual link's cost per receiver, into `costs`, underlays first: its session's header walked from the sender's
 * attachment with the link itself counted, to the receive row that pops it into the link at each receiver's
 * attachment. A session the underlay does not carry there (Underlay_satisfies_layering_demands says so) costs one, as
 * the model's link; one the hop limit cuts costs more than the limit. False when the budget ran out first.
 */
export function linkCosts(a: Walkable, budget: Budget, costs: Map<number, number[]>): boolean {
  const virtual = virtualLinks(a);
  if (virtual.length === 0) return true;
  budget.stage("counting the links that carry each virtual link", virtual.length, "virtual links");
  const walker = new Walker(a);
  for (const { link, underlay, session } of virtual) {
    if (!budget.take()) return false;
    const l = a.topology.link(link);
    const u0 = a.topology.attachment(underlay, l.sender);
    const s = sessionAt(a.member(u0), session);
    const c = largestOf(a, u0);
    if (s === undefined || c === undefined) continue;
    const ends = l.receivers.map((r) => {
      try {
        return a.topology.attachment(underlay, r.member);
      } catch {
        return -1;
      }
    });
    const best = l.receivers.map(() => Infinity);
    let cut = false;
    for (const atom of s.atoms) {
      const events: WalkEvents = {
        received: (_origin, member, _hops, r, _path, crossings) => {
          const act = r.row.action;
          if (act.kind !== "link") return;
          l.receivers.forEach((x, k) => {
            const overlay = a.member(x.member).member.network.name;
            if (member === ends[k] && act.network === overlay && act.ident === x.inLink)
              best[k] = Math.min(best[k] ?? Infinity, crossings);
          });
        },
        drop: (_origin, d) => {
          if (d.reason === "loop") cut = true;
        },
      };
      walker.from(c, atom, u0, "self", s.hops, events, 1);
    }
    costs.set(
      link,
      best.map((b) => (b !== Infinity ? b : cut ? a.hopLimit + 1 : 1)),
    );
  }
  return true;
}

/** The links implemented by a session of an underlay, each after every virtual link of its underlay. */
function virtualLinks(a: Walkable): VirtualLink[] {
  const found: VirtualLink[] = [];
  for (const l of a.topology.links) {
    if (l === undefined || l.sender < 0 || l.receivers.length === 0) continue;
    const v = a.member(l.sender);
    const action = transmitRow(v, l.senderOutLink)?.row.action;
    if (action?.kind !== "session") continue;
    const { network: underlay, session } = action;
    found.push({ link: l.index, overlay: v.member.network.name, underlay, session });
  }
  // A network's depth is one more than its deepest underlay's; the description's checks make layering a hierarchy.
  const below = new Map<string, Set<string>>();
  for (const f of found) below.set(f.overlay, (below.get(f.overlay) ?? new Set<string>()).add(f.underlay));
  const depth = new Map<string, number>();
  for (let round = 0, changed = true; changed && round <= below.size; round++) {
    changed = false;
    for (const [net, under] of below) {
      let d = 0;
      for (const u of under) d = Math.max(d, 1 + (depth.get(u) ?? 0));
      if (d !== depth.get(net)) {
        depth.set(net, d);
        changed = true;
      }
    }
  }
  return found.sort((x, y) => (depth.get(x.overlay) ?? 0) - (depth.get(y.overlay) ?? 0));
}

/** Whether two findings of linkCosts are the same. */
export function sameCosts(
  a: ReadonlyMap<number, readonly number[]>,
  b: ReadonlyMap<number, readonly number[]>,
): boolean {
  return a.size === b.size && [...a].every(([l, c]) => b.get(l)?.join() === c.join());
}
