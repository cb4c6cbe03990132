// One P4 device per machine: what of a compiled description runs on it, in the
// terms every P4 writer shares — member numbers, P4 ports, tables with their
// keys and sizes, each row's action call, multicast groups (replication) and
// action selectors (anycast). The program, P4Info, entries and CLI commands are
// all written from a Device, and the importer reads entries back through one.
//
// Ports: each (member, link identifier) of the machine that sends or receives
// on a physical link is one P4 port, numbered from 1 in member order. Both
// directions of a two-way link share it; so do the links of one group at a
// member. An anycast link with several receivers gets one port per receiver at
// its sender (the device, not the wire, picks the receiver). A link between two
// members of the same machine is no port: the device hands the packet over
// itself. Links implemented by layering (transmit via a session) are no port
// either: their packets leave in the underlay's frames.

import { InputError } from "../errors.js";
import type {
  CompiledLink,
  CompiledMember,
  CompiledNetwork,
  CompiledRow,
  CompiledSpec,
  CompiledTable,
} from "../control/compiled.js";
import {
  type MatchKind,
  PORT_SELF,
  PORT_SHARED,
  ROLE_ACTIONS,
  type RoleAction,
  TABLE_ROLES,
  type TableRole,
} from "../wasm/abi.js";
import type { KeyField } from "../wasm/tables.js";
import { type DesignDef, IN_LINK_FIELD, keyLayout } from "../wire/designs.js";
import {
  ACTION_NAMES as A,
  GROUP_BITS,
  LINK_BITS,
  MEMBER_BITS,
  missAction,
  p4Ident,
  PORT_BITS,
  pushAction,
  SESSION_BITS,
} from "./names.js";

/** Reserved P4 ports: packets to and from the controller, and the port replicas that need another pass are sent to. */
export const CPU_PORT = 255;
export const RECIRC_PORT = 254;
export const MAX_PORTS = 253;
/** Members per device: member numbers are bit<8>, 0 meaning none. */
export const MAX_MEMBERS = 255;
/** The clone session that takes the receive copy of an acquire row's `both`. */
export const CLONE_SESSION_BOTH = 1;

export interface DeviceMember {
  /** 1-based on the device: meta.member in the program, the `member` parameter of hand-off actions. */
  readonly number: number;
  readonly member: CompiledMember;
  readonly network: CompiledNetwork;
  /** P4 identifier: network_member ("lanA_r"). */
  readonly ident: string;
  readonly design: DesignDef;
  /** Subduction: the shared member of the other network on this machine. */
  readonly partner?: DeviceMember;
}

export interface DevicePort {
  readonly port: number;
  /** The member receiving (and usually sending) on it, qualified ("lanA.r"). */
  readonly member: string;
  readonly ident: number;
  /** Qualified names of the links on this port. */
  readonly links: readonly string[];
  /** What is at the other end: members ("lanB.sw2.9") or an external end. */
  readonly peers: readonly string[];
  /** Other members of this machine that send on it (subduction's shared member). */
  readonly alsoSentBy: readonly string[];
}

export interface DeviceKey {
  /** As the description and the key vector name it: "in", "dst", "out", "session". */
  readonly name: string;
  readonly bits: number;
  readonly kind: MatchKind;
  readonly field: KeyField;
  /** The P4 expression the table matches. */
  readonly expr: string;
}

export interface ActionParam {
  readonly name: string;
  readonly bits: number;
}

export interface DeviceAction {
  readonly name: string;
  readonly params: readonly ActionParam[];
}

export interface ActionCall {
  readonly action: string;
  readonly args: readonly bigint[];
}

export interface DeviceEntry {
  readonly row: CompiledRow;
  /** The action the row runs (for an anycast transmit row: any one member of its group). */
  readonly call: ActionCall;
  /** Tables with a selector: the profile member, or the group (anycast), the entry points to. */
  readonly profileMember?: number;
  readonly profileGroup?: number;
}

export interface SelectorGroup {
  readonly id: number;
  /** The anycast out-link. */
  readonly outLink: number;
  readonly members: readonly number[];
}

export interface DeviceSelector {
  readonly name: string;
  /** The action profile's members: id = index + 1. */
  readonly members: readonly ActionCall[];
  readonly groups: readonly SelectorGroup[];
  readonly size: number;
  readonly maxGroupSize: number;
  /** The fields the hash spreads flows by (the design's flow fields, as anycast links do). */
  readonly flowKeys: readonly string[];
}

