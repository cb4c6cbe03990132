// The shape of a P4 device (./device.ts builds one per machine): its members, ports, tables with their keys and
// entries, actions, multicast groups and action selectors, in the terms every P4 writer shares.

import type { CompiledMember, CompiledNetwork, CompiledRow, CompiledTable } from "../control/compiled.js";
import type { MatchKind, TableRole } from "../wasm/abi.js";
import type { KeyField } from "../wasm/tables.js";
import type { DesignDef } from "../wire/designs.js";

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
  /** Where member `member`'s transmit row for out-link `out` sends (a port, a local member, an anycast group, none). */
  readonly targetOf: (member: number, out: number) => Target;
}

/** Where a physical transmit row of a member sends. */
export type Target =
  | { readonly kind: "port"; readonly port: number }
  | { readonly kind: "local"; readonly member: number; readonly inLink: number }
  | { readonly kind: "anycast"; readonly ports: readonly number[] }
  | { readonly kind: "none" };
