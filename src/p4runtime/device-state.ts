// One P4Runtime device: a machine of the description, with the P4Info that
// `strata export p4` writes for it, the entities a controller has written
// (table entries, default entries of keyless tables, multicast groups, clone
// sessions, action-profile members and groups) and the rows they become in
// the data plane's tables.
//
// A Write batch is checked update by update against a copy of the entities, as
// the P4Runtime spec asks (§12: ALREADY_EXISTS on a second INSERT, NOT_FOUND on
// a MODIFY or DELETE of nothing, INVALID_ARGUMENT for an entry the P4Info does
// not allow, RESOURCE_EXHAUSTED past a table's size). The tables the surviving
// updates touch are then translated again into rows (src/p4/import.ts, the
// same mapping that reads an export back) and the difference from what is
// installed goes to the data plane as one all-or-nothing Tables.write, between
// packet batches. So every batch is data-plane atomic: packets see the tables
// before it or after it, never half of it — what DATAPLANE_ATOMIC promises and
// more than CONTINUE_ON_ERROR and ROLLBACK_ON_ERROR need.

import type { CompiledSpec } from "../control/compiled.js";
import { bytestringValue, type FieldMatchJson, importAction, importMatch, type P4InfoJson } from "../p4/import.js";
import { canonical, ones } from "../p4/bytes.js";
import { type Device, type DeviceTable, device } from "../p4/device.js";
import type { EntryAction, EntryMatch, TableLayout, TableWrite, Tables } from "../wasm/tables.js";
import { Code, type UpdateError } from "./proto.js";

/** A decoded message as @grpc/proto-loader hands it over (see LOADER_OPTIONS). */
export type Msg = { readonly [key: string]: unknown };

/** An update refused: its gRPC canonical code and why. */
export class Refusal extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}
const refuse = (code: number, message: string): never => {
  throw new Refusal(code, message);
};
const invalid = (message: string): never => refuse(Code.INVALID_ARGUMENT, message);

// ── The P4Info, indexed ────────────────────────────────────────────────────

interface InfoField {
  readonly id: number;
  readonly name: string;
  readonly bits: number;
  readonly matchType: string;
}
interface InfoTable {
  readonly id: number;
  readonly name: string;
  readonly fields: ReadonlyMap<number, InfoField>;
  /** Actions an entry may name (not @defaultonly). */
  readonly entryActions: ReadonlySet<number>;
  /** Actions the default entry may name. */
  readonly defaultActions: ReadonlySet<number>;
  readonly constDefault: boolean;
  readonly profile: number;
  readonly size: number;
  readonly dev: DeviceTable;
  readonly priority: boolean;
  readonly hasCounter: boolean;
}
interface InfoAction {
  readonly id: number;
  readonly name: string;
  readonly params: ReadonlyMap<number, { readonly name: string; readonly bits: number }>;
}
interface InfoProfile {
  readonly id: number;
  readonly tables: readonly number[];
  readonly size: number;
  readonly maxGroupSize: number;
}

// ── Entities ───────────────────────────────────────────────────────────────

interface Call {
  readonly actionId: number;
  /** Canonical parameter values, by parameter id order. */
  readonly params: readonly { readonly paramId: number; readonly value: Uint8Array }[];
}
type EntryAct = { readonly call: Call } | { readonly member: number } | { readonly group: number };
interface StoredEntry {
  readonly tableId: number;
  /** Canonical field matches, by field id. */
  readonly match: readonly FieldMatchJson[];
  readonly priority: number;
  readonly action: EntryAct;
  readonly isDefault: boolean;
}
interface Replica {
  readonly port: Uint8Array;
  readonly instance: number;
}
interface Entities {
  /** tableId → key → entry, in insertion order. */
  readonly tables: Map<number, Map<string, StoredEntry>>;
  /** Keyless tables' default entries. */
  readonly defaults: Map<number, StoredEntry>;
  readonly multicast: Map<number, readonly Replica[]>;
  readonly clone: Map<number, Msg>;
  /** profileId → memberId → call. */
  readonly members: Map<number, Map<number, Call>>;
  /** profileId → groupId → members (with weights). */
  readonly groups: Map<number, Map<number, readonly { readonly memberId: number; readonly weight: number }[]>>;
}
function emptyEntities(): Entities {
  return { tables: new Map(), defaults: new Map(), multicast: new Map(), clone: new Map(), members: new Map(), groups: new Map() };
}
function cloneEntities(e: Entities): Entities {
  return {
    tables: new Map([...e.tables].map(([k, v]) => [k, new Map(v)])),
    defaults: new Map(e.defaults),
    multicast: new Map(e.multicast),
    clone: new Map(e.clone),
    members: new Map([...e.members].map(([k, v]) => [k, new Map(v)])),
    groups: new Map([...e.groups].map(([k, v]) => [k, new Map(v)])),
  };
}

