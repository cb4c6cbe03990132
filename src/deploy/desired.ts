// A machine's desired state, as `strata export p4` writes it (src/p4/export.ts): its P4Info, its
// program, a cookie that names the two, and every entity its WriteRequest holds, each with the
// description row (or multicast group, or selector member) it comes from.

import { createHash } from "node:crypto";
import { basename } from "node:path";
import type { CompiledRow, CompiledSpec } from "../control/compiled.js";
import type { Reloaded } from "../control/reload.js";
import { type Device, type DeviceTable, device, devices } from "../p4/device.js";
import type { DeviceEntry } from "../p4/device-types.js";
import { deviceUpdates, tableEntry } from "../p4/entries.js";
import { idOf, p4info, p4infoIds } from "../p4/p4info.js";
import { program } from "../p4/program.js";
import { protoRoot } from "../p4runtime/definitions.js";
import type { p4 } from "../p4runtime/messages.js";
import { type Kind, keyOf, kindOf, valueOf } from "./entities.js";

/** An entity the device should hold. */
export interface DesiredEntity {
  readonly kind: Kind;
  readonly key: string;
  readonly value: string;
  /** How it is written: INSERT, or MODIFY for a keyless table's default entry (§9.1). */
  readonly update: p4.v1.Update;
  /** The table, action selector or replication entry it belongs to, by name ("lanA_r_acquire", "multicast"). */
  readonly where: string;
  /** Where it comes from, in the description's words: "lanA.r acquire row 2: in 1 → forward (net.yaml:14)". */
  readonly origin: string;
}

export interface MachineDesired {
  readonly machine: string;
  /** The export's device id (the machine's place in the description, from 1). */
  readonly deviceId: number;
  readonly p4info: p4.config.v1.P4Info;
  /** The P4Info as the official definitions encode it: what two P4Infos are compared by. */
  readonly p4infoBinary: Uint8Array;
  readonly program: string;
  /** The pipeline's cookie: 64 bits of a hash of the P4Info and the program's code (not its comments), as a decimal
   * string. */
  readonly cookie: string;
  /** In the order the export writes them. */
  readonly entities: readonly DesiredEntity[];
}

/** The binary encoding of a P4Info. */
export function encodeP4Info(info: p4.config.v1.P4Info): Uint8Array {
  const t = protoRoot().lookupType("p4.config.v1.P4Info");
  return t.encode(t.fromObject(info)).finish();
}

/**
 * Every machine's desired state, or only those `only` names; `source` is the description's file (the program names it
 * in a comment).
 */
export function desiredState(compiled: CompiledSpec, source: string, only?: ReadonlySet<string>): MachineDesired[] {
  // The program names its description by file name only, so that the cookie does not change with the directory.
  if (only === undefined) return devices(compiled).map((dev) => machineDesired(dev, basename(source)));
  return compiled.machines.flatMap((m, i) =>
    only.has(m) ? [machineDesired(device(compiled, i), basename(source))] : [],
  );
}

/**
 * The desired state of the machines `only` names after a reload: those of the members it compiled again built anew,
 * every other one the one `before` held (the same object: its rows are the same); all built when the reload was whole
 * or `before` lacks one.
 */
export function desiredAfter(
  before: readonly MachineDesired[],
  reloaded: Reloaded,
  source: string,
  only: ReadonlySet<string>,
): MachineDesired[] {
  const { compiled, members } = reloaded;
  const previous = new Map(before.map((d) => [d.machine, d]));
  const wanted = compiled.machines.filter((m) => only.has(m));
  if (members === undefined || wanted.some((m) => !previous.has(m))) return desiredState(compiled, source, only);
  const touched = new Set([...members].map((i) => compiled.machines[compiled.members[i]?.machine ?? -1]));
  const again = new Set(wanted.filter((m) => touched.has(m)));
  const built = new Map(desiredState(compiled, source, again).map((d) => [d.machine, d]));
  return wanted.map((m) => built.get(m) ?? (previous.get(m) as MachineDesired));
}

/** Whether two desired states are the same: the pipeline's cookie and every entity's key, value and update. */
export function sameDesired(a: MachineDesired, b: MachineDesired): boolean {
  if (a.cookie !== b.cookie || a.entities.length !== b.entities.length) return false;
  return a.entities.every((e, i) => {
    const f = b.entities[i] as DesiredEntity;
    return e.key === f.key && e.value === f.value && (e.update.type ?? "") === (f.update.type ?? "");
  });
}

function machineDesired(dev: Device, source: string): MachineDesired {
  const ids = p4infoIds(dev);
  const info = p4info(dev, ids);
  const p4infoBinary = encodeP4Info(info);
  const text = program(dev, source, ids);
  // Comments left out: they name the description's lines, which move when a row is added above them.
  const code = text.replace(/(^|\s)\/\/.*$/gm, "$1");
  const hash = createHash("sha256").update(p4infoBinary).update(code).digest();
  const cookie = String(hash.readBigUInt64BE(0));
  const entities = [...deviceEntities(dev, ids), ...tableEntities(dev, ids, cookie)];
  return { machine: dev.machine, deviceId: dev.deviceId, p4info: info, p4infoBinary, program: text, cookie, entities };
}

