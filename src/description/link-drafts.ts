// A link of one network as written, before identifiers are allocated (./allocate.ts) and the
// network's links are named and numbered (./topology.ts): its ends read and checked against the
// network's members, and its shape — mode, group, receivers — against the model (seed §4).

import { excerpt } from "../errors.js";
import { LINK_MAX } from "../wasm/abi.js";
import type { NetworkContext } from "./context.js";
import { parseIdentifier } from "./notation.js";
import type { Path } from "./problems.js";
import type { RawLink } from "./raw.js";
import { didYouMean } from "./suggest.js";
import type { Endpoint, LinkSpec, MemberSpec } from "./types.js";

/** A link whose ends all name members of the network, before names and identifiers are checked. */
export interface Draft {
  readonly index: number;
  readonly path: Path;
  readonly raw: RawLink;
  readonly mode: LinkSpec["mode"];
  readonly from: EndpointAt | undefined;
  readonly to: readonly EndpointAt[];
  readonly external: string | undefined;
}

export interface EndpointAt extends Endpoint {
  readonly path: Path;
  /** False when the description leaves the identifier out (`h1`): ./allocate.ts chooses it, and sets `ident`. */
  readonly written: boolean;
  ident: number;
}

export const GROUP_MODES = new Set(["allcast", "anycast"]);

/** A link as written, its ends read; undefined when it is wrong (reported). */
export function draftLink(
  ctx: NetworkContext,
  members: ReadonlyMap<string, MemberSpec>,
  link: RawLink,
  path: Path,
  index: number,
): Draft | undefined {
  const { from, to, external } = link;
  if (!hasEnds(ctx, link, path)) return undefined;
  const mode = link.mode ?? "one-way";
  const toTexts =
    to === undefined
      ? []
      : typeof to === "string"
        ? [{ text: to, path: [...path, "to"] }]
        : to.map((text, j) => ({ text, path: [...path, "to", j] }));
  const shapeOk = hasShape(ctx, link, mode, toTexts.length, path);
  const fromAt = from === undefined ? undefined : endpoint(ctx, members, from, [...path, "from"]);
  const toAt = toTexts.map((t) => endpoint(ctx, members, t.text, t.path));
  if (!shapeOk || (from !== undefined && fromAt === undefined) || toAt.some((e) => e === undefined)) return undefined;
  const receivers = toAt.filter((e): e is EndpointAt => e !== undefined);
  const distinct = distinctEnds(ctx, fromAt, receivers);
  const shared = sharedOk(ctx, link, mode, fromAt, receivers, path);
  return distinct && shared ? { index, path, raw: link, mode, from: fromAt, to: receivers, external } : undefined;
}

/** Two ends: `from` and `to`, or one of them and `external`. */
function hasEnds(ctx: NetworkContext, { from, to, external }: RawLink, path: Path): boolean {
  const add = ctx.problems.add.bind(ctx.problems);
  if (from !== undefined && to !== undefined && external !== undefined) {
    add(
      [...path, "external"],
      "a link with `from` and `to` inside the network has no external end",
      "remove external, or replace from or to by it",
    );
    return false;
  }
  if (from === undefined && to === undefined) {
    add(
      path,
      "a link needs `from` and `to`",
      "write from: MEMBER.ID and to: MEMBER.ID; for an end outside the " +
        "network use external: NAME instead of one of them",
    );
    return false;
  }
  if (external === undefined && (from === undefined || to === undefined)) {
    const missing = from === undefined ? "from" : "to";
    add(
      path,
      `missing key '${missing}'`,
      `add ${missing}: MEMBER.ID, or external: NAME if that end is outside the network`,
    );
    return false;
  }
  return true;
}

/** A group link (allcast, anycast) has a group and member receivers; another link has no group and one receiver.
 * False when the receivers cannot be read as written (a missing group alone is reported, and read on). */
function hasShape(ctx: NetworkContext, link: RawLink, mode: string, receivers: number, path: Path): boolean {
  const add = ctx.problems.add.bind(ctx.problems);
  const isGroup = GROUP_MODES.has(mode);
  let shapeOk = true;
  if (isGroup && link.group === undefined) {
    add([...path, "mode"], `an ${mode} link needs a group`, "add group: NAME, the group the link implements");
  }
  if (!isGroup && link.group !== undefined) {
    add(
      [...path, "group"],
      "`group` is only for allcast and anycast links",
      "add mode: allcast or mode: anycast, or remove group",
    );
  }
  if (!isGroup && receivers > 1) {
    const problem =
      mode === "two-way" ? "a two-way link cannot be a group link" : `a ${mode} link has exactly one receiver`;
    add(
      [...path, "to"],
      `${problem}; this one lists ${receivers}`,
      "for several receivers use mode: allcast or anycast with a group",
    );
    shapeOk = false;
  }
  if (isGroup && link.to === undefined) {
    add(
      [...path, "external"],
      `the receivers of an ${mode} link are members; an external end can only be its sender`,
      "write external: NAME with to: [MEMBER.ID, …]",
    );
    shapeOk = false;
  }
  return shapeOk;
}

