// Members and links of one network, checked against the model (seed §2.2.2, §4):
// unique member names, links between members of this network, one identifier per
// link at each member (the two directions of a two-way link share one, and so do
// the links of one group, seed §4.3), group links with a group and receivers.

import { excerpt } from "../errors.js";
import { DESIGNS, type FieldDef } from "../wire/designs.js";
import { type NetworkContext, hopLimitField } from "./context.js";
import { formatValue } from "./notation.js";
import { parseExact } from "./patterns.js";
import type { RawLink, RawNetwork } from "./raw.js";
import { listOr } from "./suggest.js";
import type { Endpoint, LinkSpec, MemberSpec } from "./types.js";
import type { Path } from "./problems.js";
import { type Draft, draftLink, endName, type EndpointAt, GROUP_MODES, linkName } from "./link-drafts.js";

/** The links at one member, by local identifier and direction. */
export interface MemberLinks {
  /** Identifiers on which the member receives (incoming links, both directions of two-way links). */
  readonly ins: Map<number, LinkSpec>;
  /** Identifiers on which the member sends. */
  readonly outs: Map<number, LinkSpec>;
}

export interface Topology {
  readonly members: readonly MemberSpec[];
  readonly links: readonly LinkSpec[];
  /** False when some links were left out (a schema error, or a link refused): links are then not known in full. */
  readonly complete: boolean;
  /** By member key. */
  readonly memberLinks: ReadonlyMap<string, MemberLinks>;
}

/** Members and link drafts of a network, before identifiers are allocated (./allocate.ts). */
export interface TopologyDraft {
  readonly members: readonly MemberSpec[];
  readonly drafts: readonly Draft[];
  readonly complete: boolean;
  /** Other networks that links refused here would have given identifiers (bridging ends, `shared:` overlays): theirs
   * are not known in full either. */
  readonly refusedReach: ReadonlySet<string>;
}

export function readTopology(ctx: NetworkContext, raw: RawNetwork): TopologyDraft {
  checkTtl(ctx, raw);
  const members = checkMembers(ctx, raw);
  const byKey = new Map(members.map((m) => [m.key, m]));
  const drafts: Draft[] = [];
  let complete = !ctx.schemaError(["links"]);
  const refusedReach = new Set<string>();
  const rawLinks = ctx.schemaError(["links"], true) ? [] : (raw.links ?? []);
  for (const [i, link] of rawLinks.entries()) {
    if (ctx.schemaError(["links", i])) continue;
    checkRecord(ctx, link, [...ctx.path, "links", i]);
    const draft = draftLink(ctx, byKey, link, [...ctx.path, "links", i], i);
    if (draft !== undefined) {
      drafts.push(draft);
      continue;
    }
    // A refused link is reported once: rows that name its identifiers are not checked against the links left.
    complete = false;
    for (const net of networksReached(ctx.network, link)) refusedReach.add(net);
  }
  return { members, drafts, complete, refusedReach };
}

/** `record:`, and its old name `capture:`: read the same way, with a note; not both. */
function checkRecord(ctx: NetworkContext, link: RawLink, path: Path): void {
  if (link.capture === undefined) return;
  if (link.record !== undefined)
    ctx.problems.add(
      [...path, "capture"],
      "a link writes both record: and capture:",
      "keep record: only; capture: is its old name",
      true,
    );
  else ctx.problems.note(path, "capture", "capture: is now record:", "the old name is read the same way");
}

/** The other networks a link names: bridging ends (`lanB:sw.9`) and the overlay it is shared with. */
function networksReached(network: string, link: RawLink): string[] {
  const ends = [link.from, ...(typeof link.to === "string" ? [link.to] : (link.to ?? []))];
  const bridged = ends.flatMap((e) => {
    const colon = e?.indexOf(":") ?? -1;
    return e === undefined || colon < 0 ? [] : [e.slice(0, colon)];
  });
  return [...bridged, ...(link.shared === undefined ? [] : [link.shared])].filter((n) => n !== network);
}

/** Names, groups and identifiers of the links, once every end has its identifier (written or allocated). */
export function finishTopology(ctx: NetworkContext, read: TopologyDraft): Topology {
  const { members, drafts, complete } = read;
  const byKey = new Map(members.map((m) => [m.key, m]));
  const links = nameLinks(ctx, byKey, drafts);
  checkGroups(ctx, byKey, drafts);
  const memberLinks = assignIdentifiers(ctx, members, drafts, links);
  return { members, links, complete, memberLinks };
}

function checkTtl(ctx: NetworkContext, raw: RawNetwork): void {
  if (raw.ttl !== "decrement" || ctx.design === undefined || hopLimitField(ctx.design) !== undefined) return;
  const withTtl = DESIGNS.filter((d) => hopLimitField(d) !== undefined).map((d) => d.name);
  ctx.problems.add(
    [...ctx.path, "ttl"],
    `ttl: decrement needs a design with a TTL or hop limit; ${ctx.design.name} has none`,
    `remove ttl, or use header: ${listOr(withTtl)}`,
  );
}

