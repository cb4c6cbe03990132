// The allocation a running data plane holds, read back from its compiled description: the
// previous allocation of a description that replaces it (a reload, an update), so identifiers
// the new one leaves out keep their installed values (seed 000: allocations are stable).

import { linkEndKey } from "../description/allocate.js";
import type { Allocation, LinkEndAllocation, SessionAllocation, Spec } from "../description/types.js";
import type { CompiledSpec } from "./compiled.js";

/**
 * The allocation that is installed: every link end's identifier from the
 * compiled links (what the data plane holds), and the named sessions from the
 * send tables. Whether an identifier was allocated is not installed, so every
 * one reads as written (`allocated: false`); as the previous allocation of a
 * changed description that makes no difference.
 */
export function recoverAllocation(compiled: CompiledSpec): Allocation {
  const links: LinkEndAllocation[] = [];
  const seen = new Set<string>();
  const push = (network: string, link: string, member: string, ident: number): void => {
    const key = linkEndKey(network, link, member);
    if (seen.has(key)) return; // the two directions of a two-way link
    seen.add(key);
    links.push({ network, link, member, ident, allocated: false });
  };
  const endName = (linkNet: number, member: number): string | undefined => {
    const m = compiled.members[member];
    if (m === undefined) return undefined;
    return m.network === linkNet ? m.key : `${compiled.networks[m.network]?.name ?? "?"}:${m.key}`;
  };
  for (const l of compiled.links) {
    const net = compiled.networks[l.network]?.name;
    if (net === undefined) continue;
    const sender = l.sender < 0 ? undefined : endName(l.network, l.sender);
    if (sender !== undefined) push(net, l.name, sender, l.senderOutLink);
    for (const r of l.receivers) {
      const name = endName(l.network, r.member);
      if (name !== undefined) push(net, l.name, name, r.inLink);
    }
  }
  // An overlay link's identifier is a header value of rows, not a table key: it is kept with the description.
  const overlays = compiled.spec.allocation?.overlays;
  return { links, sessions: sessionsOf(compiled.spec), ...(overlays === undefined ? {} : { overlays }) };
}

/** The named sessions of a loaded description. */
function sessionsOf(spec: Spec): SessionAllocation[] {
  const out: SessionAllocation[] = [];
  for (const net of spec.networks) {
    for (const [member, tables] of net.tables) {
      for (const row of tables.send?.rows ?? []) {
        if (row.name !== undefined && row.session !== undefined)
          out.push({ network: net.name, member, name: row.name, session: row.session, allocated: false });
      }
    }
  }
  return out;
}