/** No receiver is the sender, or listed twice. */
function distinctEnds(ctx: NetworkContext, from: EndpointAt | undefined, receivers: readonly EndpointAt[]): boolean {
  let endsOk = true;
  const seen = new Set<string>();
  for (const r of receivers) {
    if (from !== undefined && endName(r) === endName(from)) {
      ctx.problems.add(
        r.path,
        `${endName(r)} is the sender of this link and cannot also be its receiver`,
        "a link joins different members",
      );
      endsOk = false;
    } else if (seen.has(endName(r))) {
      ctx.problems.add(r.path, `${endName(r)} is already a receiver of this link`, "list each receiver once");
      endsOk = false;
    }
    seen.add(endName(r));
  }
  return endsOk;
}

/** A shared link is point to point inside the network (seed §5.3.1). */
function sharedOk(
  ctx: NetworkContext,
  link: RawLink,
  mode: string,
  from: EndpointAt | undefined,
  receivers: readonly EndpointAt[],
  path: Path,
): boolean {
  if (
    link.shared === undefined ||
    (!GROUP_MODES.has(mode) &&
      link.external === undefined &&
      [from, ...receivers].every((e) => e?.network === undefined))
  )
    return true;
  ctx.problems.add(
    [...path, "shared"],
    "a shared link is a point-to-point link between two members of this network",
    "a shared link cannot be a group link, external or bridging (seed " +
      "§5.3.1); remove shared, or make it one-way or two-way inside the " +
      "network",
  );
  return false;
}

/**
 * "h1.1" → member h1, identifier 1, with the member checked against the
 * network. "lanB:sw.5" names a member of another network (a bridging link):
 * that member is checked once every network is known (./bridging.ts).
 */
function endpoint(
  ctx: NetworkContext,
  members: ReadonlyMap<string, MemberSpec>,
  text: string,
  path: Path,
): EndpointAt | undefined {
  const colon = text.indexOf(":");
  const network = colon < 0 || text.slice(0, colon) === ctx.network ? undefined : text.slice(0, colon);
  const local = text.slice(colon + 1);
  const dot = local.lastIndexOf(".");
  const member = dot < 0 ? local : local.slice(0, dot);
  const written = dot >= 0;
  const ident = written ? Number(local.slice(dot + 1)) : -1;
  let good = true;
  if (network === undefined && !members.has(member)) {
    const keys = [...members.keys()];
    ctx.problems.add(
      path,
      `no member '${excerpt(member)}' in network ${ctx.network}`,
      `${didYouMean(member, keys)}members: ${keys.join(", ")}`,
    );
    good = false;
  }
  const decimal = written ? parseIdentifier(local.slice(dot + 1)) : undefined;
  if (decimal?.ok === false) {
    ctx.problems.add(path, decimal.problem, `write ${endText(network, member)}.${ident}`);
    good = false;
  } else if (ident > LINK_MAX) {
    ctx.problems.add(
      path,
      `link identifier ${local.slice(dot + 1)} is larger than ${LINK_MAX}`,
      `use an identifier in 0..${LINK_MAX}, or leave it out (${endText(network, member)}) and strata allocates one`,
    );
    good = false;
  }
  return good ? { member, ident, path, written, ...(network === undefined ? {} : { network }) } : undefined;
}

function endText(network: string | undefined, member: string): string {
  return network === undefined ? member : `${network}:${member}`;
}

/** How a message names an endpoint's member: "sw", or "lanB:sw" for a member of another network. */
export function endName(e: Endpoint): string {
  return e.network === undefined ? e.member : `${e.network}:${e.member}`;
}

/**
 * The name of a link without `name:`: its ends as written — `h1.1-sw.1`, or `h1-sw` when the
 * identifiers are left out — never an allocated identifier, so that the name (which keys the
 * allocation, ./allocate.ts) does not depend on it.
 */
export function linkName(d: Draft): string {
  if (d.raw.name !== undefined) return d.raw.name;
  const end = (e: EndpointAt): string => (e.written ? `${endName(e)}.${e.ident}` : endName(e));
  if (d.external !== undefined) return d.external;
  const from = d.from === undefined ? "" : end(d.from);
  if (d.raw.group !== undefined) return `${from}-${d.raw.group}`;
  return `${from}-${d.to.map(end).join("-")}`;
}
