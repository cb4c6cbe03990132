// The same entries as simple_switch_CLI commands (bmv2's runtime_CLI), for a
// switch started with the compiled main.p4 and no P4Runtime server: one command
// a line, nothing else. simple_switch_CLI has no comments (a `#` line is
// "Unknown syntax") and runs the previous command again on an empty line (its
// Python cmd loop's emptyline), which re-added the last entry of every block.
//
// Two differences from P4Runtime, from behavioral-model docs/runtime_CLI.md:
// - priority: "one with the smallest numeric priority value will be the
//   winner" — the opposite of P4Runtime, where the larger wins. A row's CLI
//   priority is (largest P4Runtime priority of the table + 1) − its P4Runtime
//   priority, so the first row written is 1.
// - every key field is written, "don't care" too: 0&&&0 (ternary, optional),
//   0/0 (LPM), 0->max (range).
// Handles: multicast nodes and action-profile members and groups get handles
// the switch hands out, from 0 in a fresh switch, in the order created; the
// commands below count on that (multicast group handles are the group ids).

import { formatValue } from "../description/notation.js";
import type { NameKind } from "../wire/designs.js";
import { CLONE_SESSION_BOTH, type Device, type DeviceEntry, type DeviceKey, RECIRC_PORT } from "./device.js";
import { needsPriority } from "./entries.js";
import { ones, prefixLength, readBig } from "./bytes.js";
import { qualified } from "./names.js";

const hex = (v: bigint): string => `0x${v.toString(16)}`;

function kindOf(k: DeviceKey, dev: Device, e: DeviceEntry): NameKind {
  const member = dev.tables.find((t) => t.entries.includes(e))?.member;
  return member?.design.fields.find((f) => f.name === k.name && f.bits === k.bits)?.kind ?? "uint";
}

/** A value as the CLI reads it: MAC, dotted IPv4 and IPv6 notation where the field is an address. */
function value(v: bigint, kind: NameKind): string {
  return kind === "uint" ? String(v) : formatValue(v, kind);
}

function cliMatch(k: DeviceKey, e: DeviceEntry, kind: NameKind): string {
  const m = e.row.match;
  const at = (b: Uint8Array | undefined): bigint =>
    b === undefined ? 0n : readBig(b, k.field.offset, k.field.len) & ones(k.bits);
  switch (k.kind) {
    case "exact":
      return value(at(m.value), kind);
    case "optional":
    case "ternary": {
      const mask = at(m.mask);
      return `${hex(at(m.value) & mask)}&&&${hex(mask)}`;
    }
    case "lpm": {
      const mask = at(m.mask);
      return `${value(at(m.value) & mask, kind)}/${prefixLength(mask, k.bits)}`;
    }
    case "range":
      return `${at(m.lo)}->${at(m.hi)}`;
  }
}

export function runtimeCli(dev: Device): string {
  const lines: string[] = [];
  let node = 0;
  // Replication: one multicast group per set of out-links; a node per copy, its rid the out-link.
  for (const g of dev.multicast) {
    lines.push(`mc_mgrp_create ${g.id}`);
    for (const r of g.replicas) {
      lines.push(`mc_node_create ${r.instance} ${r.port}`, `mc_node_associate ${g.id} ${node}`);
      node++;
    }
  }
  // `both`: the clone that comes back for the receive table.
  if (dev.cloneBoth) lines.push(`mirroring_add ${CLONE_SESSION_BOTH} ${RECIRC_PORT}`);
  for (const t of dev.tables) {
    if (t.selector === undefined) continue;
    const profile = qualified(t.selector.name);
    // Anycast: one profile member per receiver (port), one group per anycast out-link.
    for (const call of t.selector.members)
      lines.push(`act_prof_create_member ${profile} ${qualified(call.action)} ${call.args.join(" ")}`.trimEnd());
    for (const g of t.selector.groups) {
      lines.push(`act_prof_create_group ${profile}`);
      for (const m of g.members) lines.push(`act_prof_add_member_to_group ${profile} ${m - 1} ${g.id - 1}`);
    }
  }
  /** Action arguments; a push's in the notation of its design's fields (MAC, IPv4, …). */
  const args = (e: DeviceEntry): string => {
    const design = dev.tables.find((t) => t.entries.includes(e))?.member.design;
    const fields = design?.fields.filter((f) => f.readOnly !== true) ?? [];
    const push = e.call.action.startsWith("push_");
    return e.call.args.map((v, i) => value(v, push ? (fields[i]?.kind ?? "uint") : "uint")).join(" ");
  };
  for (const t of dev.tables) {
    const priority = needsPriority(t);
    const top = Math.max(0, ...t.entries.map((e) => e.row.match.priority));
    for (const e of t.entries) {
      if (t.keyless) {
        lines.push(`table_set_default ${qualified(t.name)} ${qualified(e.call.action)} ${args(e)}`.trimEnd());
        continue;
      }
      const match = t.keys.map((k) => cliMatch(k, e, kindOf(k, dev, e))).join(" ");
      const prio = priority ? ` ${top + 1 - e.row.match.priority}` : "";
      if (e.profileGroup !== undefined)
        lines.push(`table_indirect_add_with_group ${qualified(t.name)} ${match} => ${e.profileGroup - 1}${prio}`);
      else if (e.profileMember !== undefined)
        lines.push(`table_indirect_add ${qualified(t.name)} ${match} => ${e.profileMember - 1}${prio}`);
      else
        lines.push(
          (
            `table_add ${qualified(t.name)} ${qualified(e.call.action)} ${match} => ` +
            `${[args(e), prio.trim()].filter((x) => x !== "").join(" ")}`
          ).trimEnd(),
        );
    }
  }
  return lines.map((l) => `${l}\n`).join("");
}