function checkMembers(ctx: NetworkContext, raw: RawNetwork): MemberSpec[] {
  const design = ctx.design;
  const nameField: FieldDef | undefined = design?.fields.find((f) => f.name === design.dstField);
  const taken = new Map<bigint, string>();
  const members: MemberSpec[] = [];
  for (const [key, m] of Object.entries(raw.members)) {
    const path = [...ctx.path, "members", key];
    let nameValue = 0n;
    let name = String(m.name).trim();
    if (nameField !== undefined) {
      const parsed = parseExact(ctx.value([...path, "name"], m.name), nameField);
      if (!parsed.ok) {
        ctx.problems.add([...path, "name"], parsed.problem, parsed.fix);
      } else {
        nameValue = parsed.value;
        if (typeof m.name === "number") name = formatValue(nameValue, nameField.kind);
        const owner = taken.get(nameValue);
        if (owner !== undefined) {
          ctx.problems.add(
            [...path, "name"],
            `${name} is already the name of ${owner}`,
            "member names (addresses) are unique in a network",
          );
        } else {
          taken.set(nameValue, key);
        }
      }
    }
    members.push({
      key,
      name,
      nameValue,
      role: m.role ?? "user",
      machine: m.machine ?? key,
      at: ctx.problems.ref(path),
    });
  }
  return members;
}

/** The links, one per draft and in the same order. */
function nameLinks(
  ctx: NetworkContext,
  members: ReadonlyMap<string, MemberSpec>,
  drafts: readonly Draft[],
): LinkSpec[] {
  const names = new Map<string, number>();
  const externals = new Map<string, number>();
  const links: LinkSpec[] = [];
  for (const d of drafts) {
    const name = linkName(d);
    const other = names.get(name);
    // A reused external end is reported below; its default name would only repeat that.
    const repeatsExternal = d.raw.name === undefined && d.external !== undefined && externals.has(d.external);
    if (other !== undefined && !repeatsExternal) {
      const fix =
        d.raw.name === undefined ? "give one of them its own name: NAME" : "link names are unique in a network";
      ctx.problems.add(
        d.raw.name === undefined ? d.path : [...d.path, "name"],
        `link name '${excerpt(name)}' is already used by links[${other}]`,
        fix,
      );
    } else {
      names.set(name, d.index);
    }
    if (d.external !== undefined) {
      const extPath = [...d.path, "external"];
      const twice = externals.get(d.external);
      if (twice !== undefined) {
        ctx.problems.add(
          extPath,
          `external end '${excerpt(d.external)}' is already used by links[${twice}]`,
          "each external end belongs to one link; a two-way link covers both directions",
        );
      } else {
        externals.set(d.external, d.index);
      }
      if (members.has(d.external)) {
        ctx.problems.add(
          extPath,
          `'${excerpt(d.external)}' is a member of ${ctx.network}; an external end is outside the network`,
          "choose a name that is not a member key",
        );
      }
    }
    const external = d.external === undefined ? undefined : { external: d.external };
    const plain = ({ member, ident, network }: EndpointAt): Endpoint => ({
      member,
      ident,
      ...(network === undefined ? {} : { network }),
    });
    const to = d.to.map(plain);
    const from = d.from === undefined ? external : plain(d.from);
    if (from === undefined) throw new Error("a link draft has from or external");
    const link: LinkSpec = {
      name,
      mode: d.mode,
      from,
      to: d.from === undefined || external === undefined ? to : external,
      record: d.raw.record ?? d.raw.capture ?? true,
      at: ctx.problems.ref(d.path),
      ...(d.raw.group === undefined ? {} : { group: d.raw.group }),
      ...(d.raw.shared === undefined ? {} : { shared: d.raw.shared }),
    };
    links.push(link);
  }
  return links;
}

/** Seed §4.1: group names are not member names, a group has one mode, anycast senders are not its receivers. */
function checkGroups(ctx: NetworkContext, members: ReadonlyMap<string, MemberSpec>, drafts: readonly Draft[]): void {
  const groups = new Map<
    string,
    { mode: string; first: number; senders: Map<string, number>; receivers: Map<string, number> }
  >();
  for (const d of drafts) {
    const name = d.raw.group;
    if (name === undefined || !GROUP_MODES.has(d.mode)) continue;
    const path = [...d.path, "group"];
    if (members.has(name))
      ctx.problems.add(
        path,
        `group '${excerpt(name)}' has the name of a member`,
        "group names and member keys are distinct; rename the group",
      );
    let g = groups.get(name);
    if (g === undefined) {
      g = { mode: d.mode, first: d.index, senders: new Map(), receivers: new Map() };
      groups.set(name, g);
    } else if (g.mode !== d.mode) {
      ctx.problems.add(
        [...d.path, "mode"],
        `group '${excerpt(name)}' is ${g.mode} in links[${g.first}]`,
        `every link of a group has the group's mode: ${g.mode}`,
      );
    }
    if (g.mode !== "anycast") continue;
    if (d.from !== undefined) {
      const clash = g.receivers.get(endName(d.from));
      if (clash !== undefined) ctx.problems.add(d.from.path, anycastClash(endName(d.from), name, clash), ANYCAST_FIX);
      g.senders.set(endName(d.from), d.index);
    }
    for (const r of d.to) {
      const clash = g.senders.get(endName(r));
      if (clash !== undefined) ctx.problems.add(r.path, anycastClash(endName(r), name, clash), ANYCAST_FIX);
      g.receivers.set(endName(r), d.index);
    }
  }
}