function desired(update: p4.v1.Update, where: string, origin: string): DesiredEntity {
  const entity = update.entity as p4.v1.Entity; // every update the export makes has its entity
  const kind = kindOf(entity);
  if (kind === undefined) throw new Error(`the export wrote an entity of kind ${entity.entity ?? "none"}`);
  return { kind, key: keyOf(entity), value: valueOf(entity), update, where, origin };
}

/** The multicast groups, clone session and action profiles' members and groups, each named for where it comes from. */
function deviceEntities(dev: Device, ids: ReturnType<typeof p4infoIds>): DesiredEntity[] {
  const origins = [
    ...dev.multicast.map(
      (g) => `multicast group ${g.id} of ${g.member.member.qualified} (out-links ${g.outLinks.join(", ")})`,
    ),
    ...(dev.cloneBoth ? ["the clone session of `both` (a copy recirculated)"] : []),
    ...dev.tables.flatMap((t) =>
      t.selector === undefined
        ? []
        : [
            ...t.selector.members.map((call, i) => `${t.selector?.name} member ${i + 1}: ${call.action} (${t.name})`),
            ...t.selector.groups.map((g) => `${t.selector?.name} group ${g.id}: anycast out-link ${g.outLink}`),
          ],
    ),
  ];
  const updates = deviceUpdates(dev, ids);
  if (updates.length !== origins.length) throw new Error("deviceUpdates and the device's entities disagree");
  return updates.map((u, i) => {
    const e = u.entity as p4.v1.Entity;
    const where =
      e.entity === "actionProfileMember" || e.entity === "actionProfileGroup"
        ? ((origins[i] ?? "").split(" ")[0] ?? "")
        : e.entity === "packetReplicationEngineEntry" && e.packetReplicationEngineEntry.type === "cloneSessionEntry"
          ? "clone sessions"
          : "multicast groups";
    return desired(u, where, origins[i] ?? "");
  });
}

/**
 * The entity built from each row, by its record: a row whose record is kept when its table is compiled again (as
 * src/control/reload.ts keeps those that compile as before), in a pipeline with the same cookie (so the same P4Info:
 * the same ids, keys and match kinds), in the same member's table, calling the same action with the same arguments,
 * is the same entity, not built again.
 */
const built = new WeakMap<
  CompiledRow,
  { readonly cookie: string; readonly t: string; readonly entry: DeviceEntry; readonly entity: DesiredEntity }
>();

function sameEntry(a: DeviceEntry, b: DeviceEntry): boolean {
  return (
    a.call.action === b.call.action &&
    a.call.args.length === b.call.args.length &&
    a.call.args.every((x, i) => x === b.call.args[i]) &&
    a.profileMember === b.profileMember &&
    a.profileGroup === b.profileGroup
  );
}

function tableEntity(t: DeviceTable, e: DeviceEntry, ids: ReturnType<typeof p4infoIds>, cookie: string): DesiredEntity {
  const where = `${t.member.member.qualified} ${t.name}`;
  const was = built.get(e.row);
  if (was !== undefined && was.cookie === cookie && was.t === where && sameEntry(was.entry, e)) return was.entity;
  const update: p4.v1.Update = {
    type: t.keyless ? "MODIFY" : "INSERT",
    entity: { entity: "tableEntry", tableEntry: tableEntry(t, e, ids) },
  };
  const entity = desired(update, t.name, rowOrigin(t.member.member.qualified, t.role, e.row));
  built.set(e.row, { cookie, t: where, entry: e, entity });
  return entity;
}

function tableEntities(dev: Device, ids: ReturnType<typeof p4infoIds>, cookie: string): DesiredEntity[] {
  const out: DesiredEntity[] = [];
  for (const t of dev.tables) {
    if (t.keyless && t.entries.length === 0) {
      out.push(missDefault(t, ids));
      continue;
    }
    const seen = new Set<string>();
    for (const e of t.entries) {
      const d = tableEntity(t, e, ids, cookie);
      // A second row with the match of one before it is the same entry (the first is the one a packet meets).
      if (seen.has(d.key)) continue;
      seen.add(d.key);
      out.push(d);
    }
  }
  return out;
}

/**
 * A keyless table with no row: its default entry is the program's (the miss, P4Info's initial_default_action), which
 * the export leaves as a fresh device has it; a device whose default was set otherwise (a row since taken out of the
 * description, or a write behind our back) is modified back to it.
 */
function missDefault(t: DeviceTable, ids: ReturnType<typeof p4infoIds>): DesiredEntity {
  const action = { actionId: idOf(ids.actions, t.miss) };
  const tableEntry = {
    tableId: idOf(ids.tables, t.name),
    action: { type: "action" as const, action },
    isDefaultAction: true,
  };
  const origin = `${t.member.member.qualified} ${t.role}: no row (the table's miss, ${t.miss})`;
  return desired({ type: "MODIFY", entity: { entity: "tableEntry", tableEntry } }, t.name, origin);
}

function rowOrigin(
  member: string,
  role: string,
  row: { readonly row: number; readonly text: string; readonly at: { file: string; line: number } | null },
): string {
  const at = row.at === null ? "" : ` (${row.at.file}${row.at.line > 0 ? `:${row.at.line}` : ""})`;
  const which = row.row < 0 ? "a row the compiler added" : `row ${row.row}`;
  return `${member} ${role} ${which}: ${row.text}${at}`;
}
