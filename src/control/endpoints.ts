// Where a capture enters a network, as a user writes it on the command line:
//
//   lan:h1.1     transmitted by member h1 on its link 1 (the link carries it to h1's peer)
//   lan:h1.h1-sw transmitted by member h1 on the link named h1-sw (for identifiers strata allocated)
//   lan:h1       sent by member h1 itself (its forward table, in-link self)
//   lan:h1@7     sent by h1 in session 7 (its send table attaches the header first)
//   lan:uplink   arriving from outside on the external link `uplink`
//
// The network may be left out when the description has only one.

import { UsageError } from "../errors.js";
import type { CompiledLink, CompiledMember, CompiledNetwork, CompiledSpec } from "./compiled.js";
import type { Injection } from "./install.js";

export interface ResolvedEndpoint extends Injection {
  /** As the user wrote it, normalised with the network: "lan:h1.1". */
  readonly text: string;
  readonly network: CompiledNetwork;
}

const FORMS =
  "NETWORK:MEMBER.LINK (an identifier or a link's name), NETWORK:MEMBER, NETWORK:MEMBER@SESSION or NETWORK:EXTERNAL";

export function resolveEndpoint(compiled: CompiledSpec, text: string): ResolvedEndpoint {
  const { network, rest } = networkOf(compiled, text);
  const normal = `${network.name}:${rest}`;
  const members = compiled.members.filter((m) => m.network === network.index);
  const findMember = (key: string): CompiledMember => {
    const m = members.find((x) => x.key === key);
    if (m === undefined)
      throw new UsageError(
        `endpoint '${text}': network ${network.name} has no member or external link '${key}' ` +
          `(members: ${members.map((x) => x.key).join(", ")})`,
      );
    return m;
  };
  const at = rest.indexOf("@");
  if (at >= 0) {
    const m = findMember(rest.slice(0, at));
    const session = sessionOf(m, rest.slice(at + 1), text);
    return { text: normal, network, kind: "session", member: m.index, session, link: -1 };
  }
  const external = arrivingOn(compiled, network, rest, text);
  if (external !== undefined)
    return { text: normal, network, kind: "link", member: -1, session: 0, link: external.index };
  // Member keys have no dot: what follows the first is a link identifier, or a link's name (which may hold dots).
  const dot = rest.indexOf(".");
  if (dot < 0) {
    const m = findMember(rest);
    return { text: normal, network, kind: "self", member: m.index, session: 0, link: -1 };
  }
  const m = findMember(rest.slice(0, dot));
  const link = sentOn(compiled, m, rest.slice(dot + 1), text);
  return { text: normal, network, kind: "link", member: m.index, session: 0, link: link.index };
}

/** The network an endpoint names (or the description's only one), and what the endpoint says after it. */
function networkOf(compiled: CompiledSpec, text: string): { network: CompiledNetwork; rest: string } {
  const colon = text.indexOf(":");
  const only = compiled.networks.length === 1 ? compiled.networks[0] : undefined;
  if (colon < 0 && only === undefined) {
    throw new UsageError(
      `endpoint '${text}' names no network; ` +
        `write ${FORMS} (networks: ${compiled.networks.map((n) => n.name).join(", ")})`,
    );
  }
  const netName = colon >= 0 ? text.slice(0, colon) : (only?.name ?? "");
  const network = compiled.networks.find((n) => n.name === netName);
  if (network === undefined) {
    throw new UsageError(
      `endpoint '${text}': there is no network '${netName}' ` +
        `(networks: ${compiled.networks.map((n) => n.name).join(", ")})`,
    );
  }
  return { network, rest: colon >= 0 ? text.slice(colon + 1) : text };
}

/** The session `written` names, one the member has a send row for. */
function sessionOf(m: CompiledMember, written: string, text: string): number {
  const session = Number(written);
  const send = m.tables.send;
  const sessions =
    send?.rows.map((r) => Number(new DataView(r.match.value.buffer, r.match.value.byteOffset).getUint32(0))) ?? [];
  if (!Number.isInteger(session) || !sessions.includes(session)) {
    throw new UsageError(
      `endpoint '${text}': ${m.qualified} has no send row for session '${written}' ` +
        `(${sessions.length === 0 ? "it has no send table" : `sessions: ${sessions.join(", ")}`})`,
    );
  }
  return session;
}

/** The external link of `network` named `name` that packets arrive on, if there is one (one they only leave on is an
 * error). */
function arrivingOn(
  compiled: CompiledSpec,
  network: CompiledNetwork,
  name: string,
  text: string,
): CompiledLink | undefined {
  const external = compiled.links.find((l) => l.network === network.index && l.sender < 0 && l.external === name);
  if (external === undefined && compiled.links.some((l) => l.network === network.index && l.external === name)) {
    throw new UsageError(
      `endpoint '${text}': external link '${name}' only leaves network ${network.name}; nothing arrives on it`,
    );
  }
  return external;
}

/** The link member `m` sends on that `which` names: its identifier, or its name. */
function sentOn(compiled: CompiledSpec, m: CompiledMember, which: string, text: string): CompiledLink {
  const ident = /^\d+$/.test(which) ? Number(which) : Number.NaN;
  const link = compiled.links.find(
    (l) => l.sender === m.index && (Number.isNaN(ident) ? l.name === which : l.senderOutLink === ident),
  );
  if (link === undefined) {
    const sends = compiled.links.filter((l) => l.sender === m.index).map((l) => `${l.senderOutLink} (${l.name})`);
    throw new UsageError(
      `endpoint '${text}': ${m.qualified} sends on no link '${which}' ` +
        `(${sends.length === 0 ? "it sends on no link" : `it sends on ${sends.join(", ")}`})`,
    );
  }
  return link;
}

export { FORMS as ENDPOINT_FORMS };
