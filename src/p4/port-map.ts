// A machine's P4 ports, and where each physical transmit row of its members sends.
//
// Each (member, link identifier) of the machine that sends or receives on a physical link is one
// P4 port, numbered from 1 in member order. Both directions of a two-way link share it; so do the
// links of one group at a member. An anycast link with several receivers gets one port per
// receiver at its sender (the device, not the wire, picks the receiver). A link between two
// members of the same machine is no port: the device hands the packet over itself. Links
// implemented by layering (transmit via a session) are no port either: their packets leave in the
// underlay's frames.

import type { CompiledLink, CompiledRow, CompiledSpec, CompiledTable } from "../control/compiled.js";
import { InputError } from "../errors.js";
import { type Device, type DevicePort, MAX_PORTS, type Target } from "./device-types.js";

/** The out-link a transmit row is for (its key: the identifier, big-endian, first). */
export const outOf = (r: CompiledRow): number => ((r.match.value[0] ?? 0) << 8) | (r.match.value[1] ?? 0);

export function transmitRow(t: CompiledTable | undefined, out: number): CompiledRow | undefined {
  return t?.rows.find((r) => outOf(r) === out);
}

/**
 * Whether a link's packets leave a sender as they are (a port), not inside an underlay's frames (a session): a link
 * from outside always; else when its sender transmits it physically, or (subduction) an overlay's shared member that
 * sends on it does.
 */
export function isPhysical(compiled: CompiledSpec, l: CompiledLink): boolean {
  if (l.sender < 0) return true;
  const physical = (member: number, out: number): boolean =>
    transmitRow(compiled.members[member]?.tables.transmit, out)?.action.name === "physical";
  return (
    physical(l.sender, l.senderOutLink) ||
    compiled.sharedOutLinks.some((s) => s.link === l.index && physical(s.member, s.outLink))
  );
}

/** The ports of a machine and the targets of its transmit rows: ports, ingress, and targets by "member:out-link". */
export function portMap(
  compiled: CompiledSpec,
  machineIndex: number,
  here: (member: number) => boolean,
  numberOf: (member: number) => number,
): { ports: DevicePort[]; ingress: Device["ingress"]; targets: Map<string, Target> } {
  const plan = new PortPlan(compiled, machineIndex, here, numberOf);
  // A link neither sent nor received here gives this machine no port (PortPlan.link): not asked whether it is physical.
  const touches = (l: CompiledLink): boolean =>
    (l.sender >= 0 && here(l.sender)) || l.receivers.some((r) => here(r.member));
  for (const l of compiled.links) if (touches(l) && isPhysical(compiled, l)) plan.link(l);
  return plan.finish();
}

/** A port not yet numbered: its place in the order, the (member, identifier) it is, and what is on it. */
interface Pending {
  readonly order: [number, number, number];
  readonly member: number;
  readonly ident: number;
  readonly links: Set<string>;
  readonly peers: Set<string>;
  readonly alsoSentBy: Set<string>;
  readonly receives: boolean;
}

/** A machine's ports being found, a physical link at a time; numbered once all are in (finish). */
class PortPlan {
  readonly #compiled: CompiledSpec;
  readonly #file: string;
  readonly #machine: string;
  readonly #here: (member: number) => boolean;
  readonly #numberOf: (member: number) => number;
  /** By "member:ident", or "member:ident:receiver:port" for one receiver of an anycast link. */
  readonly #pending = new Map<string, Pending>();
  /** Links to a member of the same machine, by "sender:out-link". */
  readonly #locals = new Map<string, Target>();
  /** Anycast links with several receivers, by "sender:out-link": each receiver's port's key. */
  readonly #anycast = new Map<string, string[]>();

  constructor(
    compiled: CompiledSpec,
    machineIndex: number,
    here: (member: number) => boolean,
    numberOf: (member: number) => number,
  ) {
    this.#compiled = compiled;
    this.#file = compiled.spec.file;
    this.#machine = compiled.machines[machineIndex] ?? "";
    this.#here = here;
    this.#numberOf = numberOf;
  }