export interface DeviceTable {
  /** P4 name: "lanA_r_acquire". */
  readonly name: string;
  readonly role: TableRole;
  readonly member: DeviceMember;
  readonly table: CompiledTable;
  readonly keys: readonly DeviceKey[];
  /** Actions an entry may name, in the program's order. */
  readonly actions: readonly string[];
  /** The constant default action (drop, with the table's miss reason). */
  readonly miss: string;
  readonly selector?: DeviceSelector;
  /**
   * A table that matches no field (`acquire: [ { do: forward } ]`) is keyless in P4: P4Runtime
   * refuses entries for it, so its first row (the only one any packet reaches) is its default action.
   */
  readonly keyless: boolean;
  readonly entries: readonly DeviceEntry[];
}

export interface MulticastGroup {
  readonly id: number;
  readonly member: DeviceMember;
  /** Out-links in the row's order; each replica's instance (egress_rid) is its out-link. */
  readonly outLinks: readonly number[];
  readonly replicas: readonly { readonly port: number; readonly instance: number }[];
}

export interface Device {
  readonly machine: string;
  readonly index: number;
  /** P4Runtime device_id: the machine's place in the description, from 1. */
  readonly deviceId: number;
  readonly members: readonly DeviceMember[];
  readonly ports: readonly DevicePort[];
  readonly tables: readonly DeviceTable[];
  readonly actions: readonly DeviceAction[];
  readonly multicast: readonly MulticastGroup[];
  /** Whether some acquire row says `both` (the clone session is then configured). */
  readonly cloneBoth: boolean;
  /** Designs whose headers the program parses, in registry order. */
  readonly designs: readonly DesignDef[];
  /** Members that receive on each port, for the first pass: port → (member number, in-link). */
  readonly ingress: readonly { readonly port: number; readonly member: number; readonly inLink: number }[];
}

/** Where a physical transmit row of a member sends. */
type Target =
  | { readonly kind: "port"; readonly port: number }
  | { readonly kind: "local"; readonly member: number; readonly inLink: number }
  | { readonly kind: "anycast"; readonly ports: readonly number[] }
  | { readonly kind: "none" };

/** Every machine's device, in the order of compiled.machines. */
export function devices(compiled: CompiledSpec): Device[] {
  return compiled.machines.map((_, i) => device(compiled, i));
}

