// The data plane numbers networks, members, links and machines by position,
// the compiler in the order a description writes them. A description that only
// writes the same things in another order (members or links moved, networks
// swapped) is the same topology: keepNumbering gives it the numbering already
// running, so that a reload changes tables only, and counters, down flags and
// everything a running emulation holds by index stay where they were.
//
// Identities: a network by its name, a member by network and key, a machine by
// its name, a direction of a link by its qualified name and its sender (a member,
// or the external end it comes from).

import type {
  CompiledLink,
  CompiledMember,
  CompiledNetwork,
  CompiledRow,
  CompiledSpec,
  CompiledTable,
} from "./compiled.js";

/** Actions whose `arg` is a member's number: layering's attachments, subduction's partner. */
const MEMBER_ARG = new Set(["external-session", "external-link", "shared-acquire", "shared-forward"]);

/**
 * `next` numbered as `running` is, when both hold the same networks, members and link
 * directions (in any order); otherwise `next` as it is (its topology differs anyway).
 */
export function keepNumbering(running: CompiledSpec, next: CompiledSpec): CompiledSpec {
  const nets = placesIn(
    running.networks.map((n) => n.name),
    next.networks.map((n) => n.name),
  );
  const members = placesIn(
    running.members.map((m) => m.qualified),
    next.members.map((m) => m.qualified),
  );
  const links = placesIn(
    running.links.map((l) => linkIdentity(running, l)),
    next.links.map((l) => linkIdentity(next, l)),
  );
  if (nets === undefined || members === undefined || links === undefined) return next;
  // Machines keep their numbers too when the same ones are used; else a member moved, which is a topology change.
  const machines = placesIn(running.machines, next.machines) ?? next.machines.map((_, i) => i);
  if ([nets, members, links, machines].every((p) => p.every((to, from) => to === from))) return next;

  const member = (i: number): number => (i < 0 ? i : (members[i] ?? i));
  const tables = new Map<CompiledTable, CompiledTable>(
    next.tables.map((t) => [t, { ...t, member: member(t.member), rows: t.rows.map((r) => withMemberArg(r, member)) }]),
  );
  const networks: CompiledNetwork[] = [];
  next.networks.forEach((n, i) => (networks[nets[i] ?? i] = { ...n, index: nets[i] ?? i }));
  const membersOut: CompiledMember[] = [];
  next.members.forEach((m, i) => {
    const roles = Object.entries(m.tables).map(([role, t]) => [role, tables.get(t) ?? t]);
    membersOut[member(i)] = {
      ...m,
      index: member(i),
      network: nets[m.network] ?? m.network,
      machine: machines[m.machine] ?? m.machine,
      tables: Object.fromEntries(roles) as CompiledMember["tables"],
    };
  });
  const linksOut: CompiledLink[] = [];
  next.links.forEach((l, i) => {
    const index = links[i] ?? i;
    linksOut[index] = {
      ...l,
      index,
      network: nets[l.network] ?? l.network,
      sender: member(l.sender),
      receivers: l.receivers.map((r) => ({ member: member(r.member), inLink: r.inLink })),
    };
  });
  const machineNames: string[] = [];
  next.machines.forEach((name, i) => (machineNames[machines[i] ?? i] = name));
  return {
    ...next,
    networks,
    members: membersOut,
    links: linksOut,
    tables: next.tables.map((t) => tables.get(t) ?? t),
    machines: machineNames,
    sharedOutLinks: next.sharedOutLinks.map((p) => ({
      member: member(p.member),
      outLink: p.outLink,
      link: links[p.link] ?? p.link,
    })),
  };
}

/** For each of `next`'s identities, its position in `running`; undefined unless both hold the same ones, each once. */
function placesIn(running: readonly string[], next: readonly string[]): number[] | undefined {
  const at = new Map(running.map((id, i) => [id, i]));
  if (at.size !== running.length || new Set(next).size !== next.length || next.length !== running.length)
    return undefined;
  const places = next.map((id) => at.get(id));
  return places.every((p): p is number => p !== undefined) ? places : undefined;
}

/** A direction of a link: its qualified name ("network.link") and where it is sent from. */
function linkIdentity(c: CompiledSpec, l: CompiledLink): string {
  const from = l.sender < 0 ? `outside ${l.external ?? ""}` : (c.members[l.sender]?.qualified ?? String(l.sender));
  return `${l.qualified} from ${from}`;
}

function withMemberArg(r: CompiledRow, member: (i: number) => number): CompiledRow {
  const a = r.action;
  return MEMBER_ARG.has(a.name) && a.arg !== undefined ? { ...r, action: { ...a, arg: member(a.arg) } } : r;
}