/** A row installed in the data plane for an entry: where it is, and what it does. */
interface Installed {
  readonly match: EntryMatch;
  readonly action: EntryAction;
  readonly sig: string;
  entry: number;
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");
const bytesOf = (v: unknown): Uint8Array | undefined => (v instanceof Uint8Array ? v : undefined);
const num = (v: unknown): number => (typeof v === "number" ? v : typeof v === "string" && /^\d+$/.test(v) ? Number(v) : 0);

/** An action as one string: two rows run the same action when their strings are equal. */
const actionSig = (a: EntryAction): string => JSON.stringify([a.name, a.count ?? 0, a.arg ?? 0, a.arg2 ?? 0, hex(a.data ?? new Uint8Array(0))]);

/** A row's match as one string: two rows of a table have the same match when their strings are equal (priority counts where the kind has one). */
function matchSig(t: TableLayout, m: EntryMatch): string {
  const prioritised = t.kind === "ternary" || t.kind === "range" || t.kind === "optional";
  const b = (x: Uint8Array | undefined): string => (x === undefined ? "" : hex(x));
  return `${b(m.value)}/${b(m.mask)}/${b(m.lo)}/${b(m.hi)}/${prioritised ? m.priority : 0}`;
}

/** A bytestring that must hold a value of `bits` bits, made canonical. */
function field(v: unknown, bits: number, what: string): Uint8Array {
  const b = bytesOf(v);
  if (b === undefined || b.length === 0) return invalid(`${what}: empty bytestring (0 is one zero byte)`);
  const value = bytestringValue(b);
  if (value > ones(bits)) return invalid(`${what}: value 0x${value.toString(16)} does not fit in ${bits} bits`);
  return canonical(value);
}

export interface DeviceInfo {
  readonly deviceId: number;
  readonly machine: string;
  /** The exported p4info.json, parsed. */
  readonly p4info: P4InfoJson & Msg;
}

export class DeviceState {
  readonly deviceId: number;
  readonly machine: string;
  readonly p4info: P4InfoJson & Msg;
  dev: Device;
  #compiled: CompiledSpec;
  readonly #tables = new Map<number, InfoTable>();
  readonly #actions = new Map<number, InfoAction>();
  readonly #profiles = new Map<number, InfoProfile>();
  readonly #ports: ReadonlySet<number>;
  #entities = emptyEntities();
  /** Rows in the data plane, by strata table id, by entry key. */
  readonly #installed = new Map<number, Map<string, Installed>>();