export function device(compiled: CompiledSpec, machineIndex: number): Device {
  const machine = compiled.machines[machineIndex] ?? "";
  const file = compiled.spec.file;
  const members = machineMembers(compiled, machineIndex);
  if (members.length > MAX_MEMBERS) {
    throw new InputError(
      file,
      `machine ${machine}`,
      `${members.length} members on one machine; the P4 program numbers them in 8 bits (at most ${MAX_MEMBERS})`,
      "spread the members over more machines",
    );
  }
  const byIndex = new Map(members.map((m) => [m.member.index, m]));
  const here = (memberIndex: number): boolean => byIndex.has(memberIndex);
  const numberOf = (memberIndex: number, what: string): number => {
    const m = byIndex.get(memberIndex);
    if (m === undefined) throw new Error(`${what}: member ${memberIndex} is not on machine ${machine}`);
    return m.number;
  };

  const { ports, ingress, targets } = portMap(compiled, machineIndex, here, (i) => numberOf(i, "port map"));
  const targetOf = (member: number, out: number): Target => targets.get(`${member}:${out}`) ?? { kind: "none" };

  const multicast: MulticastGroup[] = [];
  const groupFor = (m: DeviceMember, outLinks: readonly number[]): number => {
    const found = multicast.find((g) => g.member === m && g.outLinks.join(",") === outLinks.join(","));
    if (found !== undefined) return found.id;
    const transmit = m.member.tables.transmit;
    const replicas = outLinks.map((o) => {
      const physical = transmitRow(transmit, o)?.action.name === "physical";
      const t = targetOf(m.member.index, o);
      // A copy that needs the transmit table again (a session, a local hand-off, an anycast choice) takes another pass.
      return { port: physical && t.kind === "port" ? t.port : RECIRC_PORT, instance: o };
    });
    const id = multicast.length + 1;
    multicast.push({ id, member: m, outLinks: [...outLinks], replicas });
    return id;
  };

  const tables: DeviceTable[] = [];
  let cloneBoth = false;
  for (const m of members) {
    for (const role of TABLE_ROLES) {
      const t = m.member.tables[role];
      if (t === undefined) continue;
      const at = t.spec?.at.path ?? `networks.${m.network.name}.tables.${m.member.key}.${role}`;
      const keys = tableKeys(m, t);
      const entries: DeviceEntry[] = [];
      let selector: DeviceSelector | undefined;
      const anycastLinks =
        role === "transmit"
          ? t.rows.filter((r) => r.action.name === "physical" && targetOf(m.member.index, outOf(r)).kind === "anycast")
          : [];
      const profile: ActionCall[] = [];
      const groups: SelectorGroup[] = [];
      const memberId = (call: ActionCall): number => {
        const k = profile.findIndex((c) => c.action === call.action && c.args.join(",") === call.args.join(","));
        return k >= 0 ? k + 1 : profile.push(call);
      };
      const keyless = keys.length === 0;
      // Keyless: rows after the first are never reached (first match wins, and the first matches everything).
      for (const r of keyless ? t.rows.slice(0, 1) : t.rows) {
        const call = rowCall(
          role,
          m,
          r,
          (o) => groupFor(m, o),
          (i) => numberOf(i, `${at}: hand-off`),
          targetOf,
          file,
          at,
        );
        if (anycastLinks.length === 0) {
          entries.push({ row: r, call });
          continue;
        }
        const target = r.action.name === "physical" ? targetOf(m.member.index, outOf(r)) : undefined;
        if (target?.kind === "anycast") {
          const ids = target.ports.map((p) => memberId({ action: A.transmitPhysical, args: [BigInt(p)] }));
          const group = { id: groups.length + 1, outLink: outOf(r), members: ids };
          groups.push(group);
          entries.push({ row: r, call, profileGroup: group.id });
        } else {
          entries.push({ row: r, call, profileMember: memberId(call) });
        }
      }
      if (groups.length > 0) {
        selector = {
          name: `${m.ident}_transmit_selector`,
          members: profile,
          groups,
          size: Math.max(profile.length, t.capacity),
          maxGroupSize: Math.max(...groups.map((g) => g.members.length)),
          flowKeys: m.design.fields
            .filter((f) => f.flow === true)
            .map((f) => `meta.${m.design.name}.${p4Ident(f.name)}`),
        };
      }
      if (role === "acquire" && t.rows.some((r) => r.action.name === "both")) cloneBoth = true;
      tables.push({
        name: `${m.ident}_${role}`,
        role,
        member: m,
        table: t,
        keys,
        actions: tableActions(role, m),
        miss: missAction(role),
        ...(selector !== undefined ? { selector } : {}),
        keyless,
        entries,
      });
    }
  }

  const designs = [...new Set(members.map((m) => m.design))].sort((a, b) => a.id - b.id);
  return {
    machine,
    index: machineIndex,
    deviceId: machineIndex + 1,
    members,
    ports,
    tables,
    actions: deviceActions(members, designs),
    multicast,
    cloneBoth,
    designs,
    ingress,
  };
}

/** The members of a machine, numbered, with their P4 identifiers and subduction partners. */
export function machineMembers(compiled: CompiledSpec, machineIndex: number): DeviceMember[] {
  const local = compiled.members.filter((m) => m.machine === machineIndex);
  const idents = new Map<string, number>();
  const members = local.map((member, i): DeviceMember => {
    const network = compiled.networks[member.network];
    if (network === undefined) throw new Error(`member ${member.qualified} has no network`);
    let ident = p4Ident(`${network.name}_${member.key}`);
    // "lan-a.b" and "lan_a.b" would both be lan_a_b: the later one is told apart by its number.
    if (idents.has(ident)) ident = `${ident}_${i + 1}`;
    idents.set(ident, i);
    return { number: i + 1, member, network, ident, design: network.spec.design };
  });
  // Subduction partners: acquire `shared` / forward `shared` rows name them in their arg.
  return members.map((m) => {
    const arg = Object.values(m.member.tables)
      .flatMap((t) => t.rows)
      .find((r) => r.action.name === "shared-acquire" || r.action.name === "shared-forward")?.action.arg;
    const partner = members.find((p) => p.member.index === arg);
    return partner === undefined ? m : { ...m, partner };
  });
}

