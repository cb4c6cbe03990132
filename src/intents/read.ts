// A network's intents as written (`routes:`, `l2:`, `demands:`), checked against its
// members and links: every name must be one of the network's, every prefix an
// address of the design's width. What passes becomes NetworkIntents.

import { excerpt } from "../errors.js";
import { parsePattern } from "../description/patterns.js";
import type { Path, Problems } from "../description/problems.js";
import type { RawDemand, RawL2, RawMemberSet, RawRoutes } from "../description/raw.js";
import { didYouMean } from "../description/suggest.js";
import type { Demand, L2Intent, NetworkSpec, RoutesIntent } from "../description/types.js";

/**
 * Designs the routes intent routes: those whose members are named by IP addresses (ipv4, ipv6, and gre and vxlan,
 * routed by their outer IPv4 header: the underlay of an overlays intent).
 */
const ROUTED = new Set(["ipv4", "ipv6"]);

export function readRoutes(problems: Problems, net: NetworkSpec, raw: RawRoutes, path: Path): RoutesIntent | undefined {
  if (!ROUTED.has(net.design.nameKind)) {
    problems.add(
      path,
      `routes are for IP networks: ${net.name}'s header is ${net.design.name}`,
      net.design.name === "ethernet"
        ? "an Ethernet network's intent is l2:, forwarding to its hosts and a flood tree for broadcast; " +
            "routes: is for an ipv4 or ipv6 network"
        : "write routes: on an ipv4 or ipv6 network, or rows under tables:",
      true,
    );
    return undefined;
  }
  const before = problems.count;
  const costs = readCosts(problems, net, raw.costs, path);
  const field = net.design.fields.find((f) => f.name === net.design.dstField);
  const prefixes = new Map<string, { value: bigint; len: number }[]>();
  for (const [key, list] of Object.entries(raw.prefixes ?? {})) {
    if (!knownMember(problems, net, key, [...path, "prefixes", key])) continue;
    const own: { value: bigint; len: number }[] = [];
    list.forEach((text, i) => {
      const p = field === undefined ? undefined : parsePattern(text, field);
      const at = [...path, "prefixes", key, i];
      if (p === undefined || field === undefined) return;
      if (!p.ok) problems.add(at, p.problem, p.fix);
      else if (p.value?.kind === "prefix") own.push({ value: p.value.value, len: p.value.len });
      else if (p.value?.kind === "exact") own.push({ value: p.value.value, len: field.bits });
      else problems.add(at, `'${excerpt(text)}' is not a prefix`, `write an address or a prefix, like 10.9.0.0/16`);
    });
    prefixes.set(key, own);
  }
  if (problems.count > before) return undefined;
  return { costs, prefixes, at: problems.ref(path) };
}

/** The l2 intent, on an Ethernet network only. */
export function readL2(problems: Problems, net: NetworkSpec, raw: RawL2, path: Path): L2Intent | undefined {
  if (net.design.name !== "ethernet") {
    problems.add(
      path,
      `l2 is for Ethernet networks: ${net.name}'s header is ${net.design.name}`,
      "write l2: on an ethernet network, routes: on an IP one, or rows under tables:",
      true,
    );
    return undefined;
  }
  const before = problems.count;
  const costs = readCosts(problems, net, raw.costs, path);
  return problems.count > before ? undefined : { costs, at: problems.ref(path) };
}

/** An intent's link costs, each keyed by one of the network's link names. */
function readCosts(
  problems: Problems,
  net: NetworkSpec,
  raw: Readonly<Record<string, number>> | undefined,
  path: Path,
): Map<string, number> {
  const links = new Set(net.links.map((l) => l.name));
  const costs = new Map<string, number>();
  for (const [name, cost] of Object.entries(raw ?? {})) {
    if (links.has(name)) costs.set(name, cost);
    else
      problems.add(
        [...path, "costs", name],
        `no link named '${excerpt(name)}' in network ${net.name}`,
        `${didYouMean(name, links)}costs are keyed by link name`,
        true,
      );
  }
  return costs;
}

/** The pairs the demands ask for (a member's demand on itself is none), each with its place. */
export function readDemands(problems: Problems, net: NetworkSpec, raw: readonly RawDemand[], path: Path): Demand[] {
  const out: Demand[] = [];
  raw.forEach((d, i) => {
    const at = problems.ref([...path, i]);
    const from = memberSet(problems, net, d.from, [...path, i, "from"]);
    const to = memberSet(problems, net, d.to, [...path, i, "to"]);
    for (const f of from) for (const t of to) if (f !== t) out.push({ from: f, to: t, at });
  });
  return out;
}

function memberSet(problems: Problems, net: NetworkSpec, raw: RawMemberSet, path: Path): string[] {
  if (raw === "*") return net.members.map((m) => m.key);
  if (typeof raw === "string") return knownMember(problems, net, raw, path) ? [raw] : [];
  return raw.filter((k, i) => knownMember(problems, net, k, [...path, i]));
}

function knownMember(problems: Problems, net: NetworkSpec, key: string, path: Path): boolean {
  if (net.members.some((m) => m.key === key)) return true;
  const keys = net.members.map((m) => m.key);
  problems.add(
    path,
    `no member '${excerpt(key)}' in network ${net.name}`,
    `${didYouMean(key, keys)}members: ${keys.slice(0, 8).join(", ")}${keys.length > 8 ? ", …" : ""}`,
  );
  return false;
}
