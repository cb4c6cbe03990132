// Layering across networks (seed §5.2), checked once every network is known.
//
// A transmit row `via: { session: C.S }` hands the overlay packet to session S
// of network C's member on the same machine (ExternalSession); a receive row
// `do: { link: A.L }` hands what is inside to network A's member on the same
// machine, arriving on its link L (ExternalLink). Attachments are by machine:
// the member of the other network that runs on this member's machine. The
// model's rules (seed §5.2.4):
//
// - the other network exists, and has exactly one member on the machine (an
//   overlay member attaches to at most one member of each underlay network);
// - an underlay member is the attachment of at most one member of each overlay
//   network;
// - one session implements one overlay link: a session is named by at most one
//   transmit row; it must be one the underlay member has a send row for;
// - ExternalLink names a link on which the overlay member receives: one of its
//   network's, or a bridging link another network declares to it (seed Figure 8:
//   a bridging link implemented by a session, at either end);
// - layering is a hierarchy: no network depends on itself, directly or not.

import type { Problems } from "./problems.js";
import { didYouMean } from "./suggest.js";
import type { MemberSpec, NetworkSpec, RowSpec, SourceRef } from "./types.js";

/** The member of `net` that runs on `machine`, when there is exactly one. */
export function memberOnMachine(net: NetworkSpec, machine: string): MemberSpec | undefined {
  const on = net.members.filter((m) => m.machine === machine);
  return on.length === 1 ? on[0] : undefined;
}

/**
 * `receivesOn(network, member)`: the identifiers on which the member receives, every link that
 * reaches it counted; undefined when the network's links are not all known (one was refused).
 */
export function checkLayering(
  problems: Problems,
  networks: readonly NetworkSpec[],
  receivesOn: (network: string, member: string) => readonly number[] | undefined,
): void {
  const check = new LayeringCheck(problems, networks, receivesOn);
  for (const net of networks) {
    // Subduction is layering: the overlay of a shared link depends on the network that declares it.
    for (const l of net.links)
      if (l.shared !== undefined && l.sharedAt !== undefined) check.depend(l.shared, net.name, l.at);
    for (const m of net.members) {
      const tables = net.tables.get(m.key);
      for (const row of tables?.transmit?.rows ?? []) check.transmitRow(net, m, row);
      for (const row of tables?.receive?.rows ?? []) check.receiveRow(net, m, row);
    }
  }
  checkHierarchy(problems, check.dependsOn);
}

type Role = "underlay" | "overlay";

/** The rows that layer networks, checked one by one, and what they make: the dependencies, attachments, sessions. */
class LayeringCheck {
  /** Overlay network → underlay networks, each with the first row that made the edge. */
  readonly dependsOn = new Map<string, Map<string, SourceRef>>();
  /** "C.U@S" → the transmit row that uses the session. */
  readonly #sessionUsers = new Map<string, string>();
  /** "C.U>A" → the overlay member of A that U is the attachment of. */
  readonly #attachedTo = new Map<string, string>();
  readonly #byName: ReadonlyMap<string, NetworkSpec>;
  readonly #problems: Problems;
  readonly #networks: readonly NetworkSpec[];
  readonly #receivesOn: (network: string, member: string) => readonly number[] | undefined;

  constructor(
    problems: Problems,
    networks: readonly NetworkSpec[],
    receivesOn: (network: string, member: string) => readonly number[] | undefined,
  ) {
    this.#problems = problems;
    this.#networks = networks;
    this.#receivesOn = receivesOn;
    this.#byName = new Map(networks.map((n) => [n.name, n]));
  }

  depend(overlay: string, underlay: string, at: SourceRef): void {
    const edges = this.dependsOn.get(overlay) ?? new Map<string, SourceRef>();
    if (!edges.has(underlay)) edges.set(underlay, at);
    this.dependsOn.set(overlay, edges);
  }