  constructor(compiled: CompiledSpec, info: DeviceInfo) {
    this.deviceId = info.deviceId;
    this.machine = info.machine;
    this.p4info = info.p4info;
    this.#compiled = compiled;
    this.dev = device(compiled, info.deviceId - 1);
    const alias = (p: { alias?: string; name: string }): string => p.alias ?? p.name.slice(p.name.lastIndexOf(".") + 1);
    const p4 = info.p4info as Msg;
    const counted = new Set(((p4.directCounters ?? []) as Msg[]).map((c) => num(c.directTableId)));
    for (const a of (p4.actions ?? []) as Msg[]) {
      const pre = a.preamble as { id: number; name: string; alias?: string };
      const params = new Map(((a.params ?? []) as Msg[]).map((p) => [num(p.id), { name: String(p.name), bits: num(p.bitwidth) }]));
      this.#actions.set(pre.id, { id: pre.id, name: alias(pre), params });
    }
    for (const t of (p4.tables ?? []) as Msg[]) {
      const pre = t.preamble as { id: number; name: string; alias?: string };
      const dev = this.dev.tables.find((x) => x.name === alias(pre));
      if (dev === undefined) throw new Error(`P4Info table ${pre.name} is not on machine ${this.machine}`);
      const refs = (t.actionRefs ?? []) as Msg[];
      const fields = new Map(((t.matchFields ?? []) as Msg[]).map((f) => [num(f.id), { id: num(f.id), name: String(f.name), bits: num(f.bitwidth), matchType: String(f.matchType) }]));
      this.#tables.set(pre.id, {
        id: pre.id,
        name: alias(pre),
        fields,
        entryActions: new Set(refs.filter((r) => r.scope !== "DEFAULT_ONLY").map((r) => num(r.id))),
        defaultActions: new Set(refs.filter((r) => r.scope !== "TABLE_ONLY").map((r) => num(r.id))),
        constDefault: t.constDefaultActionId !== undefined,
        profile: num(t.implementationId),
        size: num(t.size),
        dev,
        priority: [...fields.values()].some((f) => f.matchType === "TERNARY" || f.matchType === "RANGE" || f.matchType === "OPTIONAL"),
        hasCounter: counted.has(pre.id),
      });
    }
    for (const p of (p4.actionProfiles ?? []) as Msg[]) {
      const pre = p.preamble as { id: number };
      this.#profiles.set(pre.id, { id: pre.id, tables: ((p.tableIds ?? []) as number[]).map(num), size: num(p.size), maxGroupSize: num(p.maxGroupSize) });
    }
    this.#ports = new Set([...this.dev.ports.map((p) => p.port), 254]);
  }

  /** The P4Info table of a strata table, if the device has it. */
  tableIdOf(strataTableId: number): number | undefined {
    return [...this.#tables.values()].find((t) => t.dev.table.id === strataTableId)?.id;
  }

  // ── Write ────────────────────────────────────────────────────────────────

  /**
   * Checks a batch of updates against a copy of the entities; returns the copy with the
   * good ones applied and one error (code 0 = OK) per update.
   */
  stage(updates: readonly Msg[]): { staged: Entities; errors: UpdateError[]; touched: Set<number> } {
    const staged = cloneEntities(this.#entities);
    const touched = new Set<number>();
    const errors = updates.map((u, i): UpdateError => {
      try {
        this.#apply(staged, u, touched);
        return { code: Code.OK, message: "" };
      } catch (e) {
        if (e instanceof Refusal) return { code: e.code, message: `update ${i}: ${e.message}` };
        return { code: Code.INVALID_ARGUMENT, message: `update ${i}: ${e instanceof Error ? e.message : String(e)}` };
      }
    });
    return { staged, errors, touched };
  }

  /**
   * The data-plane writes that take the installed rows of `touched` tables to those of
   * `staged`; commit() records them once the data plane took them.
   */
  plan(staged: Entities, touched: ReadonlySet<number>): { writes: TableWrite[]; commit: (entries: readonly number[]) => void } {
    const deletes: TableWrite[] = [];
    const modifies: TableWrite[] = [];
    const inserts: TableWrite[] = [];
    const after = new Map<number, Map<string, Installed>>();
    const order: { table: number; key: string; write: TableWrite }[] = [];
    for (const id of touched) {
      const t = this.#tables.get(id);
      if (t === undefined) continue;
      const layout = t.dev.table;
      const rows = this.#rows(staged, t);
      const before = this.#installed.get(layout.id) ?? new Map<string, Installed>();
      const next = new Map<string, Installed>();
      for (const [key, row] of rows) {
        const old = before.get(key);
        if (old === undefined) {
          const write: TableWrite = { op: "insert", table: layout, match: row.match, action: row.action };
          inserts.push(write);
          order.push({ table: layout.id, key, write });
          next.set(key, { ...row, entry: -1 });
        } else if (old.sig !== row.sig) {
          const write: TableWrite = { op: "modify", table: layout, match: row.match, action: row.action };
          modifies.push(write);
          order.push({ table: layout.id, key, write });
          next.set(key, { ...row, entry: old.entry });
        } else next.set(key, old);
      }
      for (const [key, old] of before) {
        if (!rows.has(key)) deletes.push({ op: "delete", table: layout, match: old.match });
      }
      after.set(layout.id, next);
    }
    const writes = [...deletes, ...modifies, ...inserts];
    return {
      writes,
      commit: (entries) => {
        const indexOf = new Map(writes.map((w, k) => [w, entries[k] ?? -1]));
        for (const o of order) {
          const row = after.get(o.table)?.get(o.key);
          if (row !== undefined) row.entry = indexOf.get(o.write) ?? row.entry;
        }
        for (const [table, rows] of after) this.#installed.set(table, rows);
        this.#entities = staged;
      },
    };
  }

  /** Every table of the device, for a plan that clears or rebuilds all of them. */
  allTables(): Set<number> {
    return new Set(this.#tables.keys());
  }

  /** No entities at all: what VERIFY_AND_COMMIT leaves. */
  static empty(): Entities {
    return emptyEntities();
  }

  /** The compiled rows of the description as entities: what a device that is not started empty holds. */
  entitiesFromExport(updates: readonly Msg[]): Entities {
    const { staged, errors } = this.stage(updates);
    const bad = errors.find((e) => e.code !== Code.OK);
    if (bad !== undefined) throw new Error(`machine ${this.machine}: the exported entries do not load: ${bad.message}`);
    return staged;
  }

  #apply(s: Entities, u: Msg, touched: Set<number>): void {
    const type = u.type as string | undefined;
    if (type !== "INSERT" && type !== "MODIFY" && type !== "DELETE") return invalid(`update type ${type ?? "UNSPECIFIED"} (INSERT, MODIFY or DELETE)`);
    const entity = u.entity as Msg | undefined;
    const kind = entity?.entity as string | undefined;
    if (entity === undefined || kind === undefined) return invalid("update without an entity");
    switch (kind) {
      case "tableEntry":
        return this.#tableEntry(s, type, entity.tableEntry as Msg, touched);
      case "packetReplicationEngineEntry":
        return this.#pre(s, type, entity.packetReplicationEngineEntry as Msg, touched);
      case "actionProfileMember":
        return this.#profileMember(s, type, entity.actionProfileMember as Msg, touched);
      case "actionProfileGroup":
        return this.#profileGroup(s, type, entity.actionProfileGroup as Msg, touched);
      default:
        return refuse(Code.UNIMPLEMENTED, `${kind} entities are not written by strata's server (table entries, multicast groups, clone sessions, action profile members and groups are)`);
    }
  }

  #call(a: Msg | undefined, allowed: ReadonlySet<number>, where: string): Call {
    if (a === undefined) return invalid(`${where}: no action`);
    const id = num(a.actionId);
    const info = this.#actions.get(id);
    if (info === undefined) return invalid(`${where}: unknown action id ${id}`);
    if (!allowed.has(id)) return invalid(`${where}: action ${info.name} is not one this table's entries may name`);
    const given = new Map<number, Uint8Array>();
    for (const p of (a.params ?? []) as Msg[]) {
      const pid = num(p.paramId);
      const spec = info.params.get(pid);
      if (spec === undefined) return invalid(`${where}: action ${info.name} has no parameter id ${pid}`);
      if (given.has(pid)) return invalid(`${where}: action ${info.name} parameter ${spec.name} given twice`);
      given.set(pid, field(p.value, spec.bits, `${where}: ${info.name}(${spec.name})`));
    }
    for (const [pid, spec] of info.params) if (!given.has(pid)) return invalid(`${where}: action ${info.name} needs parameter ${spec.name}`);
    return { actionId: id, params: [...given].sort(([a1], [b1]) => a1 - b1).map(([paramId, value]) => ({ paramId, value })) };
  }

  #tableEntry(s: Entities, type: string, te: Msg, touched: Set<number>): void {
    const tableId = num(te.tableId);
    const t = this.#tables.get(tableId);
    if (t === undefined) return invalid(`no table with id ${tableId} on device ${this.deviceId}`);
    const where = t.name;
    if (te.isDefaultAction === true) {
      if (type !== "MODIFY") return invalid(`${where}: the default entry is only MODIFYed`);
      if (((te.match ?? []) as unknown[]).length > 0) return invalid(`${where}: the default entry has no match`);
      if (t.constDefault) return refuse(Code.PERMISSION_DENIED, `${where}: its default action is constant`);
      const action = te.action as Msg | undefined;
      if (action === undefined) s.defaults.delete(tableId);
      else {
        if (action.type !== "action") return invalid(`${where}: a default entry names an action, not a profile member or group`);
        const call = this.#call(action.action as Msg, t.defaultActions, where);
        const entry: StoredEntry = { tableId, match: [], priority: 0, action: { call }, isDefault: true };
        if (this.#actions.get(call.actionId)?.name !== t.dev.miss) this.#translate(s, t, entry);
        s.defaults.set(tableId, entry);
      }
      touched.add(tableId);
      return;
    }
    if (t.fields.size === 0) return invalid(`${where} matches no field: it takes no entries; MODIFY its default entry (is_default_action)`);
    const match = this.#match(t, (te.match ?? []) as Msg[]);
    const priority = num(te.priority);
    if (t.priority && priority <= 0) return invalid(`${where}: entries of a table with ternary, range or optional fields need a priority above 0`);
    if (!t.priority && priority !== 0) return invalid(`${where}: entries of a table with only exact and LPM fields take no priority (got ${priority})`);
    const key = `${priority}|${match.map((f) => JSON.stringify(f, (_k, v: unknown) => (v instanceof Uint8Array ? hex(v) : v))).join(",")}`;
    const entries = s.tables.get(tableId) ?? new Map<string, StoredEntry>();
    const exists = entries.has(key);
    if (type === "INSERT" && exists) return refuse(Code.ALREADY_EXISTS, `${where}: an entry with this match and priority exists`);
    if (type !== "INSERT" && !exists) return refuse(Code.NOT_FOUND, `${where}: no entry with this match and priority`);
    if (type === "DELETE") entries.delete(key);
    else {
      if (type === "INSERT" && t.size > 0 && entries.size >= t.size) return refuse(Code.RESOURCE_EXHAUSTED, `${where} holds ${t.size} entries`);
      const entry: StoredEntry = { tableId, match, priority, action: this.#entryAction(s, t, te.action as Msg | undefined), isDefault: false };
      this.#translate(s, t, entry);
      entries.set(key, entry);
    }
    s.tables.set(tableId, entries);
    touched.add(tableId);
  }

  #entryAction(s: Entities, t: InfoTable, a: Msg | undefined): EntryAct {
    if (a === undefined || a.type === undefined) return invalid(`${t.name}: the entry has no action`);
    if (a.type === "action") {
      if (t.profile !== 0) return invalid(`${t.name} is implemented by an action selector: its entries name a profile member or group`);
      return { call: this.#call(a.action as Msg, t.entryActions, t.name) };
    }
    if (t.profile === 0) return invalid(`${t.name} has no action profile: its entries name an action`);
    if (a.type === "actionProfileMemberId") {
      const member = num(a.actionProfileMemberId);
      if (s.members.get(t.profile)?.has(member) !== true) return refuse(Code.NOT_FOUND, `${t.name}: action profile member ${member} is not written`);
      return { member };
    }
    if (a.type === "actionProfileGroupId") {
      const group = num(a.actionProfileGroupId);
      if (s.groups.get(t.profile)?.has(group) !== true) return refuse(Code.NOT_FOUND, `${t.name}: action profile group ${group} is not written`);
      return { group };
    }
    return refuse(Code.UNIMPLEMENTED, `${t.name}: action ${String(a.type)} is not supported`);
  }

  #match(t: InfoTable, given: readonly Msg[]): FieldMatchJson[] {
    const out = new Map<number, FieldMatchJson>();
    for (const m of given) {
      const id = num(m.fieldId);
      const f = t.fields.get(id);
      if (f === undefined) return invalid(`${t.name}: no match field with id ${id}`);
      if (out.has(id)) return invalid(`${t.name}: match field ${f.name} given twice`);
      const kind = m.fieldMatchType as string | undefined;
      const want = f.matchType.toLowerCase();
      if (kind !== want) return invalid(`${t.name}: field ${f.name} is matched ${f.matchType}, not ${kind ?? "with nothing"}`);
      const body = m[kind] as Msg;
      const w = `${t.name}: field ${f.name}`;
      switch (kind) {
        case "exact":
          out.set(id, { fieldId: id, exact: { value: field(body.value, f.bits, w) } });
          break;
        case "optional":
          out.set(id, { fieldId: id, optional: { value: field(body.value, f.bits, w) } });
          break;
        case "ternary": {
          const value = field(body.value, f.bits, w);
          const mask = field(body.mask, f.bits, `${w} mask`);
          const v = bytestringValue(value);
          const k = bytestringValue(mask);
          if (k === 0n) return invalid(`${w}: a ternary mask of 0 matches anything; leave the field out`);
          if ((v & ~k) !== 0n) return invalid(`${w}: value 0x${v.toString(16)} has bits outside mask 0x${k.toString(16)}`);
          out.set(id, { fieldId: id, ternary: { value, mask } });
          break;
        }
        case "lpm": {
          const value = field(body.value, f.bits, w);
          const len = num(body.prefixLen);
          if (len <= 0 || len > f.bits) return invalid(`${w}: prefix length ${len} (1 to ${f.bits}; a prefix of 0 is left out)`);
          const host = ones(f.bits - len);
          if ((bytestringValue(value) & host) !== 0n) return invalid(`${w}: value has bits set beyond its /${len} prefix`);
          out.set(id, { fieldId: id, lpm: { value, prefixLen: len } });
          break;
        }
        case "range": {
          const low = field(body.low, f.bits, `${w} low`);
          const high = field(body.high, f.bits, `${w} high`);
          const lo = bytestringValue(low);
          const hi = bytestringValue(high);
          if (lo > hi) return invalid(`${w}: range low 0x${lo.toString(16)} is above high 0x${hi.toString(16)}`);
          if (lo === 0n && hi === ones(f.bits)) return invalid(`${w}: a range over every value matches anything; leave the field out`);
          out.set(id, { fieldId: id, range: { low, high } });
          break;
        }
      }
    }
    for (const f of t.fields.values()) if (f.matchType === "EXACT" && !out.has(f.id)) return invalid(`${t.name}: exact field ${f.name} is missing`);
    return [...out.values()].sort((a, b) => a.fieldId - b.fieldId);
  }

  #pre(s: Entities, type: string, pre: Msg, touched: Set<number>): void {
    if (pre.type === "multicastGroupEntry") {
      const g = pre.multicastGroupEntry as Msg;
      const id = num(g.multicastGroupId);
      if (id === 0) return invalid("multicast group id 0");
      const exists = s.multicast.has(id);
      if (type === "INSERT" && exists) return refuse(Code.ALREADY_EXISTS, `multicast group ${id} exists`);
      if (type !== "INSERT" && !exists) return refuse(Code.NOT_FOUND, `no multicast group ${id}`);
      if (type === "DELETE") s.multicast.delete(id);
      else s.multicast.set(id, this.#replicas((g.replicas ?? []) as Msg[], `multicast group ${id}`));
      // Every forward row that replicates reads its group's out-links.
      for (const t of this.#tables.values()) if (t.dev.role === "forward") touched.add(t.id);
      return;
    }
    if (pre.type === "cloneSessionEntry") {
      const c = pre.cloneSessionEntry as Msg;
      const id = num(c.sessionId);
      if (id === 0) return invalid("clone session id 0");
      const exists = s.clone.has(id);
      if (type === "INSERT" && exists) return refuse(Code.ALREADY_EXISTS, `clone session ${id} exists`);
      if (type !== "INSERT" && !exists) return refuse(Code.NOT_FOUND, `no clone session ${id}`);
      if (type === "DELETE") s.clone.delete(id);
      else {
        this.#replicas((c.replicas ?? []) as Msg[], `clone session ${id}`);
        s.clone.set(id, c);
      }
      return;
    }
    return invalid("a packet replication engine entry with neither a multicast group nor a clone session");
  }

  #replicas(replicas: readonly Msg[], where: string): Replica[] {
    const seen = new Set<string>();
    return replicas.map((r) => {
      const port = r.port !== undefined ? field(r.port, 32, `${where} replica port`) : canonical(BigInt(num(r.egressPort)));
      const p = Number(bytestringValue(port));
      if (!this.#ports.has(p)) return invalid(`${where}: port ${p} is not a port of device ${this.deviceId} (ports: ${[...this.#ports].join(", ")})`);
      const instance = num(r.instance);
      const key = `${p}:${instance}`;
      if (seen.has(key)) return invalid(`${where}: replica (port ${p}, instance ${instance}) twice`);
      seen.add(key);
      return { port, instance };
    });
  }

  #profile(id: number): InfoProfile {
    const p = this.#profiles.get(id);
    if (p === undefined) return invalid(`no action profile with id ${id} on device ${this.deviceId}`);
    return p;
  }

  #profileMember(s: Entities, type: string, m: Msg, touched: Set<number>): void {
    const p = this.#profile(num(m.actionProfileId));
    const id = num(m.memberId);
    const members = s.members.get(p.id) ?? new Map<number, Call>();
    const exists = members.has(id);
    if (type === "INSERT" && exists) return refuse(Code.ALREADY_EXISTS, `action profile member ${id} exists`);
    if (type !== "INSERT" && !exists) return refuse(Code.NOT_FOUND, `no action profile member ${id}`);
    if (type === "DELETE") {
      const inGroup = [...(s.groups.get(p.id)?.values() ?? [])].some((g) => g.some((x) => x.memberId === id));
      const inEntry = p.tables.some((t) => [...(s.tables.get(t)?.values() ?? [])].some((e) => "member" in e.action && e.action.member === id));
      if (inGroup || inEntry) return refuse(Code.FAILED_PRECONDITION, `action profile member ${id} is in use by ${inGroup ? "a group" : "a table entry"}`);
      members.delete(id);
    } else {
      if (type === "INSERT" && p.size > 0 && members.size >= p.size) return refuse(Code.RESOURCE_EXHAUSTED, `the action profile holds ${p.size} members`);
      const allowed = new Set(p.tables.flatMap((t) => [...(this.#tables.get(t)?.entryActions ?? [])]));
      const call = this.#call(m.action as Msg, allowed, `action profile member ${id}`);
      for (const tid of p.tables) {
        const t = this.#tables.get(tid);
        if (t !== undefined) this.#translate(s, t, { tableId: tid, match: [], priority: 0, action: { call }, isDefault: false });
      }
      members.set(id, call);
    }
    s.members.set(p.id, members);
    for (const t of p.tables) touched.add(t);
  }

  #profileGroup(s: Entities, type: string, g: Msg, touched: Set<number>): void {
    const p = this.#profile(num(g.actionProfileId));
    const id = num(g.groupId);
    const groups = s.groups.get(p.id) ?? new Map<number, readonly { memberId: number; weight: number }[]>();
    const exists = groups.has(id);
    if (type === "INSERT" && exists) return refuse(Code.ALREADY_EXISTS, `action profile group ${id} exists`);
    if (type !== "INSERT" && !exists) return refuse(Code.NOT_FOUND, `no action profile group ${id}`);
    if (type === "DELETE") {
      if (p.tables.some((t) => [...(s.tables.get(t)?.values() ?? [])].some((e) => "group" in e.action && e.action.group === id))) {
        return refuse(Code.FAILED_PRECONDITION, `action profile group ${id} is in use by a table entry`);
      }
      groups.delete(id);
    } else {
      const members = ((g.members ?? []) as Msg[]).map((x) => ({ memberId: num(x.memberId), weight: x.weight === undefined ? 1 : num(x.weight) }));
      for (const x of members) {
        if (s.members.get(p.id)?.has(x.memberId) !== true) return refuse(Code.NOT_FOUND, `action profile group ${id}: member ${x.memberId} is not written`);
        if (x.weight < 1) return invalid(`action profile group ${id}: member ${x.memberId} has weight ${x.weight} (at least 1)`);
      }
      if (new Set(members.map((x) => x.memberId)).size !== members.length) return invalid(`action profile group ${id}: a member twice`);
      if (p.maxGroupSize > 0 && members.length > p.maxGroupSize) return refuse(Code.RESOURCE_EXHAUSTED, `action profile group ${id}: ${members.length} members, at most ${p.maxGroupSize}`);
      groups.set(id, members);
    }
    s.groups.set(p.id, groups);
    for (const t of p.tables) touched.add(t);
  }

  // ── Rows ─────────────────────────────────────────────────────────────────

  /** The data-plane rows of a table's entries, by entry key. */
  #rows(s: Entities, t: InfoTable): Map<string, { match: EntryMatch; action: EntryAction; sig: string }> {
    const out = new Map<string, { match: EntryMatch; action: EntryAction; sig: string }>();
    const add = (key: string, e: StoredEntry): void => {
      out.set(key, this.#translate(s, t, e));
    };
    const d = s.defaults.get(t.id);
    // A keyless table's default entry is its one row; its miss action (the drop) is no row at all.
    if (d !== undefined && "call" in d.action && this.#actions.get(d.action.call.actionId)?.name !== t.dev.miss) add("default", d);
    for (const [key, e] of s.tables.get(t.id) ?? []) add(key, e);
    return out;
  }

  /** One entry as a data-plane row (src/p4/import.ts); throws a Refusal for what the data plane cannot run. */
  #translate(s: Entities, t: InfoTable, e: StoredEntry): { match: EntryMatch; action: EntryAction; sig: string } {
    const names = new Map([...t.fields.values()].map((f) => [f.id, f.name]));
    const actions = new Map([...this.#actions.values()].map((a) => [a.id, { name: a.name, params: [...a.params.keys()] }]));
    const groups = { get: (id: number): readonly number[] => (s.multicast.get(id) ?? []).map((r) => r.instance) };
    const memberIndex = (n: bigint): number => {
      const m = this.dev.members.find((x) => BigInt(x.number) === n);
      if (m === undefined) throw new Refusal(Code.INVALID_ARGUMENT, `${t.name}: no member ${n} on device ${this.deviceId}`);
      return m.member.index;
    };
    const match = importMatch(t.dev, e.match, names, e.priority);
    let action: EntryAction;
    if ("group" in e.action) action = { name: "physical" }; // anycast: the link picks the receiver
    else {
      const call = "call" in e.action ? e.action.call : s.members.get(t.profile)?.get(e.action.member);
      if (call === undefined) throw new Refusal(Code.NOT_FOUND, `${t.name}: action profile member ${"member" in e.action ? e.action.member : "?"} is not written`);
      action = importAction(t.dev, call, actions, groups, memberIndex);
    }
    return { match, action, sig: actionSig(action) };
  }

  // ── Following other writers ──────────────────────────────────────────────

  /**
   * Rebuilds the entities from what the data plane holds after a write that did not come
   * through the server (a `--commands` delete or insert, a reload). `compiled` is the
   * description in force with `entries` (each of its rows' entry, −1: not installed);
   * `updates` are the INSERTs of its export for this device restricted to those installed
   * rows (as the server decodes a WriteRequest). An entity stays while its row is still
   * where it was written with the same action; the description's installed rows come in
   * (inserted, or modified where their action changed); multicast groups and action profile
   * members and groups are inserted or modified to the description's and otherwise kept.
   * Returns the lines of what could not be taken over (empty: the state follows the tables).
   */
  resync(compiled: CompiledSpec, entries: ReadonlyMap<number, readonly number[]>, updates: readonly Msg[], tables: Tables): string[] {
    const problems: string[] = [];
    const oldLayouts = new Map([...this.#tables].map(([id, t]) => [id, t.dev.table]));
    if (compiled !== this.#compiled) {
      const dev = device(compiled, this.deviceId - 1);
      for (const [id, t] of this.#tables) {
        const d = dev.tables.find((x) => x.name === t.name);
        if (d === undefined) {
          problems.push(`table ${t.name} is no longer in the description: its entries are dropped`);
          this.#tables.delete(id);
        } else this.#tables.set(id, { ...t, dev: d });
      }
      this.dev = dev;
      this.#compiled = compiled;
    }
    const s = cloneEntities(this.#entities);
    // Entities whose row is gone (or was replaced) from the data plane.
    const live = (t: InfoTable, key: string): Installed | undefined => {
      const layout = t.dev.table;
      if (oldLayouts.get(t.id)?.id !== layout.id) return undefined;
      const row = this.#installed.get(layout.id)?.get(key);
      if (row === undefined || row.entry < 0) return undefined;
      const a = tables.action(layout, row.entry, row.action.data?.length ?? 0);
      return a !== undefined && actionSig(a) === row.sig ? row : undefined;
    };
    for (const t of this.#tables.values()) {
      const es = s.tables.get(t.id);
      for (const key of [...(es?.keys() ?? [])]) if (live(t, key) === undefined) es?.delete(key);
      const d = s.defaults.get(t.id);
      if (d !== undefined && "call" in d.action && this.#actions.get(d.action.call.actionId)?.name !== t.dev.miss && live(t, "default") === undefined) s.defaults.delete(t.id);
    }
    for (const t of [...s.tables.keys()]) if (!this.#tables.has(t)) s.tables.delete(t);
    for (const t of [...s.defaults.keys()]) if (!this.#tables.has(t)) s.defaults.delete(t);
    // The description's rows that are installed, and its replication and profiles.
    const touched = new Set<number>();
    for (const u of updates) {
      for (const type of ["INSERT", "MODIFY"]) {
        try {
          this.#apply(s, { ...u, type: u.type === "MODIFY" ? "MODIFY" : type }, touched);
          break;
        } catch (e) {
          if (e instanceof Refusal && (e.code === Code.ALREADY_EXISTS || e.code === Code.NOT_FOUND) && type === "INSERT") continue;
          problems.push(`an installed row of the description is not taken over: ${e instanceof Error ? e.message : String(e)}`);
          break;
        }
      }
    }
    // The rows as installed now, each at its entry.
    const installed = new Map<number, Map<string, Installed>>();
    for (const t of this.#tables.values()) {
      const layout = t.dev.table;
      const rowsOf = compiled.tables.find((x) => x.id === layout.id);
      const at = entries.get(layout.id) ?? [];
      const next = new Map<string, Installed>();
      let rows: Map<string, { match: EntryMatch; action: EntryAction; sig: string }>;
      try {
        rows = this.#rows(s, t);
      } catch (e) {
        problems.push(`${t.name}: ${e instanceof Error ? e.message : String(e)}`);
        continue;
      }
      const described = new Map((rowsOf?.rows ?? []).map((r, k) => [`${matchSig(layout, r.match)} ${actionSig(r.action)}`, k]));
      for (const [key, row] of rows) {
        const k = described.get(`${matchSig(layout, row.match)} ${row.sig}`) ?? -1;
        const entry = k >= 0 && (at[k] ?? -1) >= 0 ? (at[k] ?? -1) : (live(t, key)?.entry ?? -1);
        next.set(key, { ...row, entry });
      }
      installed.set(layout.id, next);
    }
    this.#installed.clear();
    for (const [id, rows] of installed) this.#installed.set(id, rows);
    this.#entities = s;
    return problems;
  }

  // ── Read ─────────────────────────────────────────────────────────────────

  /** Entities a Read asks for (wildcards: a 0 id or an absent field reads all). */
  read(entity: Msg, tables: Tables): Msg[] {
    const kind = entity.entity as string | undefined;
    const e = this.#entities;
    if (kind === "tableEntry") {
      const q = entity.tableEntry as Msg;
      const id = num(q.tableId);
      if (id !== 0 && !this.#tables.has(id)) return invalid(`no table with id ${id} on device ${this.deviceId}`);
      const out: Msg[] = [];
      for (const t of this.#tables.values()) {
        if (id !== 0 && t.id !== id) continue;
        const installed = this.#installed.get(t.dev.table.id);
        const hits = t.hasCounter ? tables.hits(t.dev.table as TableLayout) : undefined;
        const counter = (key: string): Msg | undefined => (hits === undefined ? undefined : { packetCount: String(hits[installed?.get(key)?.entry ?? -1] ?? 0) });
        const wanted = id !== 0 && ((q.match ?? []) as unknown[]).length > 0 ? this.#match(t, (q.match ?? []) as Msg[]) : undefined;
        if (q.isDefaultAction === true) {
          const d = e.defaults.get(t.id);
          if (d !== undefined) out.push(this.#entryMsg(d, counter("default")));
          continue;
        }
        for (const [key, entry] of e.tables.get(t.id) ?? []) {
          if (wanted !== undefined && key !== `${entry.priority}|${wanted.map((f) => JSON.stringify(f, (_k, v: unknown) => (v instanceof Uint8Array ? hex(v) : v))).join(",")}`) continue;
          out.push(this.#entryMsg(entry, counter(key)));
        }
        const d = e.defaults.get(t.id);
        if (d !== undefined && wanted === undefined) out.push(this.#entryMsg(d, counter("default")));
      }
      return out;
    }
    if (kind === "directCounterEntry") {
      // The counters alone: the entries' counter_data, as DirectCounterEntry messages.
      const q = ((entity.directCounterEntry as Msg).tableEntry as Msg | undefined) ?? {};
      return this.read({ entity: "tableEntry", tableEntry: q }, tables).flatMap((m) => {
        const te = m.tableEntry as Msg;
        if (te.counterData === undefined) return [];
        const { counterData, action: _action, ...key } = te;
        return [{ directCounterEntry: { tableEntry: key, data: counterData } }];
      });
    }
    if (kind === "packetReplicationEngineEntry") {
      const q = entity.packetReplicationEngineEntry as Msg;
      if (q.type === "cloneSessionEntry") {
        const id = num((q.cloneSessionEntry as Msg).sessionId);
        return [...e.clone].filter(([k]) => id === 0 || k === id).map(([, c]) => ({ packetReplicationEngineEntry: { cloneSessionEntry: c } }));
      }
      const id = num((q.multicastGroupEntry as Msg | undefined)?.multicastGroupId);
      return [...e.multicast]
        .filter(([k]) => id === 0 || k === id)
        .map(([k, rs]) => ({ packetReplicationEngineEntry: { multicastGroupEntry: { multicastGroupId: k, replicas: rs.map((r) => ({ port: r.port, instance: r.instance })) } } }));
    }
    if (kind === "actionProfileMember") {
      const q = entity.actionProfileMember as Msg;
      const pid = num(q.actionProfileId);
      const mid = num(q.memberId);
      return [...e.members].filter(([p]) => pid === 0 || p === pid).flatMap(([p, ms]) =>
        [...ms].filter(([m]) => mid === 0 || m === mid).map(([m, call]) => ({ actionProfileMember: { actionProfileId: p, memberId: m, action: call } })),
      );
    }
    if (kind === "actionProfileGroup") {
      const q = entity.actionProfileGroup as Msg;
      const pid = num(q.actionProfileId);
      const gid = num(q.groupId);
      return [...e.groups].filter(([p]) => pid === 0 || p === pid).flatMap(([p, gs]) =>
        [...gs].filter(([g]) => gid === 0 || g === gid).map(([g, members]) => ({ actionProfileGroup: { actionProfileId: p, groupId: g, members } })),
      );
    }
    return refuse(Code.UNIMPLEMENTED, `reading ${kind ?? "an empty entity"} is not supported (table entries, direct counter entries, packet replication engine entries, action profile members and groups are)`);
  }

  #entryMsg(e: StoredEntry, counter: Msg | undefined): Msg {
    const action = "call" in e.action ? { action: e.action.call } : "member" in e.action ? { actionProfileMemberId: e.action.member } : { actionProfileGroupId: e.action.group };
    return {
      tableEntry: {
        tableId: e.tableId,
        match: e.match,
        action,
        ...(e.priority !== 0 ? { priority: e.priority } : {}),
        ...(e.isDefault ? { isDefaultAction: true } : {}),
        ...(counter !== undefined ? { counterData: counter } : {}),
      },
    };
  }

  /** The description this device runs. */
  get compiled(): CompiledSpec {
    return this.#compiled;
  }
}

export type { Entities };
