// What `down`/`up` (strata serve's commands, strata run's --update) name: a
// declared link, a member, or every member of a machine, resolved against a
// compiled description to qualified link and member names.

import { parseIdentifier } from "../description/notation.js";
import type { CompiledSpec } from "./compiled.js";

/** What an update takes down or brings up: a declared link, a member, or every member of a machine. */
export type Target = { readonly link: string } | { readonly member: string } | { readonly machine: string };

/** A target resolved against a compiled description: qualified link and member names. */
export interface Resolved {
  readonly links: readonly string[];
  readonly members: readonly string[];
}

/**
 * The links or members a target names in `c`, or what is wrong with it. Links: `net:member.id`
 * (the declared link that member sends or receives on with identifier id, as --in names it) or
 * the link's name in summary.json (`net.h1.1-r.1`); members: `net:member` or `net.member`;
 * machines: the machine's name (every member on it). The network may be left out when there is one.
 */
export function resolveTarget(c: CompiledSpec, target: Target): Resolved | { problem: string; fix: string } {
  const single = c.networks.length === 1 ? c.networks[0]?.name : undefined;
  if ("machine" in target) {
    const machine = c.machines.indexOf(target.machine);
    if (machine < 0) return { problem: `no machine '${target.machine}'`, fix: `machines: ${c.machines.join(", ")}` };
    return { links: [], members: c.members.filter((m) => m.machine === machine).map((m) => m.qualified) };
  }
  if ("member" in target) {
    const text = target.member;
    const [net, key] = splitNetwork(text, single, c);
    const m = c.members.find((x) => c.networks[x.network]?.name === net && x.key === key);
    if (m === undefined)
      return {
        problem: `no member '${text}'`,
        fix: `write NETWORK:MEMBER; members: ${c.members.map((x) => x.qualified.replace(".", ":")).join(", ")}`,
      };
    return { links: [], members: [m.qualified] };
  }
  const text = target.link;
  const byName = c.links.filter((l) => l.qualified === text);
  if (byName.length > 0) return { links: [text], members: [] };
  const [net, rest] = splitNetwork(text, single, c);
  const dot = rest.lastIndexOf(".");
  const member = c.members.find((x) => c.networks[x.network]?.name === net && x.key === rest.slice(0, dot));
  // Decimal without leading zeros, as the description writes it (r.01 and r.0x1 name no link).
  const written = parseIdentifier(rest.slice(dot + 1));
  const ident = written.ok ? written.value : Number.NaN;
  const fix =
    `write NETWORK:MEMBER.ID or a link name; ` + `links: ${[...new Set(c.links.map((l) => l.qualified))].join(", ")}`;
  if (dot <= 0 || member === undefined || !Number.isInteger(ident)) return { problem: `no link '${text}'`, fix };
  const found = c.links.filter(
    (l) =>
      (l.sender === member.index && l.senderOutLink === ident) ||
      l.receivers.some((r) => r.member === member.index && r.inLink === ident),
  );
  if (found.length === 0) return { problem: `${member.qualified} has no link with identifier ${ident}`, fix };
  return { links: [...new Set(found.map((l) => l.qualified))], members: [] };
}

/** "net:rest" or "net.rest" (a member's qualified name), or "rest" in the only network. */
function splitNetwork(text: string, single: string | undefined, c: CompiledSpec): [string, string] {
  const colon = text.indexOf(":");
  if (colon >= 0) return [text.slice(0, colon), text.slice(colon + 1)];
  const dot = text.indexOf(".");
  if (dot > 0 && c.networks.some((n) => n.name === text.slice(0, dot)))
    return [text.slice(0, dot), text.slice(dot + 1)];
  return [single ?? "", text];
}
