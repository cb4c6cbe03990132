// What each machine asks of the switch that runs it: tables (match kind, key
// width, size, entries), multicast groups and action selectors. One machine is
// one P4 device (DESIGN.md §3); the P4 export names its tables with p4TableName,
// and target profiles (./fit.ts) and placement (./place.ts) check these numbers.
//
// Key widths are in bits, from the header-design registry (src/wire/designs.ts):
// the fields a table matches, not the padded bytes of the data plane's key vector.

import type { CompiledSpec, CompiledTable } from "../control/compiled.js";
import type { MatchKind, TableRole } from "../wasm/abi.js";
import { IN_LINK_FIELD } from "../wire/designs.js";

/** Widths of the identifiers transmit and send tables match (src/control/compile.ts). */
export const OUT_LINK_BITS = 16;
export const SESSION_BITS = 32;

export interface KeyFieldRequirement {
  readonly name: string;
  readonly bits: number;
  readonly kind: MatchKind;
}

export interface TableRequirement {
  /** The P4 name, `<network>_<member>_<role>` (unique on the machine: see uniqueNames). */
  readonly name: string;
  readonly network: string;
  readonly member: string;
  readonly role: TableRole;
  readonly kind: MatchKind;
  readonly fields: readonly KeyFieldRequirement[];
  /** Sum of the fields' widths; 0 for a table without a key (its one row is the default action). */
  readonly keyBits: number;
  /** Entries the table must be able to hold: its capacity. */
  readonly size: number;
  /** Entries installed: the rows compiled. */
  readonly entries: number;
}

/** A multicast group: a forward row replicating onto several out-links, or an allcast link. */
export interface MulticastRequirement {
  /** "network.member" that sends. */
  readonly member: string;
  /** The out-link identifiers the group copies to at that member (forward), or the allcast link's one identifier. */
  readonly ports: readonly number[];
  /** Copies one packet makes: out-links of the row, or receivers of the allcast link. */
  readonly replicas: number;
  readonly source: "forward" | "allcast";
  /** The allcast link's qualified name ("network.link"). */
  readonly link?: string;
}

/** An action selector group: an anycast link, whose members are its receivers. */
export interface SelectorRequirement {
  readonly member: string;
  readonly link: string;
  readonly groupSize: number;
}

export interface MachineRequirements {
  readonly machine: string;
  /** "network.member" of every member hosted, in the description's order. */
  readonly members: readonly string[];
  readonly tables: readonly TableRequirement[];
  readonly tableCount: number;
  readonly multicastGroups: readonly MulticastRequirement[];
  readonly actionSelectors: readonly SelectorRequirement[];
}

/** A P4 identifier from strata names: characters other than letters, digits and `_` become `_`. */
export function p4TableName(network: string, member: string, role: TableRole): string {
  return [network, member, role].map((s) => s.replace(/[^A-Za-z0-9_]/g, "_")).join("_");
}

export function machineRequirements(compiled: CompiledSpec): MachineRequirements[] {
  return compiled.machines.map((machine, index) => {
    const members = compiled.members.filter((m) => m.machine === index);
    const hosted = new Set(members.map((m) => m.index));
    const tables = uniqueNames(
      compiled.tables.filter((t) => hosted.has(t.member)).map((t) => tableRequirement(compiled, t)),
    );
    const multicastGroups: MulticastRequirement[] = [];
    for (const m of members) {
      // One group per distinct set of out-links: rows that replicate alike share it.
      const seen = new Set<string>();
      for (const row of m.tables.forward?.rows ?? []) {
        if (row.outLinks.length < 2) continue;
        const ports = [...new Set(row.outLinks)].sort((a, b) => a - b);
        const key = ports.join(",");
        if (seen.has(key)) continue;
        seen.add(key);
        multicastGroups.push({ member: m.qualified, ports, replicas: ports.length, source: "forward" });
      }
    }
    const actionSelectors: SelectorRequirement[] = [];
    for (const l of compiled.links) {
      const sender = compiled.members[l.sender];
      if (sender === undefined || !hosted.has(sender.index)) continue;
      if (l.mode === "allcast") {
        multicastGroups.push({
          member: sender.qualified,
          ports: [l.senderOutLink],
          replicas: l.receivers.length,
          source: "allcast",
          link: l.qualified,
        });
      } else if (l.mode === "anycast") {
        actionSelectors.push({ member: sender.qualified, link: l.qualified, groupSize: l.receivers.length });
      }
    }
    return {
      machine,
      members: members.map((m) => m.qualified),
      tables,
      tableCount: tables.length,
      multicastGroups,
      actionSelectors,
    };
  });
}

/**
 * One P4 program per machine needs distinct table names, but `_` joins names that may hold `_`
 * (network a_b, member c and network a, member b_c) and `-` becomes `_`: a name seen before on the
 * machine gets `_2`, `_3`, … in the order the tables come.
 */
function uniqueNames(tables: TableRequirement[]): TableRequirement[] {
  const seen = new Set<string>();
  return tables.map((t) => {
    let name = t.name;
    for (let n = 2; seen.has(name); n++) name = `${t.name}_${n}`;
    seen.add(name);
    return name === t.name ? t : { ...t, name };
  });
}

function tableRequirement(compiled: CompiledSpec, t: CompiledTable): TableRequirement {
  const member = compiled.members[t.member];
  const network = member === undefined ? undefined : compiled.networks[member.network];
  if (member === undefined || network === undefined) throw new Error(`table ${t.id} names no member`);
  const fields = t.fields.map((f) => ({
    name: f.name,
    bits: fieldBits(t.role, f.name, network.layout.design.fields),
    kind: f.kind,
  }));
  return {
    name: p4TableName(network.name, member.key, t.role),
    network: network.name,
    member: member.key,
    role: t.role,
    kind: t.kind,
    fields,
    keyBits: fields.reduce((sum, f) => sum + f.bits, 0),
    size: t.capacity,
    entries: t.rows.length,
  };
}

function fieldBits(role: TableRole, name: string, designFields: readonly { name: string; bits: number }[]): number {
  if (role === "transmit") return OUT_LINK_BITS;
  if (role === "send") return SESSION_BITS;
  if (name === IN_LINK_FIELD.name) return IN_LINK_FIELD.bits;
  const field = designFields.find((f) => f.name === name);
  if (field === undefined) throw new Error(`no field '${name}' in the design`);
  return field.bits;
}