  /** A physical link: the ports it needs at its sender, if on this machine, or at its receivers here. */
  link(l: CompiledLink): void {
    const localReceivers = l.receivers.filter((r) => r.member >= 0 && this.#here(r.member));
    const external = l.external !== undefined ? [`external ${l.external}`] : [];
    if (l.sender >= 0 && this.#here(l.sender)) {
      this.#sent(l, localReceivers, external);
      return;
    }
    const from = l.sender >= 0 ? [this.#endName(l.sender, l.senderOutLink)] : external;
    for (const r of localReceivers)
      this.#add(`${r.member}:${r.inLink}`, r.member, r.inLink, [r.member, r.inLink, -1], l, from, true);
  }

  /** A link whose sender is on this machine: a hand-over to a member here, a port per receiver (anycast), or one. */
  #sent(l: CompiledLink, localReceivers: CompiledLink["receivers"], external: string[]): void {
    const at = `${l.qualified} (${this.#endName(l.sender, l.senderOutLink)})`;
    if (l.receivers.length > 0 && localReceivers.length === l.receivers.length) {
      const r = localReceivers[0];
      if (localReceivers.length > 1 || r === undefined) {
        throw new InputError(
          this.#file,
          `link ${at}`,
          `a group link with several receivers on machine ${this.#machine}, its sender's machine, cannot be exported ` +
            `to P4`,
          "put the receivers on other machines",
        );
      }
      this.#locals.set(`${l.sender}:${l.senderOutLink}`, {
        kind: "local",
        member: this.#numberOf(r.member),
        inLink: r.inLink,
      });
      return;
    }
    if (localReceivers.length > 0) {
      throw new InputError(
        this.#file,
        `link ${at}`,
        `receivers both on machine ${this.#machine} (the sender's) and on other machines cannot be exported to P4`,
        "put all receivers of the link on other machines",
      );
    }
    if (l.mode === "anycast" && l.receivers.length > 1) {
      const keys = l.receivers.map((r) => {
        const key = `${l.sender}:${l.senderOutLink}:${r.member}:${r.inLink}`;
        const peer = [this.#endName(r.member, r.inLink)];
        this.#add(key, l.sender, l.senderOutLink, [l.sender, l.senderOutLink, r.member], l, peer, false);
        return key;
      });
      this.#anycast.set(`${l.sender}:${l.senderOutLink}`, keys);
      return;
    }
    const peers = [...l.receivers.map((r) => this.#endName(r.member, r.inLink)), ...external];
    this.#add(
      `${l.sender}:${l.senderOutLink}`,
      l.sender,
      l.senderOutLink,
      [l.sender, l.senderOutLink, -1],
      l,
      peers,
      false,
    );
  }

  #endName(member: number, ident: number): string {
    return `${this.#compiled.members[member]?.qualified ?? "?"}.${ident}`;
  }

  #add(
    key: string,
    member: number,
    ident: number,
    order: [number, number, number],
    l: CompiledLink,
    peers: string[],
    receives: boolean,
  ): void {
    const p = this.#pending.get(key) ?? {
      order,
      member,
      ident,
      links: new Set(),
      peers: new Set(),
      alsoSentBy: new Set(),
      receives,
    };
    p.links.add(l.qualified);
    for (const peer of peers) p.peers.add(peer);
    this.#pending.set(key, receives && !p.receives ? { ...p, receives } : p);
  }

  /** The ports numbered in order, the ports members receive on, and where each transmit row sends. */
  finish(): { ports: DevicePort[]; ingress: Device["ingress"]; targets: Map<string, Target> } {
    const compiled = this.#compiled;
    const sorted = [...this.#pending.entries()].sort(
      ([, a], [, b]) => a.order[0] - b.order[0] || a.order[1] - b.order[1] || a.order[2] - b.order[2],
    );
    if (sorted.length > MAX_PORTS) {
      throw new InputError(
        this.#file,
        `machine ${this.#machine}`,
        `${sorted.length} physical ports; the P4 program numbers them 1..${MAX_PORTS} (254 and 255 are reserved)`,
        "spread the members over more machines",
      );
    }
    const portOf = new Map(sorted.map(([key], i) => [key, i + 1]));
    const targets = this.#targets(portOf);
    const ports = sorted.map(([key, p]): DevicePort => ({
      port: portOf.get(key) ?? 0,
      member: compiled.members[p.member]?.qualified ?? "?",
      ident: p.ident,
      links: [...p.links],
      peers: [...p.peers],
      alsoSentBy: [...p.alsoSentBy],
    }));
    const ingress = sorted
      .filter(([, p]) => p.receives)
      .map(([key, p]) => ({ port: portOf.get(key) ?? 0, member: this.#numberOf(p.member), inLink: p.ident }));
    return { ports, ingress, targets };
  }

  /** Where each transmit row sends, by "member:out-link", given the ports' numbers; notes subduction's shared senders
   * on their ports. */
  #targets(portOf: ReadonlyMap<string, number>): Map<string, Target> {
    const compiled = this.#compiled;
    const targets = new Map<string, Target>(this.#locals);
    for (const [key, port] of portOf) {
      const [member, ident, receiver] = key.split(":");
      if (receiver === undefined) targets.set(`${member}:${ident}`, { kind: "port", port });
    }
    for (const [key, keys] of this.#anycast)
      targets.set(key, { kind: "anycast", ports: keys.map((k) => portOf.get(k) ?? 0) });
    // Subduction: the overlay's shared member sends on the underlay's shared link, out of the same port.
    for (const s of compiled.sharedOutLinks) {
      if (!this.#here(s.member)) continue;
      const l = compiled.links[s.link];
      if (l === undefined) continue;
      const t = targets.get(`${l.sender}:${l.senderOutLink}`);
      if (t !== undefined) targets.set(`${s.member}:${s.outLink}`, t);
      const p = this.#pending.get(`${l.sender}:${l.senderOutLink}`);
      p?.alsoSentBy.add(compiled.members[s.member]?.qualified ?? "?");
    }
    return targets;
  }
}
