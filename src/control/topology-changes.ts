// How one compiled description's topology differs from another's, in words
// ("member ip.h3 added"): what makes a reconciliation rebuild everything
// (./reconcile.ts) rather than change tables in place.

import type { CompiledSpec } from "./compiled.js";
import type { ResolvedEndpoint } from "./endpoints.js";

type Link = CompiledSpec["links"][number];

/** How the topology of `b` differs from `a`'s, in words; empty when the same tables can be rewired in place. */
export function topologyChanges(
  a: CompiledSpec,
  b: CompiledSpec,
  ea: readonly ResolvedEndpoint[] = [],
  eb: readonly ResolvedEndpoint[] = [],
): string[] {
  const out = namesChanged(a, b);
  if (out.length > 0) return out;
  // Same names: the same numbering and the same attributes, or it is rebuilt.
  out.push(...networksChanged(a, b), ...membersChanged(a, b), ...linksChanged(a, b));
  const shared = (c: CompiledSpec): string =>
    c.sharedOutLinks
      .map((p) => `${p.member}.${p.outLink}@${p.link}`)
      .sort()
      .join(" "); // a set: its order is the compiler's
  if (shared(a) !== shared(b)) out.push("shared links changed");
  const inj = (e: readonly ResolvedEndpoint[]): string =>
    JSON.stringify(e.map((x) => [x.kind, x.member, x.session, x.link]));
  if (inj(ea) !== inj(eb)) out.push("input endpoints moved");
  return out;
}

/** Networks, members and links added or removed, by name. */
function namesChanged(a: CompiledSpec, b: CompiledSpec): string[] {
  const out: string[] = [];
  const names = <T>(list: readonly T[], name: (x: T) => string): Set<string> => new Set(list.map(name));
  const diffSets = (what: string, x: Set<string>, y: Set<string>): void => {
    for (const n of y) if (!x.has(n)) out.push(`${what} ${n} added`);
    for (const n of x) if (!y.has(n)) out.push(`${what} ${n} removed`);
  };
  diffSets(
    "network",
    names(a.networks, (n) => n.name),
    names(b.networks, (n) => n.name),
  );
  diffSets(
    "member",
    names(a.members, (m) => m.qualified),
    names(b.members, (m) => m.qualified),
  );
  // The same links between members numbered the same: the same names.
  const numbered = a.members.length === b.members.length && a.members.every((m, i) => b.members[i]?.key === m.key);
  if (a.links === b.links && numbered) return out;
  const linkName = (c: CompiledSpec, l: Link): string => `${l.qualified} (${describeDirection(c, l)})`;
  diffSets(
    "link",
    names(a.links, (l) => linkName(a, l)),
    names(b.links, (l) => linkName(b, l)),
  );
  return out;
}

function networksChanged(a: CompiledSpec, b: CompiledSpec): string[] {
  return a.networks.flatMap((n, i) => {
    const m = b.networks[i];
    const same =
      m !== undefined &&
      m.name === n.name &&
      m.spec.design.id === n.spec.design.id &&
      m.spec.decrementTtl === n.spec.decrementTtl;
    return same ? [] : [`network ${n.name} changed`];
  });
}

function membersChanged(a: CompiledSpec, b: CompiledSpec): string[] {
  return a.members.flatMap((m, i) => {
    const n = b.members[i];
    const same =
      n !== undefined &&
      n.qualified === m.qualified &&
      n.network === m.network &&
      b.machines[n.machine] === a.machines[m.machine] &&
      n.machine === m.machine &&
      n.nOutLinks === m.nOutLinks;
    return same ? [] : [`member ${m.qualified} changed`];
  });
}

function linksChanged(a: CompiledSpec, b: CompiledSpec): string[] {
  if (a.links === b.links) return [];
  return a.links.flatMap((l, i) => {
    const k = b.links[i];
    const same =
      k === l ||
      (k !== undefined &&
        k.qualified === l.qualified &&
        k.network === l.network &&
        k.recorded === l.recorded &&
        k.sender === l.sender &&
        k.senderOutLink === l.senderOutLink &&
        k.mode === l.mode &&
        k.external === l.external &&
        JSON.stringify(k.receivers) === JSON.stringify(l.receivers));
    return same ? [] : [`link ${l.qualified} (${describeDirection(a, l)}) changed`];
  });
}

function describeDirection(c: CompiledSpec, l: Link): string {
  const from = l.sender < 0 ? (l.external ?? "outside") : (c.members[l.sender]?.key ?? "?");
  const to =
    l.receivers.length === 0
      ? (l.external ?? "outside")
      : l.receivers.map((r) => c.members[r.member]?.key ?? "?").join("+");
  return `${from}→${to}`;
}
