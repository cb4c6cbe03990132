// A device's P4Info indexed by id (./device-state.ts): its tables with the device's tables they
// are, its actions, action profiles and packet-out header, as the write checks and reads ask.

import type { Device } from "../p4/device.js";
import {
  type InfoAction,
  type InfoProfile,
  type InfoTable,
  invalid,
  num,
  type P4Info,
  preambleOf,
} from "./device-entities.js";

export interface P4InfoIndex {
  readonly tables: Map<number, InfoTable>;
  readonly actions: ReadonlyMap<number, InfoAction>;
  /** The actions as the importer takes them: name and parameter ids. */
  readonly calls: ReadonlyMap<number, { name: string; params: readonly number[] }>;
  readonly profiles: ReadonlyMap<number, InfoProfile>;
  /** The P4Info's packet_out header fields, by metadata id. */
  readonly packetOut: ReadonlyMap<number, { readonly name: string; readonly bits: number }>;
}

export function indexP4Info(pi: P4Info, dev: Device): P4InfoIndex {
  const actions = new Map<number, InfoAction>();
  const calls = new Map<number, { name: string; params: readonly number[] }>();
  for (const a of pi.actions ?? []) {
    const pre = preambleOf(a, "action");
    const params = new Map((a.params ?? []).map((p) => [num(p.id), { name: String(p.name), bits: num(p.bitwidth) }]));
    actions.set(pre.id, { id: pre.id, name: pre.alias, params });
    calls.set(pre.id, { name: pre.alias, params: [...params.keys()] });
  }
  const counted = new Set((pi.directCounters ?? []).map((c) => num(c.directTableId)));
  const tables = new Map<number, InfoTable>();
  for (const t of pi.tables ?? []) tables.set(num(t.preamble?.id), infoTable(t, dev, actions, counted));
  const profiles = new Map<number, InfoProfile>();
  for (const p of pi.actionProfiles ?? []) {
    const pre = preambleOf(p, "action profile");
    profiles.set(pre.id, {
      id: pre.id,
      tables: [...(p.tableIds ?? [])],
      size: num(p.size),
      maxGroupSize: num(p.maxGroupSize),
    });
  }
  const header = (pi.controllerPacketMetadata ?? []).find((h) => h.preamble?.name === "packet_out");
  const packetOut = new Map(
    (header?.metadata ?? []).map((m) => [num(m.id), { name: String(m.name), bits: num(m.bitwidth) }]),
  );
  return { tables, actions, calls, profiles, packetOut };
}

function infoTable(
  t: NonNullable<P4Info["tables"]>[number],
  device: Device,
  actions: ReadonlyMap<number, InfoAction>,
  counted: ReadonlySet<number>,
): InfoTable {
  const pre = preambleOf(t, "table");
  const dev = device.tables.find((x) => x.name === pre.alias);
  if (dev === undefined) throw new Error(`P4Info table ${pre.name} is not on machine ${device.machine}`);
  const refs = t.actionRefs ?? [];
  const fields = new Map(
    (t.matchFields ?? []).map((f) => [
      num(f.id),
      {
        id: num(f.id),
        name: String(f.name),
        bits: num(f.bitwidth),
        matchType: String(f.matchType),
        kind: String(f.matchType).toLowerCase(),
      },
    ]),
  );
  const initialDefault = [...actions.values()].find((a) => a.name === dev.miss)?.id;
  if (initialDefault === undefined) throw new Error(`P4Info has no action ${dev.miss} for table ${pre.name}`);
  return {
    id: pre.id,
    name: pre.alias,
    fields,
    fieldNames: new Map([...fields.values()].map((f) => [f.id, f.name])),
    actions: new Set(refs.map((r) => num(r.id))),
    entryActions: new Set(refs.filter((r) => r.scope !== "DEFAULT_ONLY").map((r) => num(r.id))),
    defaultActions: new Set(refs.filter((r) => r.scope !== "TABLE_ONLY").map((r) => num(r.id))),
    constDefault: t.constDefaultActionId !== undefined,
    initialDefault,
    profile: num(t.implementationId),
    size: num(t.size),
    dev,
    priority: [...fields.values()].some(
      (f) => f.matchType === "TERNARY" || f.matchType === "RANGE" || f.matchType === "OPTIONAL",
    ),
    hasCounter: counted.has(pre.id),
  };
}

/** The table with P4Info id `id`, or INVALID_ARGUMENT. */
export function tableOf(index: P4InfoIndex, id: number, deviceId: number): InfoTable {
  const t = index.tables.get(id);
  if (t === undefined) return invalid(`no table with id ${id} on device ${deviceId}`);
  return t;
}
