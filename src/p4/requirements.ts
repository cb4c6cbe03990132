// What each machine's P4 program needs from a target, for the fit check
// (`strata export p4 --target`, `strata place`): its tables (match kind, key
// width, size, entries), multicast groups (replication) and action-selector
// groups (anycast). Read from the compiled description alone, so it answers
// for any description, even one the export would refuse.

import type { CompiledSpec } from "../control/compiled.js";
import { type MatchKind, TABLE_ROLES, type TableRole } from "../wasm/abi.js";
import { IN_LINK_FIELD } from "../wire/designs.js";
import { machineMembers, outOf } from "./device.js";
import { LINK_BITS, SESSION_BITS } from "./names.js";

export interface TableRequirement {
  /** The P4 table's name ("lanA_r_acquire"). */
  readonly name: string;
  /** The member whose table it is ("lanA.r") and which of its five tables. */
  readonly member: string;
  readonly role: TableRole;
  readonly matchKind: MatchKind;
  /** The key's fields, in the program's order, with their widths and match kinds. */
  readonly fields: readonly { readonly name: string; readonly bits: number; readonly matchKind: MatchKind }[];
  /** Sum of the key fields' widths, in bits. */
  readonly keyBits: number;
  /** The table's declared size (the description's capacity). */
  readonly size: number;
  /** Rows installed now. */
  readonly entries: number;
}

export interface MachineRequirements {
  readonly machine: string;
  readonly tables: readonly TableRequirement[];
  readonly tableCount: number;
  /** Multicast groups: one per member and distinct list of out-links that a forward row replicates to. */
  readonly multicastGroups: number;
  /** Replicas over all multicast groups. */
  readonly multicastReplicas: number;
  /** Each anycast group's number of members (receivers), one per anycast out-link used by a transmit row. */
  readonly selectorGroupSizes: readonly number[];
}

export function machineRequirements(compiled: CompiledSpec): MachineRequirements[] {
  return compiled.machines.map((machine, index) => {
    const members = machineMembers(compiled, index);
    const tables: TableRequirement[] = [];
    const groups = new Set<string>();
    let replicas = 0;
    const selectorGroupSizes: number[] = [];
    for (const m of members) {
      for (const role of TABLE_ROLES) {
        const t = m.member.tables[role];
        if (t === undefined) continue;
        const fields = t.fields.map((f) => {
          const bits =
            role === "transmit" ? LINK_BITS
            : role === "send" ? SESSION_BITS
            : f.name === IN_LINK_FIELD.name ? IN_LINK_FIELD.bits
            : (m.design.fields.find((d) => d.name === f.name)?.bits ?? f.len * 8);
          return { name: f.name, bits, matchKind: f.kind };
        });
        tables.push({
          name: `${m.ident}_${role}`,
          member: m.member.qualified,
          role,
          matchKind: t.kind,
          fields,
          keyBits: fields.reduce((sum, f) => sum + f.bits, 0),
          size: t.capacity,
          entries: t.rows.length,
        });
        for (const r of t.rows) {
          if (role === "forward" && r.action.name === "out" && r.ports.length > 1) {
            const key = `${m.member.index}:${r.ports.join(",")}`;
            if (!groups.has(key)) replicas += r.ports.length;
            groups.add(key);
          }
          if (role === "transmit" && r.action.name === "physical") {
            const out = outOf(r);
            const link = compiled.links.find((l) => l.sender === m.member.index && l.senderPort === out && l.mode === "anycast" && l.receivers.length > 1);
            if (link !== undefined) selectorGroupSizes.push(link.receivers.length);
          }
        }
      }
    }
    return { machine, tables, tableCount: tables.length, multicastGroups: groups.size, multicastReplicas: replicas, selectorGroupSizes };
  });
}
