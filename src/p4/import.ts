// Reading an export back: a device's P4Info and WriteRequest (protobuf JSON
// mapping) turned into strata table rows — each TableEntry's field matches
// into value/mask/lo/hi key vectors and a priority, each action (and its
// multicast group or action-selector group) into the EntryAction the data
// plane runs. The topology (members, links, which member is where) comes from
// the description, as a switch's program does; only the rows come from the
// entries. Installing the result replays exactly as the description does:
// test/p4/round-trip.test.ts runs every example both ways.

import type { CompiledRow, CompiledSpec, CompiledTable } from "../control/compiled.js";
import type { EntryAction, EntryMatch } from "../wasm/tables.js";
import type { Encodable, p4 } from "../p4runtime/messages.js";
import { IN_LINK_FIELD, keyLayout } from "../wire/designs.js";
import {
  canonical,
  fromBase64,
  ones,
  orBytes,
  prefixLength,
  readBig,
  setHighBits,
  setLowBits,
  valueOf,
  writeBig,
} from "./bytes.js";
import { type Device, type DeviceKey, type DeviceTable, device } from "./device.js";
import { ACTION_NAMES as A, pushAction } from "./names.js";

/**
 * A bytestring as the importer takes it: base64 text (the protobuf JSON mapping, entries.json)
 * or the bytes themselves (a decoded message, as the P4Runtime server receives it).
 */
export type Bytestring = Encodable["bytes"];

/** A bytestring's value as an unsigned number. */
export const bytestringValue = (s: Bytestring | undefined): bigint =>
  s === undefined ? 0n : valueOf(typeof s === "string" ? fromBase64(s) : s);

type Action = p4.v1.Action<Encodable>;
type FieldMatch = p4.v1.FieldMatch<Encodable>;

/**
 * A device's export as the importer reads it: its P4Info and WriteRequest in the protobuf JSON
 * mapping (p4info.json, entries.json: already checked against the definitions), which reads as
 * the generated types' encodable form — 64-bit integers as strings, bytes as base64, enums by name.
 */
export interface DeviceExport {
  readonly machine: string;
  readonly p4info: p4.config.v1.P4Info<Encodable>;
  readonly entries: p4.v1.WriteRequest<Encodable>;
}

/** The description's tables with their rows replaced by those the exports hold. */
export function importEntries(compiled: CompiledSpec, exports: readonly DeviceExport[]): CompiledSpec {
  const rows = new Map<number, CompiledRow[]>();
  for (const ex of exports) {
    const index = compiled.machines.indexOf(ex.machine);
    if (index < 0) throw new Error(`the description has no machine ${ex.machine}`);
    for (const [tableId, r] of importDevice(compiled, device(compiled, index), ex)) rows.set(tableId, r);
  }
  const tables = compiled.tables.map((t): CompiledTable => ({ ...t, rows: rows.get(t.id) ?? [] }));
  const byId = new Map(tables.map((t) => [t.id, t]));
  const members = compiled.members.map((m) => ({
    ...m,
    tables: Object.fromEntries(
      Object.entries(m.tables).map(([role, t]) => [role, byId.get(t.id) ?? t]),
    ) as typeof m.tables,
  }));
  return { ...compiled, tables, members };
}