  /** A transmit row `via: { session: C.S }`: the member's attachment in C, and a session of its own there. */
  transmitRow(net: NetworkSpec, m: MemberSpec, row: RowSpec): void {
    const a = row.action;
    if (a.kind !== "session") return;
    const underlay = this.#other(a.network, a.at, "underlay");
    if (underlay === undefined) return;
    // Only links of nonlocal groups are implemented by layering (seed §5.2.4).
    const group = net.links.find(
      (l) => l.group !== undefined && !("external" in l.from) && l.from.member === m.key && l.from.ident === row.out,
    )?.group;
    if (group !== undefined && !net.nonlocal.has(group)) {
      this.#problems.addRef(
        a.at,
        `link ${row.out ?? 0} of ${m.key} implements group '${group}', which is local: only links of ` +
          `nonlocal groups are implemented by layering`,
        `declare it nonlocal: \`nonlocal: [${group}]\` in network ${net.name}`,
      );
    }
    this.depend(net.name, underlay.name, a.at);
    const u = this.#attachment(underlay, m, a.at, "underlay");
    if (u === undefined) return;
    this.#attach(underlay, u, net, m, a.at);
    const sessions = sessionsOf(underlay, u);
    if (!sessions.includes(a.session)) {
      this.#problems.addRef(
        a.at,
        `${underlay.name}.${u.key} has no send row for session ${a.session}: its send table ` +
          `puts ${underlay.name}'s header on the packet`,
        sessions.length === 0
          ? `give ${underlay.name}.${u.key} a send row { session: ${a.session}, header: { … } }`
          : `sessions of ${underlay.name}.${u.key}: ${sessions.join(", ")}`,
      );
    }
    const key = `${underlay.name}.${u.key}@${a.session}`;
    const user = this.#sessionUsers.get(key);
    if (user !== undefined) {
      this.#problems.addRef(
        a.at,
        `session ${a.session} of ${underlay.name}.${u.key} already implements ${user}: one session ` +
          `implements one overlay link`,
        `give this link a session of its own`,
      );
    } else {
      this.#sessionUsers.set(key, `${net.name}.${m.key} out ${row.out ?? 0}`);
    }
  }

  /** A receive row `do: { link: A.L }`: the member's attachment in A, which receives on L. */
  receiveRow(net: NetworkSpec, m: MemberSpec, row: RowSpec): void {
    const a = row.action;
    if (a.kind !== "link") return;
    const overlay = this.#other(a.network, a.at, "overlay");
    if (overlay === undefined) return;
    this.depend(overlay.name, net.name, a.at);
    const o = this.#attachment(overlay, m, a.at, "overlay");
    if (o === undefined) return;
    this.#attach(net, m, overlay, o, a.at);
    const ins = this.#receivesOn(overlay.name, o.key);
    if (ins !== undefined && !ins.includes(a.ident)) {
      this.#problems.addRef(
        a.at,
        `${overlay.name}.${o.key} receives on no link ${a.ident}: the packet would arrive on a link it does ` +
          `not have`,
        ins.length === 0
          ? `declare a link to ${o.key}.${a.ident} in ${overlay.name}`
          : `${o.key} receives on ${ins.join(", ")}`,
      );
    }
  }

  #other(name: string, at: SourceRef, role: Role): NetworkSpec | undefined {
    const net = this.#byName.get(name);
    if (net === undefined) {
      const names = this.#networks.map((n) => n.name);
      this.#problems.addRef(
        at,
        `there is no network '${name}'`,
        `${didYouMean(name, names)}the ${role} must be one of the description's networks: ${names.join(", ")}`,
      );
    }
    return net;
  }

  /** The one member of `net` on `m`'s machine. */
  #attachment(net: NetworkSpec, m: MemberSpec, at: SourceRef, role: Role): MemberSpec | undefined {
    const on = net.members.filter((x) => x.machine === m.machine);
    if (on.length === 1) return on[0];
    if (on.length === 0) {
      this.#problems.addRef(
        at,
        `no member of ${net.name} runs on machine ${m.machine} (the machine of ${m.key}): layering hands packets ` +
          `between members on one machine`,
        `give the ${role} member of ${net.name} \`machine: ${m.machine}\`, or name a network with a member there`,
      );
    } else {
      this.#problems.addRef(
        at,
        `${on.length} members of ${net.name} run on machine ${m.machine} (${on.map((x) => x.key).join(", ")}): ` +
          `an ${
            role === "underlay"
              ? "overlay member attaches to at most one member of each underlay network"
              : "underlay member is the attachment of at most one member of each " + "overlay network"
          }`,
        `put one of them on another machine`,
      );
    }
    return undefined;
  }

  #attach(underlay: NetworkSpec, u: MemberSpec, overlay: NetworkSpec, o: MemberSpec, at: SourceRef): void {
    const key = `${underlay.name}.${u.key}>${overlay.name}`;
    const earlier = this.#attachedTo.get(key);
    if (earlier === undefined) this.#attachedTo.set(key, o.key);
    else if (earlier !== o.key) {
      this.#problems.addRef(
        at,
        `${underlay.name}.${u.key} is already the attachment of ${overlay.name}.${earlier}: an underlay member ` +
          `is the attachment of at most one member of each overlay network`,
        `put ${overlay.name}.${o.key} on a machine of its own`,
      );
    }
  }
}

function sessionsOf(net: NetworkSpec, m: MemberSpec): number[] {
  return (net.tables.get(m.key)?.send?.rows ?? []).flatMap((r: RowSpec) =>
    r.session === undefined ? [] : [r.session],
  );
}

/** Layering_is_hierarchical: the overlay → underlay graph has no cycle. */
function checkHierarchy(problems: Problems, dependsOn: ReadonlyMap<string, ReadonlyMap<string, SourceRef>>): void {
  const state = new Map<string, "open" | "done">();
  const reported = new Set<string>();
  const visit = (net: string, path: string[]): void => {
    state.set(net, "open");
    for (const [under, at] of dependsOn.get(net) ?? []) {
      if (state.get(under) === "open") {
        const cycle = [...path.slice(path.indexOf(under)), net, under];
        const key = [...cycle].sort().join(",");
        if (!reported.has(key)) {
          reported.add(key);
          problems.addRef(
            at,
            `layering is not a hierarchy: ${cycle.join(" is layered on ")}`,
            "a network cannot depend on itself, directly or through others; " +
              "implement one of these links physically or by another network",
          );
        }
      } else if (state.get(under) === undefined) {
        visit(under, [...path, net]);
      }
    }
    state.set(net, "done");
  };
  for (const net of dependsOn.keys()) if (state.get(net) === undefined) visit(net, []);
}