const ANYCAST_FIX = "the senders of an anycast group cannot be its receivers (seed §4.1)";

function anycastClash(member: string, group: string, other: number): string {
  return (
    `${excerpt(member)} would both send to and receive from anycast group '${excerpt(group)}' (see ` +
    `links[${other}])`
  );
}

/** One use of an identifier at a member, and what may share it. */
interface Use {
  /** Ends with the same owner may share an identifier: the two directions of a link, or the links of one group. */
  readonly owner: string;
  readonly index: number;
  readonly name: string;
}

function assignIdentifiers(
  ctx: NetworkContext,
  members: readonly MemberSpec[],
  drafts: readonly Draft[],
  links: readonly LinkSpec[],
): Map<string, MemberLinks> {
  const byMember = new Map<string, MemberLinks>(members.map((m) => [m.key, { ins: new Map(), outs: new Map() }]));
  const used = new Map<string, Set<number>>(members.map((m) => [m.key, new Set()]));
  for (const d of drafts)
    for (const e of [...(d.from === undefined ? [] : [d.from]), ...d.to])
      if (e.network === undefined) used.get(e.member)?.add(e.ident);

  const uses = new Map<string, Map<number, Use>>();
  for (const [i, d] of drafts.entries()) {
    const link = links[i];
    if (link === undefined) throw new Error("one link per draft");
    const owner = d.raw.group !== undefined && GROUP_MODES.has(d.mode) ? `group:${d.raw.group}` : `link:${d.index}`;
    const twoWay = d.mode === "two-way";
    const ends: { e: EndpointAt; sends: boolean; receives: boolean }[] = [];
    if (d.from !== undefined) ends.push({ e: d.from, sends: true, receives: twoWay });
    for (const r of d.to) ends.push({ e: r, sends: twoWay, receives: true });
    for (const { e, sends, receives } of ends) {
      if (e.network !== undefined) continue; // a member of another network: see ./bridging.ts
      let atMember = uses.get(e.member);
      if (atMember === undefined) {
        atMember = new Map();
        uses.set(e.member, atMember);
      }
      const prior = atMember.get(e.ident);
      if (prior !== undefined && prior.owner !== owner) {
        ctx.problems.add(
          e.path,
          `${e.member} already uses identifier ${e.ident} for link ${prior.name} (links[${prior.index}])`,
          `at a member only the two directions of a two-way link, or links of one group, share an identifier; ` +
            `the first free one at ${e.member} is ${firstFree(used.get(e.member))}`,
        );
        continue;
      }
      const p = byMember.get(e.member);
      const sending = sends ? p?.outs.get(e.ident) : undefined;
      if (sending !== undefined) {
        // Links of one group may share an identifier where they arrive, not where they leave: a
        // sender has one link per group (seed §4.3, Figure 5), so one identifier names one out-link.
        ctx.problems.add(
          e.path,
          `${e.member} already sends on identifier ${e.ident} (link ${sending.name}); a member has one link per ` +
            `group to send on`,
          `give this link another identifier at ${e.member} (the first free one ` +
            `is ${firstFree(used.get(e.member))}), or list every receiver in one link`,
        );
        continue;
      }
      atMember.set(e.ident, { owner, index: d.index, name: link.name });
      if (p === undefined) continue;
      if (sends) p.outs.set(e.ident, link);
      if (receives && !p.ins.has(e.ident)) p.ins.set(e.ident, link);
    }
  }
  return byMember;
}

function firstFree(used: ReadonlySet<number> | undefined): number {
  let ident = 1;
  while (used?.has(ident) === true) ident++;
  return ident;
}

/** "1 (h1.1-sw.1), 2 (…)" for fixes that list a member's links. */
export function describeLinks(links: ReadonlyMap<number, LinkSpec>): string {
  return listOr([...links.entries()].sort((a, b) => a[0] - b[0]).map(([ident, link]) => `${ident} (${link.name})`));
}

/**
 * The identifiers at which a member has a link named `name` (its own links, and links of other
 * networks that reach it): one; none; or several, when link names of two networks meet there.
 */
export function identsNamed(links: MemberLinks, name: string): number[] {
  const idents = new Set<number>();
  for (const [ident, l] of [...links.ins, ...links.outs]) if (l.name === name) idents.add(ident);
  return [...idents].sort((a, b) => a - b);
}