function importDevice(compiled: CompiledSpec, dev: Device, ex: DeviceExport): Map<number, CompiledRow[]> {
  // The JSON mapping leaves out a field at its default: 0, "" and [] are read where a field is absent.
  const alias = (p: p4.config.v1.Preamble<Encodable> | undefined): string =>
    p?.alias ?? (p?.name ?? "").slice((p?.name ?? "").lastIndexOf(".") + 1);
  const tableNames = new Map(
    (ex.p4info.tables ?? []).map((t) => [
      t.preamble?.id ?? 0,
      {
        name: alias(t.preamble),
        profile: t.implementationId ?? 0,
        fields: new Map((t.matchFields ?? []).map((f) => [f.id ?? 0, f.name ?? ""])),
      },
    ]),
  );
  const actionNames = new Map(
    (ex.p4info.actions ?? []).map((a) => [
      a.preamble?.id ?? 0,
      { name: alias(a.preamble), params: (a.params ?? []).map((p) => p.id ?? 0) },
    ]),
  );
  // INSERTs, and the MODIFY that sets a keyless table's default action.
  const entities = (ex.entries.updates ?? [])
    .filter((u) => u.type === "INSERT" || u.type === "MODIFY")
    .flatMap((u) => (u.entity === undefined ? [] : [u.entity]));
  const groups = new Map<number, number[]>();
  const profileMembers = new Map<string, Action>();
  for (const e of entities) {
    const g = e.packetReplicationEngineEntry?.multicastGroupEntry;
    if (g !== undefined)
      groups.set(
        g.multicastGroupId ?? 0,
        (g.replicas ?? []).map((r) => r.instance ?? 0),
      );
    const pm = e.actionProfileMember;
    if (pm?.action !== undefined) profileMembers.set(`${pm.actionProfileId ?? 0}:${pm.memberId ?? 0}`, pm.action);
  }
  const memberIndex = (number: bigint): number => {
    const m = dev.members.find((x) => BigInt(x.number) === number);
    if (m === undefined) throw new Error(`${dev.machine}: no member ${number}`);
    return m.member.index;
  };

  const out = new Map<number, CompiledRow[]>();
  for (const e of entities) {
    const te = e.tableEntry;
    if (te === undefined) continue;
    const named = tableNames.get(te.tableId ?? 0);
    const t = dev.tables.find((x) => x.name === named?.name);
    if (named === undefined || t === undefined)
      throw new Error(`${dev.machine}: entry for unknown table ${te.tableId ?? 0}`);
    const match = importMatch(t, te.match ?? [], named.fields, te.priority ?? 0);
    let call: Action | undefined = te.action?.action;
    const memberId = te.action?.actionProfileMemberId;
    if (te.action?.actionProfileGroupId !== undefined)
      call = undefined; // an anycast group: physical, the link picks the receiver
    else if (memberId !== undefined) {
      call = profileMembers.get(`${named.profile}:${memberId}`);
      if (call === undefined)
        throw new Error(`${dev.machine}: ${t.name} names action profile member ${memberId}, which is not written`);
    }
    const action =
      call === undefined
        ? ({ name: "physical" } as EntryAction)
        : importAction(t, call, actionNames, groups, memberIndex);
    const sends = action.name === "out" ? outLinks(action) : [];
    const rows = out.get(t.table.id) ?? [];
    rows.push({
      row: rows.length,
      match,
      action,
      outLinks: sends,
      at: null,
      text: `imported ${t.name} entry ${rows.length}`,
    });
    out.set(t.table.id, rows);
  }
  return out;
}

export function outLinks(a: EntryAction): number[] {
  const data = a.data ?? new Uint8Array(0);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  return Array.from({ length: a.count ?? 0 }, (_, i) => view.getUint16(i * 2, true));
}

/** A table entry's field matches (by field id, names from the P4Info) as the key vectors of a row. */
export function importMatch(
  t: DeviceTable,
  fields: readonly FieldMatch[],
  names: ReadonlyMap<number, string>,
  priority: number,
): EntryMatch {
  const len = t.table.keyLen;
  const value = new Uint8Array(len);
  const mask = new Uint8Array(len);
  // Bounds only for a range table (a server translates every entry it takes: no bytes to spare).
  const range = t.table.kind === "range";
  const lo = range ? new Uint8Array(len) : undefined;
  const hi = range ? new Uint8Array(len) : undefined;
  const given = new Map(fields.map((f) => [names.get(f.fieldId ?? 0), f]));
  for (const k of t.keys) {
    const f = given.get(k.name);
    const { offset, len: bytes } = k.field;
    const width = bytes * 8;
    const put = (into: Uint8Array, s: Bytestring | undefined): void => {
      if (s !== undefined) orBytes(into, offset, bytes, typeof s === "string" ? fromBase64(s) : s);
    };
    // Key bytes' bits above the field are always 0 in keys; masks of matched fields cover them, as the compiler writes
    // them.
    const pad = width - k.bits;
    switch (k.kind) {
      case "exact":
        put(value, f?.exact?.value);
        setHighBits(mask, offset, bytes, width);
        break;
      case "optional":
        if (f?.optional !== undefined) {
          put(value, f.optional.value);
          setHighBits(mask, offset, bytes, width);
        }
        break;
      case "ternary":
        if (f?.ternary !== undefined) {
          put(value, f.ternary.value);
          setHighBits(mask, offset, bytes, pad);
          put(mask, f.ternary.mask);
        }
        break;
      case "lpm":
        if (f?.lpm !== undefined) {
          put(value, f.lpm.value);
          setHighBits(mask, offset, bytes, pad + (f.lpm.prefixLen ?? 0));
        }
        break;
      case "range":
        if (lo === undefined || hi === undefined)
          throw new Error(`${t.name}: a range field in a ${t.table.kind} table`);
        if (f?.range !== undefined) {
          put(lo, f.range.low);
          put(hi, f.range.high);
        } else setLowBits(hi, offset, bytes, k.bits);
        break;
    }
  }
  return lo !== undefined && hi !== undefined ? { value, mask, lo, hi, priority } : { value, mask, priority };
}

/**
 * A row's match as P4Runtime's field matches, the inverse of importMatch (§9.1.1): canonical
 * bytestrings, each key's field id its index + 1 (as the P4Info numbers them), a don't-care
 * field left out (ternary mask 0, optional absent, prefix length 0, a range over every value).
 */
export function exportMatch(t: DeviceTable, m: EntryMatch): p4.v1.FieldMatch[] {
  const out: p4.v1.FieldMatch[] = [];
  for (let i = 0; i < t.keys.length; i++) {
    const f = exportField(t.keys[i] as DeviceKey, m, i + 1);
    if (f !== undefined) out.push(f);
  }
  return out;
}

