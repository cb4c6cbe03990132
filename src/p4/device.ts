// One P4 device per machine: what of a compiled description runs on it, in the
// terms every P4 writer shares — member numbers, P4 ports, tables with their
// keys and sizes, each row's action call, multicast groups (replication) and
// action selectors (anycast). The program, P4Info, entries and CLI commands are
// all written from a Device, and the importer reads entries back through one.
//
// The device's shape is in ./device-types.ts, its ports in ./port-map.ts (how
// links become P4 ports), its tables' keys and actions in ./row-actions.ts.

import { InputError } from "../errors.js";
import type { CompiledSpec, CompiledTable } from "../control/compiled.js";
import { LINK_SELF, LINK_SHARED, TABLE_ROLES, type TableRole } from "../wasm/abi.js";
import {
  type ActionCall,
  type Device,
  type DeviceEntry,
  type DeviceMember,
  type DeviceSelector,
  type DeviceTable,
  MAX_MEMBERS,
  type MulticastGroup,
  RECIRC_PORT,
  type SelectorGroup,
  type Target,
} from "./device-types.js";
import { ACTION_NAMES as A, missAction, p4Ident } from "./names.js";
import { outOf, portMap, transmitRow } from "./port-map.js";
import { deviceActions, rowCall, tableActions, tableKeys } from "./row-actions.js";

export * from "./device-types.js";
export { isPhysical, outOf } from "./port-map.js";
export { pushParams } from "./row-actions.js";

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
  const numberOf = (memberIndex: number, what: string): number => {
    const m = byIndex.get(memberIndex);
    if (m === undefined) throw new Error(`${what}: member ${memberIndex} is not on machine ${machine}`);
    return m.number;
  };
  const { ports, ingress, targets } = portMap(
    compiled,
    machineIndex,
    (i) => byIndex.has(i),
    (i) => numberOf(i, "port map"),
  );
  const targetOf = (member: number, out: number): Target => targets.get(`${member}:${out}`) ?? { kind: "none" };
  const multicast = new MulticastGroups(targetOf);
  const tables = members.flatMap((m) =>
    TABLE_ROLES.flatMap((role) => {
      const t = m.member.tables[role];
      return t === undefined ? [] : [deviceTable(m, role, t, { file, targetOf, multicast, numberOf })];
    }),
  );
  const designs = [...new Set(members.map((m) => m.design))].sort((a, b) => a.id - b.id);
  return {
    machine,
    index: machineIndex,
    deviceId: machineIndex + 1,
    members,
    ports,
    tables,
    actions: deviceActions(members, designs),
    multicast: multicast.groups,
    cloneBoth: tables.some((t) => t.role === "acquire" && t.table.rows.some((r) => r.action.name === "both")),
    designs,
    ingress,
    targetOf,
  };
}

/** What a device's tables are built with: where transmit rows send, its multicast groups, its members' numbers. */
interface TableContext {
  readonly file: string;
  readonly targetOf: (member: number, out: number) => Target;
  readonly multicast: MulticastGroups;
  readonly numberOf: (memberIndex: number, what: string) => number;
}

/** A device's multicast groups, made as replicating rows ask for them: one per member and list of out-links. */
class MulticastGroups {
  readonly groups: MulticastGroup[] = [];
  readonly #targetOf: (member: number, out: number) => Target;

  constructor(targetOf: (member: number, out: number) => Target) {
    this.#targetOf = targetOf;
  }

  /** The group of member m that copies to `outLinks`, made if it is new. */
  groupFor(m: DeviceMember, outLinks: readonly number[]): number {
    const found = this.groups.find((g) => g.member === m && g.outLinks.join(",") === outLinks.join(","));
    if (found !== undefined) return found.id;
    const transmit = m.member.tables.transmit;
    const replicas = outLinks.map((o) => {
      const physical = transmitRow(transmit, o)?.action.name === "physical";
      const t = this.#targetOf(m.member.index, o);
      // A copy that needs the transmit table again (a session, a local hand-off, an anycast choice) takes another pass.
      return { port: physical && t.kind === "port" ? t.port : RECIRC_PORT, instance: o };
    });
    const id = this.groups.length + 1;
    this.groups.push({ id, member: m, outLinks: [...outLinks], replicas });
    return id;
  }
}

/** Member m's `role` table on the device: its keys, actions and entries, and an action selector when a transmit row
 * goes to an anycast link. */
function deviceTable(m: DeviceMember, role: TableRole, t: CompiledTable, ctx: TableContext): DeviceTable {
  const { file, targetOf } = ctx;
  const at = t.spec?.at.path ?? `networks.${m.network.name}.tables.${m.member.key}.${role}`;
  const keys = tableKeys(m, t);
  const entries: DeviceEntry[] = [];
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
    const group = (o: readonly number[]): number => ctx.multicast.groupFor(m, o);
    const call = rowCall(role, m, r, group, (i) => ctx.numberOf(i, `${at}: hand-off`), targetOf, file, at);
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
  const selector = groups.length === 0 ? undefined : selectorOf(m, t, profile, groups);
  return {
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
  };
}

/** The action selector of member m's transmit table: its profile's members and the anycast links' groups. */
function selectorOf(
  m: DeviceMember,
  t: CompiledTable,
  profile: ActionCall[],
  groups: readonly SelectorGroup[],
): DeviceSelector {
  return {
    name: `${m.ident}_transmit_selector`,
    members: profile,
    groups,
    size: Math.max(profile.length, t.capacity),
    maxGroupSize: Math.max(...groups.map((g) => g.members.length)),
    flowKeys: m.design.fields.filter((f) => f.flow === true).map((f) => `meta.${m.design.name}.${p4Ident(f.name)}`),
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

/** In-link values that are not link identifiers, as the program names them. */
export const SPECIAL_IN_LINKS: readonly { readonly name: string; readonly value: number }[] = [
  { name: "IN_SELF", value: LINK_SELF },
  { name: "IN_SHARED", value: LINK_SHARED },
];