/** The out-link a transmit row is for (its key: the identifier, big-endian, first). */
export const outOf = (r: CompiledRow): number => ((r.match.value[0] ?? 0) << 8) | (r.match.value[1] ?? 0);

function transmitRow(t: CompiledTable | undefined, out: number): CompiledRow | undefined {
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
    physical(l.sender, l.senderPort) ||
    compiled.sharedPorts.some((s) => s.link === l.index && physical(s.member, s.port))
  );
}

function portMap(
  compiled: CompiledSpec,
  machineIndex: number,
  here: (member: number) => boolean,
  numberOf: (member: number) => number,
): { ports: DevicePort[]; ingress: Device["ingress"]; targets: Map<string, Target> } {
  const file = compiled.spec.file;
  const machine = compiled.machines[machineIndex] ?? "";
  interface Pending {
    readonly order: [number, number, number];
    readonly member: number;
    readonly ident: number;
    readonly links: Set<string>;
    readonly peers: Set<string>;
    readonly alsoSentBy: Set<string>;
    readonly receives: boolean;
  }
  const pending = new Map<string, Pending>();
  const endName = (member: number, ident: number): string => `${compiled.members[member]?.qualified ?? "?"}.${ident}`;
  const add = (
    key: string,
    member: number,
    ident: number,
    order: [number, number, number],
    l: CompiledLink,
    peers: string[],
    receives: boolean,
  ): void => {
    const p = pending.get(key) ?? {
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
    pending.set(key, receives && !p.receives ? { ...p, receives } : p);
  };
  const locals = new Map<string, Target>();
  const anycast = new Map<string, string[]>();

  for (const l of compiled.links) {
    if (!isPhysical(compiled, l)) continue;
    const senderHere = l.sender >= 0 && here(l.sender);
    const localReceivers = l.receivers.filter((r) => r.member >= 0 && here(r.member));
    const external = l.external !== undefined ? [`external ${l.external}`] : [];
    if (senderHere) {
      const at = `${l.qualified} (${endName(l.sender, l.senderPort)})`;
      if (l.receivers.length > 0 && localReceivers.length === l.receivers.length) {
        const r = localReceivers[0];
        if (localReceivers.length > 1 || r === undefined) {
          throw new InputError(
            file,
            `link ${at}`,
            `a group link with several receivers on machine ${machine}, its sender's machine, cannot be exported to P4`,
            "put the receivers on other machines",
          );
        }
        locals.set(`${l.sender}:${l.senderPort}`, { kind: "local", member: numberOf(r.member), inLink: r.port });
        continue;
      }
      if (localReceivers.length > 0) {
        throw new InputError(
          file,
          `link ${at}`,
          `receivers both on machine ${machine} (the sender's) and on other machines cannot be exported to P4`,
          "put all receivers of the link on other machines",
        );
      }
      if (l.mode === "anycast" && l.receivers.length > 1) {
        const keys = l.receivers.map((r) => {
          const key = `${l.sender}:${l.senderPort}:${r.member}:${r.port}`;
          add(key, l.sender, l.senderPort, [l.sender, l.senderPort, r.member], l, [endName(r.member, r.port)], false);
          return key;
        });
        anycast.set(`${l.sender}:${l.senderPort}`, keys);
      } else {
        add(
          `${l.sender}:${l.senderPort}`,
          l.sender,
          l.senderPort,
          [l.sender, l.senderPort, -1],
          l,
          [...l.receivers.map((r) => endName(r.member, r.port)), ...external],
          false,
        );
      }
    } else {
      const from = l.sender >= 0 ? [endName(l.sender, l.senderPort)] : external;
      for (const r of localReceivers)
        add(`${r.member}:${r.port}`, r.member, r.port, [r.member, r.port, -1], l, from, true);
    }
  }
  const sorted = [...pending.entries()].sort(
    ([, a], [, b]) => a.order[0] - b.order[0] || a.order[1] - b.order[1] || a.order[2] - b.order[2],
  );
  if (sorted.length > MAX_PORTS) {
    throw new InputError(
      file,
      `machine ${machine}`,
      `${sorted.length} physical ports; the P4 program numbers them 1..${MAX_PORTS} (254 and 255 are reserved)`,
      "spread the members over more machines",
    );
  }
  const portOf = new Map(sorted.map(([key], i) => [key, i + 1]));
  const targets = new Map<string, Target>(locals);
  for (const [key, port] of portOf) {
    const [member, ident, receiver] = key.split(":");
    if (receiver === undefined) targets.set(`${member}:${ident}`, { kind: "port", port });
  }
  for (const [key, keys] of anycast) targets.set(key, { kind: "anycast", ports: keys.map((k) => portOf.get(k) ?? 0) });
  // Subduction: the overlay's shared member sends on the underlay's shared link, out of the same port.
  for (const s of compiled.sharedPorts) {
    if (!here(s.member)) continue;
    const l = compiled.links[s.link];
    if (l === undefined) continue;
    const t = targets.get(`${l.sender}:${l.senderPort}`);
    if (t !== undefined) targets.set(`${s.member}:${s.port}`, t);
    const p = pending.get(`${l.sender}:${l.senderPort}`);
    p?.alsoSentBy.add(compiled.members[s.member]?.qualified ?? "?");
  }
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
    .map(([key, p]) => ({ port: portOf.get(key) ?? 0, member: numberOf(p.member), inLink: p.ident }));
  return { ports, ingress, targets };
}

function tableKeys(m: DeviceMember, t: CompiledTable): DeviceKey[] {
  const layout = keyLayout(m.design);
  return t.fields.map((field): DeviceKey => {
    if (t.role === "transmit")
      return { name: field.name, bits: LINK_BITS, kind: field.kind, field, expr: "meta.out_link" };
    if (t.role === "send")
      return { name: field.name, bits: SESSION_BITS, kind: field.kind, field, expr: "meta.session" };
    if (field.name === IN_LINK_FIELD.name)
      return { name: field.name, bits: IN_LINK_FIELD.bits, kind: field.kind, field, expr: "meta.in_link" };
    const slot = layout.slots.find((s) => s.field.name === field.name);
    if (slot === undefined) throw new Error(`${m.design.name} has no field ${field.name}`);
    return {
      name: field.name,
      bits: slot.field.bits,
      kind: field.kind,
      field,
      expr: `meta.${m.design.name}.${p4Ident(field.name)}`,
    };
  });
}

/**
 * The P4 actions each action of the catalogue (ROLE_ACTIONS) may become; rowCall chooses one for each row. An `out`
 * row goes to one out-link, to several (a multicast group) or to none; a `physical` row to a P4 port, to a member of
 * the same machine, or to no link. A send row's push has an action per design (pushAction).
 */
const P4_ACTIONS = {
  forward: [A.acquireForward],
  receive: [A.acquireReceive],
  both: [A.acquireBoth],
  "shared-acquire": [A.acquireShared],
  out: [A.forwardOut, A.forwardReplicate, A.forwardDrop],
  drop: [A.forwardDrop],
  "shared-forward": [A.forwardShared],
  physical: [A.transmitPhysical, A.transmitLocal, A.transmitNoLink],
  "external-session": [A.transmitSession],
  push: [],
  deliver: [A.receiveDeliver],
  "external-link": [A.receivePop],
} as const satisfies Record<RoleAction<TableRole>, readonly string[]>;

/** The actions a `role` table of member m may name, in the program's order: only a shared member hands over. */
function tableActions(role: TableRole, m: DeviceMember): string[] {
  const shared = m.partner !== undefined;
  const held = ROLE_ACTIONS[role] as readonly RoleAction<TableRole>[];
  const named = new Set<string>(
    held.filter((a) => shared || (a !== "shared-acquire" && a !== "shared-forward")).flatMap((a) => P4_ACTIONS[a]),
  );
  const push = held.includes("push") ? [pushAction(m.design.name)] : [];
  return [...Object.values(A).filter((a) => named.has(a)), ...push];
}

/** The writable fields of a design: the parameters of its push action. */
export function pushParams(design: DesignDef): ActionParam[] {
  return design.fields.filter((f) => f.readOnly !== true).map((f) => ({ name: p4Ident(f.name), bits: f.bits }));
}

function deviceActions(members: readonly DeviceMember[], designs: readonly DesignDef[]): DeviceAction[] {
  const member = { name: "member", bits: MEMBER_BITS };
  const inLink = { name: "in_link", bits: LINK_BITS };
  const actions: DeviceAction[] = [
    { name: A.acquireForward, params: [] },
    { name: A.acquireReceive, params: [] },
    { name: A.acquireBoth, params: [] },
    { name: A.acquireShared, params: [member] },
    { name: A.forwardOut, params: [{ name: "out_link", bits: LINK_BITS }] },
    { name: A.forwardReplicate, params: [{ name: "group", bits: GROUP_BITS }] },
    { name: A.forwardDrop, params: [] },
    { name: A.forwardShared, params: [member] },
    { name: A.transmitPhysical, params: [{ name: "port", bits: PORT_BITS }] },
    { name: A.transmitLocal, params: [member, inLink] },
    { name: A.transmitSession, params: [member, { name: "session", bits: SESSION_BITS }] },
    { name: A.transmitNoLink, params: [] },
    { name: A.receiveDeliver, params: [] },
    { name: A.receivePop, params: [member, inLink] },
    ...designs
      .filter((d) => members.some((m) => m.design === d && m.member.tables.send !== undefined))
      .map((d) => ({ name: pushAction(d.name), params: pushParams(d) })),
    ...TABLE_ROLES.map((role) => ({ name: missAction(role), params: [] })),
  ];
  // Only what some table names: a device without subduction has no shared actions.
  const named = new Set(
    members.flatMap((m) =>
      TABLE_ROLES.filter((r) => m.member.tables[r] !== undefined).flatMap((r) => [
        ...tableActions(r, m),
        missAction(r),
      ]),
    ),
  );
  return actions.filter((a) => named.has(a.name));
}

function rowCall(
  role: TableRole,
  m: DeviceMember,
  r: CompiledRow,
  group: (outLinks: readonly number[]) => number,
  numberOf: (member: number) => number,
  targetOf: (member: number, out: number) => Target,
  file: string,
  at: string,
): ActionCall {
  const a = r.action;
  const call = (action: string, ...args: (number | bigint)[]): ActionCall => ({
    action,
    args: args.map((x) => BigInt(x)),
  });
  switch (a.name) {
    case "forward":
      return call(A.acquireForward);
    case "receive":
      return call(A.acquireReceive);
    case "both":
      return call(A.acquireBoth);
    case "shared-acquire":
      return call(A.acquireShared, numberOf(a.arg ?? -1));
    case "out": {
      if (r.ports.length === 0) return call(A.forwardDrop);
      if (r.ports.length === 1) return call(A.forwardOut, r.ports[0] ?? 0);
      return call(A.forwardReplicate, group(r.ports));
    }
    case "drop":
      return call(A.forwardDrop);
    case "shared-forward":
      return call(A.forwardShared, numberOf(a.arg ?? -1));
    case "physical": {
      const t = targetOf(m.member.index, outOf(r));
      switch (t.kind) {
        case "port":
          return call(A.transmitPhysical, t.port);
        case "local":
          return call(A.transmitLocal, t.member, t.inLink);
        case "anycast":
          return call(A.transmitPhysical, t.ports[0] ?? 0);
        case "none":
          return call(A.transmitNoLink);
      }
      break;
    }
    case "external-session":
      return call(A.transmitSession, numberOf(a.arg ?? -1), a.arg2 ?? 0);
    case "push":
      return { action: pushAction(m.design.name), args: pushArgs(m.design, a.data ?? new Uint8Array(0)) };
    case "deliver":
      return call(A.receiveDeliver);
    case "external-link":
      return call(A.receivePop, numberOf(a.arg ?? -1), a.arg2 ?? 0);
    case "none":
      break;
  }
  throw new InputError(file, at, `a ${role} row whose action is ${a.name} has no P4 action`, "");
}

/** A send row's header (a key vector of the design) as the push action's arguments. */
function pushArgs(design: DesignDef, vector: Uint8Array): bigint[] {
  const layout = keyLayout(design);
  return layout.slots
    .filter((s) => s.field !== IN_LINK_FIELD && s.field.readOnly !== true)
    .map((s) => {
      let v = 0n;
      for (let i = 0; i < s.len; i++) v = (v << 8n) | BigInt(vector[s.offset + i] ?? 0);
      return v;
    });
}

/** In-link values that are not link identifiers, as the program names them. */
export const SPECIAL_IN_LINKS: readonly { readonly name: string; readonly value: number }[] = [
  { name: "IN_SELF", value: PORT_SELF },
  { name: "IN_SHARED", value: PORT_SHARED },
];