const bytes = (v: bigint): Buffer => Buffer.from(canonical(v));

/** One key of a row's match as P4Runtime matches it; undefined for "don't care". */
function exportField(k: DeviceKey, m: EntryMatch, fieldId: number): p4.v1.FieldMatch | undefined {
  const at = (b: Uint8Array | undefined): bigint =>
    b === undefined ? 0n : readBig(b, k.field.offset, k.field.len) & ones(k.bits);
  switch (k.kind) {
    case "exact":
      return { fieldId, fieldMatchType: "exact", exact: { value: bytes(at(m.value)) } };
    case "optional":
      return at(m.mask) === 0n
        ? undefined
        : { fieldId, fieldMatchType: "optional", optional: { value: bytes(at(m.value)) } };
    case "ternary": {
      const mask = at(m.mask);
      return mask === 0n
        ? undefined
        : { fieldId, fieldMatchType: "ternary", ternary: { value: bytes(at(m.value) & mask), mask: bytes(mask) } };
    }
    case "lpm": {
      const mask = at(m.mask);
      const len = prefixLength(mask, k.bits);
      if (len < 0) throw new Error(`${k.name}: mask ${mask.toString(16)} of an LPM field is not a prefix`);
      return len === 0
        ? undefined
        : { fieldId, fieldMatchType: "lpm", lpm: { value: bytes(at(m.value) & mask), prefixLen: len } };
    }
    case "range": {
      const lo = at(m.lo);
      const hi = at(m.hi);
      return lo === 0n && hi === ones(k.bits)
        ? undefined
        : { fieldId, fieldMatchType: "range", range: { low: bytes(lo), high: bytes(hi) } };
    }
  }
}

/** An action call (with its P4Info parameters) as the data plane's action; `groups`: multicast group → out-links. */
export function importAction(
  t: DeviceTable,
  json: Action,
  actions: ReadonlyMap<number, { name: string; params: readonly number[] }>,
  groups: { get(id: number): readonly number[] | undefined },
  memberIndex: (number: bigint) => number,
): EntryAction {
  const a = actions.get(json.actionId ?? 0);
  if (a === undefined) throw new Error(`${t.name}: unknown action ${json.actionId ?? 0}`);
  const byId = new Map((json.params ?? []).map((p) => [p.paramId ?? 0, bytestringValue(p.value)]));
  const args = a.params.map((id) => byId.get(id) ?? 0n);
  const arg = (i: number): bigint => args[i] ?? 0n;
  const out = (ports: readonly number[]): EntryAction => {
    const data = new Uint8Array(ports.length * 2);
    const view = new DataView(data.buffer);
    ports.forEach((p, i) => view.setUint16(i * 2, p, true));
    return { name: "out", count: ports.length, arg: ports[0] ?? 0, data };
  };
  switch (a.name) {
    case A.acquireForward:
      return { name: "forward" };
    case A.acquireReceive:
      return { name: "receive" };
    case A.acquireBoth:
      return { name: "both" };
    case A.acquireShared:
      return { name: "shared-acquire", arg: memberIndex(arg(0)) };
    case A.forwardOut:
      return out([Number(arg(0))]);
    case A.forwardReplicate: {
      const ports = groups.get(Number(arg(0)));
      if (ports === undefined) throw new Error(`${t.name}: no multicast group ${arg(0)}`);
      return out(ports);
    }
    case A.forwardDrop:
      return { name: "drop" };
    case A.forwardShared:
      return { name: "shared-forward", arg: memberIndex(arg(0)) };
    case A.transmitPhysical:
    case A.transmitLocal:
    case A.transmitNoLink:
      return { name: "physical" };
    case A.transmitSession:
      return { name: "external-session", arg: memberIndex(arg(0)), arg2: Number(arg(1)) };
    case A.receiveDeliver:
      return { name: "deliver" };
    case A.receivePop:
      return { name: "external-link", arg: memberIndex(arg(0)), arg2: Number(arg(1)) };
  }
  if (a.name === pushAction(t.member.design.name)) return { name: "push", ...pushVector(t.member.design, args) };
  throw new Error(`${t.name}: action ${a.name} is not one strata exports`);
}

/** A push action's arguments back into the key vector of the design that send rows carry (arg: the design, as
 * compile.ts writes it, so that the data plane makes the row's header template). */
function pushVector(
  design: DeviceTable["member"]["design"],
  args: readonly bigint[],
): { count: number; arg: number; data: Uint8Array } {
  const layout = keyLayout(design);
  const vector = new Uint8Array(layout.len);
  layout.slots
    .filter((s) => s.field !== IN_LINK_FIELD && s.field.readOnly !== true)
    .forEach((s, i) => writeBig(vector, s.offset, s.len, args[i] ?? 0n));
  return { count: vector.length, arg: design.id, data: vector };
}
