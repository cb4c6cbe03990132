// One P4Runtime device: a machine of the description, with the P4Info that
// `strata export p4` writes for it, the entities a controller has written
// (table entries, every table's default entry, multicast groups, clone
// sessions, action-profile members and groups) and the rows they become in
// the data plane's tables.
//
// A Write batch is applied update by update to the entities, as the P4Runtime
// spec asks (§12: ALREADY_EXISTS on a second INSERT, NOT_FOUND on a MODIFY or
// DELETE of nothing, INVALID_ARGUMENT for an entry the P4Info does not allow,
// RESOURCE_EXHAUSTED past a table's size), each change noted in a journal so
// that a refused update, a rolled-back batch or a batch the data plane refuses
// is undone. Each entry becomes its row when it is written (src/p4/import.ts,
// the same mapping that reads an export back); the rows of the entries the
// batch touched, compared with what is installed, go to the data plane as one
// all-or-nothing Tables.write, between packet batches. So every batch is
// data-plane atomic — packets see the tables before it or after it, never half
// of it — and its cost follows the entries it writes, not the tables' sizes:
// entries are found by their match key (priority and canonical field matches),
// for writes and for reads.

import type { CompiledSpec } from "../control/compiled.js";
import { entryKey as ledgerKey, type Ledger, type LedgerEntry } from "../control/ledger.js";
import { bytestringValue, importAction, importMatch } from "../p4/import.js";
import { canonical, ones } from "../p4/bytes.js";
import { type Device, type DeviceEntry, type DeviceTable, device } from "../p4/device.js";
import { deviceUpdates, tableEntry } from "../p4/entries.js";
import { type P4InfoIds, p4infoIds } from "../p4/p4info.js";
import type { EntryAction, TableLayout, TableWrite, Tables } from "../wasm/tables.js";
import type { Encodable, p4 } from "./messages.js";
import {
  type Update,
  type TableEntry,
  type FieldMatch,
  type Replica,
  type P4Info,
  type WriteType,
  Refusal,
  refuse,
  invalid,
  type InfoTable,
  type InfoAction,
  type InfoProfile,
  type StoredMatch,
  type Call,
  type EntryAct,
  type Row,
  type StoredEntry,
  type StoredReplica,
  type Entities,
  DEFAULT_KEY,
  type Placed,
  Journal,
  type Touched,
  touch,
  touchAll,
  num,
  EMPTY,
  actionSig,
  matchKey,
  lowBitsClear,
  entryKey,
  field,
  type EntryQuery,
  cookieOf,
  metadataOf,
  packets,
  preambleOf,
  held,
} from "./device-entities.js";
export { Refusal } from "./device-entities.js";
import { Code, encodeEntity, encodeTableEntry, tableEntryEntity, tableEntryOf, type UpdateError } from "./proto.js";

export interface DeviceInfo {
  readonly deviceId: number;
  readonly machine: string;
  /** The P4Info the export writes for the device, as gRPC decodes it. */
  readonly p4info: P4Info;
}

/** A batch of updates applied to the entities: its errors, and what the data plane must do for it. */
export interface Staged {
  /** One error (code 0 = OK) per update, in order. */
  readonly errors: readonly UpdateError[];
  /** The data-plane writes that take the installed rows to the entities; commit() notes where they are once the ledger
   * took them. */
  plan(ledger: Ledger): { readonly writes: readonly TableWrite[]; commit(): void };
  /** Undoes every update of the batch (none reaches the data plane). */
  rollback(): void;
}

export class DeviceState {
  readonly deviceId: number;
  readonly machine: string;
  readonly p4info: P4Info;
  /** The P4Info's packet_out header fields, by metadata id. */
  readonly packetOut: ReadonlyMap<number, { readonly name: string; readonly bits: number }>;
  dev: Device;
  #compiled: CompiledSpec;
  readonly #tables = new Map<number, InfoTable>();
  readonly #actions = new Map<number, InfoAction>();
  /** The actions as the importer takes them: name and parameter ids. */
  readonly #calls = new Map<number, { name: string; params: readonly number[] }>();
  readonly #profiles = new Map<number, InfoProfile>();
  readonly #ports: ReadonlySet<number>;
  #entities: Entities;
  #ids: P4InfoIds;
  /** Where each entity's row is, by P4Info table id, by entry key: the view onto the ledger's entries. */
  readonly #placed = new Map<number, Map<string, Placed>>();
  /** Per P4Info table id, the ledger's version of its table when the entities last followed it. */
  readonly #seen = new Map<number, number>();
  /** Per device table, its description rows by ledger key. */
  readonly #described = new WeakMap<DeviceTable, Map<string, DeviceEntry[]>>();
  #lives = 0;
  /** Entries as encoded for reads (Entity messages holding their TableEntry). */
  readonly #encodings = new WeakMap<StoredEntry, Uint8Array>();

  constructor(compiled: CompiledSpec, info: DeviceInfo) {
    this.deviceId = info.deviceId;
    this.machine = info.machine;
    this.p4info = info.p4info;
    this.#compiled = compiled;
    this.dev = device(compiled, info.deviceId - 1);
    this.#ids = p4infoIds(this.dev);
    const pi = info.p4info;
    const counted = new Set((pi.directCounters ?? []).map((c) => num(c.directTableId)));
    for (const a of pi.actions ?? []) {
      const pre = preambleOf(a, "action");
      const params = new Map((a.params ?? []).map((p) => [num(p.id), { name: String(p.name), bits: num(p.bitwidth) }]));
      this.#actions.set(pre.id, { id: pre.id, name: pre.alias, params });
      this.#calls.set(pre.id, { name: pre.alias, params: [...params.keys()] });
    }
    for (const t of pi.tables ?? []) {
      const pre = preambleOf(t, "table");
      const dev = this.dev.tables.find((x) => x.name === pre.alias);
      if (dev === undefined) throw new Error(`P4Info table ${pre.name} is not on machine ${this.machine}`);
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
      const initialDefault = [...this.#actions.values()].find((a) => a.name === dev.miss)?.id;
      if (initialDefault === undefined) throw new Error(`P4Info has no action ${dev.miss} for table ${pre.name}`);
      this.#tables.set(pre.id, {
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
      });
    }
    for (const p of pi.actionProfiles ?? []) {
      const pre = preambleOf(p, "action profile");
      this.#profiles.set(pre.id, {
        id: pre.id,
        tables: [...(p.tableIds ?? [])],
        size: num(p.size),
        maxGroupSize: num(p.maxGroupSize),
      });
    }
    this.#ports = new Set([...this.dev.ports.map((p) => p.port), 254]);
    const header = (pi.controllerPacketMetadata ?? []).find((h) => h.preamble?.name === "packet_out");
    this.packetOut = new Map(
      (header?.metadata ?? []).map((m) => [num(m.id), { name: String(m.name), bits: num(m.bitwidth) }]),
    );
    this.#entities = this.#initial();
  }

  /** What a device holds before anyone writes: no entries, every table's default entry as the program sets it. */
  #initial(): Entities {
    return {
      tables: new Map([...this.#tables.keys()].map((id) => [id, new Map()])),
      defaults: new Map([...this.#tables.values()].map((t) => [t.id, this.#initialDefault(t)])),
      multicast: new Map(),
      clone: new Map(),
      members: new Map([...this.#profiles.keys()].map((id) => [id, new Map()])),
      groups: new Map([...this.#profiles.keys()].map((id) => [id, new Map()])),
    };
  }

  #initialDefault(t: InfoTable, counterBase = 0): StoredEntry {
    return {
      tableId: t.id,
      match: [],
      priority: 0,
      action: { call: { actionId: t.initialDefault, params: [] } },
      isDefault: true,
      controllerMetadata: "0",
      metadata: EMPTY,
      counterBase,
      life: ++this.#lives,
    };
  }

  // ── Write ────────────────────────────────────────────────────────────────

  /**
   * Applies a batch of updates to the entities, update by update (one that fails changes
   * nothing); `tables` gives the counters a counter write starts from.
   */
  stage(updates: readonly Update[], tables: Tables): Staged {
    const journal = new Journal();
    const touched: Touched = new Map();
    const hits = this.#hitsReader(tables);
    const errors = updates.map((u, i): UpdateError => {
      const mark = journal.length;
      try {
        this.#apply(this.#entities, journal, touched, u, hits);
        return { code: Code.OK, message: "" };
      } catch (e) {
        journal.undo(mark);
        if (e instanceof Refusal) return { code: e.code, message: `update ${i}: ${e.message}` };
        return { code: Code.INVALID_ARGUMENT, message: `update ${i}: ${e instanceof Error ? e.message : String(e)}` };
      }
    });
    return {
      errors,
      plan: (ledger) => this.#plan(touched, ledger),
      rollback: () => journal.undo(),
    };
  }

  /** Every entity removed and every default entry reset, as a new pipeline starts (VERIFY_AND_COMMIT). */
  clear(): Staged {
    const journal = new Journal();
    const touched: Touched = new Map();
    const s = this.#entities;
    for (const [id, entries] of s.tables) {
      for (const key of [...entries.keys()]) journal.delete(entries, key);
      journal.set(s.defaults, id, this.#initialDefault(this.#table(id)));
      touchAll(touched, id);
    }
    const empty = <V>(m: Map<number, V>): void => {
      for (const k of [...m.keys()]) journal.delete(m, k);
    };
    empty(s.multicast);
    empty(s.clone);
    for (const m of s.members.values()) empty(m);
    for (const m of s.groups.values()) empty(m);
    return { errors: [], plan: (ledger) => this.#plan(touched, ledger), rollback: () => journal.undo() };
  }

  #table(id: number): InfoTable {
    const t = this.#tables.get(id);
    if (t === undefined) return invalid(`no table with id ${id} on device ${this.deviceId}`);
    return t;
  }

  /** Reads each table's hit counts once per batch (no packet runs while a batch is applied). */
  #hitsReader(tables: Tables | undefined): (t: InfoTable, key: string, life: number) => number {
    const cache = new Map<number, Float64Array>();
    return (t, key, life) => {
      const row = this.#placed.get(t.id)?.get(key);
      if (tables === undefined || row === undefined || row.entry.entry < 0 || row.life !== life) return 0;
      let hits = cache.get(t.id);
      if (hits === undefined) {
        hits = tables.hits(t.dev.table);
        cache.set(t.id, hits);
      }
      return hits[row.entry.entry] ?? 0;
    };
  }

  #apply(
    s: Entities,
    j: Journal,
    touched: Touched,
    u: Update,
    hits: (t: InfoTable, key: string, life: number) => number,
  ): void {
    const type = u.type;
    if (type !== "INSERT" && type !== "MODIFY" && type !== "DELETE")
      return invalid(`update type ${type ?? "UNSPECIFIED"} (INSERT, MODIFY or DELETE)`);
    const entity = u.entity;
    if (entity?.entity === undefined) return invalid("update without an entity");
    switch (entity.entity) {
      case "tableEntry":
        return this.#tableEntry(s, j, touched, type, entity.tableEntry, hits);
      case "directCounterEntry":
        return this.#directCounter(s, j, type, entity.directCounterEntry, hits);
      case "packetReplicationEngineEntry":
        return this.#pre(s, j, touched, type, entity.packetReplicationEngineEntry);
      case "actionProfileMember":
        return this.#profileMember(s, j, touched, type, entity.actionProfileMember);
      case "actionProfileGroup":
        return this.#profileGroup(s, j, touched, type, entity.actionProfileGroup);
      default:
        return refuse(
          Code.UNIMPLEMENTED,
          `${entity.entity} entities are not written by strata's server (table entries, direct counters, ` +
            `multicast groups, clone sessions, action profile members and groups are)`,
        );
    }
  }

  /**
   * An action call checked against the P4Info (§9.1.2): an action the table does not name is
   * INVALID_ARGUMENT; one it names for the other scope (an @defaultonly action in an entry, a
   * @tableonly one as the default) is PERMISSION_DENIED.
   */
  #call(
    a: p4.v1.Action | undefined,
    t: { readonly actions: ReadonlySet<number>; readonly allowed: ReadonlySet<number> },
    scope: "entry" | "default",
    where: string,
  ): Call {
    if (a === undefined) return invalid(`${where}: no action`);
    const id = num(a.actionId);
    const info = this.#actions.get(id);
    if (info === undefined) return invalid(`${where}: unknown action id ${id}`);
    if (!t.actions.has(id)) return invalid(`${where}: action ${info.name} is not one this table names`);
    if (!t.allowed.has(id)) {
      return refuse(
        Code.PERMISSION_DENIED,
        scope === "entry"
          ? `${where}: action ${info.name} is the table's default action only (@defaultonly)`
          : `${where}: action ${info.name} is for entries only (@tableonly), not the default entry`,
      );
    }
    const params: { paramId: number; value: Uint8Array }[] = [];
    for (const p of a.params ?? []) {
      const pid = num(p.paramId);
      const spec = info.params.get(pid);
      if (spec === undefined) return invalid(`${where}: action ${info.name} has no parameter id ${pid}`);
      if (params.some((x) => x.paramId === pid))
        return invalid(`${where}: action ${info.name} parameter ${spec.name} given twice`);
      params.push({ paramId: pid, value: field(p.value, spec.bits, `${where}: ${info.name}(${spec.name})`) });
    }
    // Each id is the action's and none twice: as many as it has means all of them.
    if (params.length < info.params.size) {
      const missing = [...info.params]
        .filter(([pid]) => !params.some((x) => x.paramId === pid))
        .map(([, spec]) => spec.name);
      return invalid(`${where}: action ${info.name} needs parameter ${missing.join(", ")}`);
    }
    return { actionId: id, params: params.length < 2 ? params : params.sort((x, y) => x.paramId - y.paramId) };
  }

  /**
   * What no table entry may carry on a write (§9.1, §9.1.7, §9.1.8): the server's own flag, and
   * (but for a DELETE, which reads only the key) idle timeouts and meters the tables lack.
   */
  #checkWritable(t: InfoTable, type: WriteType, te: TableEntry): void {
    if (te.isConst === true) invalid(`${t.name}: is_const is the server's to set on a read, never a write's (§9.1)`);
    if (type === "DELETE") return;
    if (num(te.idleTimeoutNs) !== 0 || te.timeSinceLastHit !== undefined)
      invalid(`${t.name}: the table has no idle timeout (P4Info idle_timeout_behavior NO_TIMEOUT)`);
    if (te.meterConfig !== undefined || te.meterCounterData !== undefined)
      invalid(`${t.name}: the table has no direct meter`);
    if (te.counterData !== undefined && !t.hasCounter) invalid(`${t.name}: the table has no direct counter`);
  }

  #tableEntry(
    s: Entities,
    j: Journal,
    touched: Touched,
    type: WriteType,
    te: TableEntry,
    hits: (t: InfoTable, key: string, life: number) => number,
  ): void {
    const t = this.#table(num(te.tableId));
    const where = t.name;
    this.#checkWritable(t, type, te);
    if (te.isDefaultAction === true) return this.#defaultEntry(s, j, touched, type, t, te, hits);
    if (t.fields.size === 0)
      return invalid(`${where} matches no field: it takes no entries; MODIFY its default entry (is_default_action)`);
    const match = this.#match(t, te.match ?? []);
    const priority = num(te.priority);
    if (t.priority && priority <= 0)
      return invalid(`${where}: entries of a table with ternary, range or optional fields need a priority above 0`);
    if (!t.priority && priority !== 0)
      return invalid(`${where}: entries of a table with only exact and LPM fields take no priority (got ${priority})`);
    const key = entryKey(priority, match);
    const entries = held(s.tables, t.id);
    const old = entries.get(key);
    if (type === "INSERT" && old !== undefined)
      return refuse(Code.ALREADY_EXISTS, `${where}: an entry with this match and priority exists`);
    if (old === undefined && type !== "INSERT")
      return refuse(Code.NOT_FOUND, `${where}: no entry with this match and priority`);
    if (type === "DELETE") {
      j.delete(entries, key);
      touch(touched, t.id, key, undefined);
      return;
    }
    if (type === "INSERT" && t.size > 0 && entries.size >= t.size)
      return refuse(Code.RESOURCE_EXHAUSTED, `${where} holds ${t.size} entries`);
    const a = te.action;
    if (old !== undefined && a === undefined) {
      // §9.1.2: a MODIFY without an action keeps the entry as it is; only its counter may change.
      if (te.counterData !== undefined)
        j.set(entries, key, { ...old, counterBase: packets(te.counterData) - hits(t, key, old.life) });
      return;
    }
    const action = this.#entryAction(s, t, a);
    const life = old?.life ?? ++this.#lives;
    const counterBase =
      te.counterData !== undefined
        ? packets(te.counterData) - (old === undefined ? 0 : hits(t, key, life))
        : (old?.counterBase ?? 0);
    const row = this.#translate(s, t, { match, priority, action });
    j.set(entries, key, {
      tableId: t.id,
      match,
      priority,
      action,
      isDefault: false,
      controllerMetadata: cookieOf(te),
      metadata: metadataOf(te),
      counterBase,
      life,
    });
    touch(touched, t.id, key, row);
  }

  /** §9.1.3: the default entry is only MODIFYed: to an action, or (no action) back to the program's. */
  #defaultEntry(
    s: Entities,
    j: Journal,
    touched: Touched,
    type: WriteType,
    t: InfoTable,
    te: TableEntry,
    hits: (t: InfoTable, key: string, life: number) => number,
  ): void {
    const where = `${t.name} default entry`;
    if (type !== "MODIFY") return invalid(`${where}: the default entry is always there: it is only MODIFYed (§9.1.3)`);
    if ((te.match ?? []).length > 0) return invalid(`${where}: the default entry has no match`);
    if (num(te.priority) !== 0) return invalid(`${where}: the default entry has no priority`);
    if (t.constDefault) return refuse(Code.PERMISSION_DENIED, `${where}: the table's default action is constant`);
    const old = s.defaults.get(t.id) ?? this.#initialDefault(t);
    const action = te.action;
    let entry: StoredEntry;
    if (action === undefined) {
      // A reset: the program's action, no cookies, the counter from 0 (or from the value given).
      entry = this.#initialDefault(t, packets(te.counterData));
    } else {
      if (action.type !== "action")
        return invalid(`${where}: a default entry names an action, not a profile member or group`);
      const call = this.#call(action.action, { actions: t.actions, allowed: t.defaultActions }, "default", where);
      const counterBase =
        te.counterData !== undefined ? packets(te.counterData) - hits(t, DEFAULT_KEY, old.life) : old.counterBase;
      entry = {
        tableId: t.id,
        match: [],
        priority: 0,
        action: { call },
        isDefault: true,
        controllerMetadata: cookieOf(te),
        metadata: metadataOf(te),
        counterBase,
        life: old.life,
      };
    }
    const row = this.#defaultRow(s, t, entry);
    j.set(s.defaults, t.id, entry);
    touch(touched, t.id, DEFAULT_KEY, row);
  }

  /** A keyless table's default entry is its one row; its miss action (the drop) is no row at all, nor is any other
   * table's default. */
  #defaultRow(s: Entities, t: InfoTable, d: StoredEntry): Row | undefined {
    if (t.fields.size > 0 || !("call" in d.action) || d.action.call.actionId === t.initialDefault) return undefined;
    return this.#translate(s, t, d);
  }

  /** §9.3.1: a DirectCounterEntry is only MODIFYed, and sets the counter of an entry that is there. */
  #directCounter(
    s: Entities,
    j: Journal,
    type: WriteType,
    dc: p4.v1.DirectCounterEntry,
    hits: (t: InfoTable, key: string, life: number) => number,
  ): void {
    if (type !== "MODIFY")
      return invalid(`a direct counter entry is only MODIFYed: it comes and goes with its table entry (§9.3.1)`);
    const te: TableEntry = dc.tableEntry ?? {};
    const t = this.#table(num(te.tableId));
    if (!t.hasCounter) return invalid(`${t.name}: the table has no direct counter`);
    if (dc.data === undefined) return;
    if (te.isDefaultAction === true) {
      const d = held(s.defaults, t.id);
      j.set(s.defaults, t.id, { ...d, counterBase: packets(dc.data) - hits(t, DEFAULT_KEY, d.life) });
      return;
    }
    const key = entryKey(num(te.priority), this.#match(t, te.match ?? []));
    const entries = held(s.tables, t.id);
    const e = entries.get(key);
    if (e === undefined) return refuse(Code.NOT_FOUND, `${t.name}: no entry with this match and priority`);
    j.set(entries, key, { ...e, counterBase: packets(dc.data) - hits(t, key, e.life) });
  }

  #entryAction(s: Entities, t: InfoTable, a: p4.v1.TableAction | undefined): EntryAct {
    if (a === undefined || a.type === undefined) return invalid(`${t.name}: the entry has no action`);
    if (a.type === "action") {
      if (t.profile !== 0)
        return invalid(`${t.name} is implemented by an action selector: its entries name a profile member or group`);
      return { call: this.#call(a.action, { actions: t.actions, allowed: t.entryActions }, "entry", t.name) };
    }
    if (t.profile === 0) return invalid(`${t.name} has no action profile: its entries name an action`);
    if (a.type === "actionProfileMemberId") {
      const member = num(a.actionProfileMemberId);
      if (s.members.get(t.profile)?.has(member) !== true)
        return refuse(Code.NOT_FOUND, `${t.name}: action profile member ${member} is not written`);
      return { member };
    }
    if (a.type === "actionProfileGroupId") {
      const group = num(a.actionProfileGroupId);
      if (s.groups.get(t.profile)?.has(group) !== true)
        return refuse(Code.NOT_FOUND, `${t.name}: action profile group ${group} is not written`);
      return { group };
    }
    return refuse(Code.UNIMPLEMENTED, `${t.name}: action ${a.type} is not supported`);
  }

  #match(t: InfoTable, given: readonly FieldMatch[]): StoredMatch[] {
    const out: StoredMatch[] = [];
    for (const m of given) {
      const id = num(m.fieldId);
      const f = t.fields.get(id);
      if (f === undefined) return invalid(`${t.name}: no match field with id ${id}`);
      if (out.some((x) => x.fieldId === id)) return invalid(`${t.name}: match field ${f.name} given twice`);
      if (m.fieldMatchType !== f.kind)
        return invalid(
          `${t.name}: field ${f.name} is matched ${f.matchType}, not ${m.fieldMatchType ?? "with nothing"}`,
        );
      const w = `${t.name}: field ${f.name}`;
      switch (m.fieldMatchType) {
        case "exact":
          out.push({ fieldId: id, exact: { value: field(m.exact.value, f.bits, w) } });
          break;
        case "optional":
          out.push({ fieldId: id, optional: { value: field(m.optional.value, f.bits, w) } });
          break;
        case "ternary": {
          const value = field(m.ternary.value, f.bits, w);
          const mask = field(m.ternary.mask, f.bits, `${w} mask`);
          const v = bytestringValue(value);
          const k = bytestringValue(mask);
          if (k === 0n) return invalid(`${w}: a ternary mask of 0 matches anything; leave the field out`);
          if ((v & ~k) !== 0n)
            return invalid(`${w}: value 0x${v.toString(16)} has bits outside mask 0x${k.toString(16)}`);
          out.push({ fieldId: id, ternary: { value, mask } });
          break;
        }
        case "lpm": {
          const value = field(m.lpm.value, f.bits, w);
          const len = num(m.lpm.prefixLen);
          if (len <= 0 || len > f.bits)
            return invalid(`${w}: prefix length ${len} (1 to ${f.bits}; a prefix of 0 is left out)`);
          if (!lowBitsClear(value, f.bits - len)) return invalid(`${w}: value has bits set beyond its /${len} prefix`);
          out.push({ fieldId: id, lpm: { value, prefixLen: len } });
          break;
        }
        case "range": {
          const low = field(m.range.low, f.bits, `${w} low`);
          const high = field(m.range.high, f.bits, `${w} high`);
          const lo = bytestringValue(low);
          const hi = bytestringValue(high);
          if (lo > hi) return invalid(`${w}: range low 0x${lo.toString(16)} is above high 0x${hi.toString(16)}`);
          if (lo === 0n && hi === ones(f.bits))
            return invalid(`${w}: a range over every value matches anything; leave the field out`);
          out.push({ fieldId: id, range: { low, high } });
          break;
        }
      }
    }
    for (const f of t.fields.values())
      if (f.matchType === "EXACT" && !out.some((x) => x.fieldId === f.id))
        return invalid(`${t.name}: exact field ${f.name} is missing`);
    return out.length < 2 ? out : out.sort((a, b) => a.fieldId - b.fieldId);
  }

  #pre(s: Entities, j: Journal, touched: Touched, type: WriteType, pre: p4.v1.PacketReplicationEngineEntry): void {
    if (pre.type === "multicastGroupEntry") {
      const g = pre.multicastGroupEntry;
      const id = num(g.multicastGroupId);
      if (id === 0) return invalid("multicast group id 0");
      const exists = s.multicast.has(id);
      if (type === "INSERT" && exists) return refuse(Code.ALREADY_EXISTS, `multicast group ${id} exists`);
      if (type !== "INSERT" && !exists) return refuse(Code.NOT_FOUND, `no multicast group ${id}`);
      if (type === "DELETE") j.delete(s.multicast, id);
      else j.set(s.multicast, id, this.#replicas(g.replicas ?? [], `multicast group ${id}`));
      // Every forward row that replicates reads its group's out-links.
      for (const t of this.#tables.values()) if (t.dev.role === "forward") touchAll(touched, t.id);
      return;
    }
    if (pre.type === "cloneSessionEntry") {
      const c = pre.cloneSessionEntry;
      const id = num(c.sessionId);
      if (id === 0) return invalid("clone session id 0");
      const exists = s.clone.has(id);
      if (type === "INSERT" && exists) return refuse(Code.ALREADY_EXISTS, `clone session ${id} exists`);
      if (type !== "INSERT" && !exists) return refuse(Code.NOT_FOUND, `no clone session ${id}`);
      if (type === "DELETE") j.delete(s.clone, id);
      else {
        this.#replicas(c.replicas ?? [], `clone session ${id}`);
        j.set(s.clone, id, c);
      }
      return;
    }
    return invalid("a packet replication engine entry with neither a multicast group nor a clone session");
  }

  #replicas(replicas: readonly Replica[], where: string): StoredReplica[] {
    const seen = new Set<string>();
    return replicas.map((r) => {
      const port =
        r.port !== undefined ? field(r.port, 32, `${where} replica port`) : canonical(BigInt(num(r.egressPort)));
      const p = Number(bytestringValue(port));
      if (!this.#ports.has(p))
        return invalid(
          `${where}: port ${p} is not a port of device ${this.deviceId} (ports: ${[...this.#ports].join(", ")})`,
        );
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

  #profileMember(s: Entities, j: Journal, touched: Touched, type: WriteType, m: p4.v1.ActionProfileMember): void {
    const p = this.#profile(num(m.actionProfileId));
    const id = num(m.memberId);
    const members = held(s.members, p.id);
    const exists = members.has(id);
    if (type === "INSERT" && exists) return refuse(Code.ALREADY_EXISTS, `action profile member ${id} exists`);
    if (type !== "INSERT" && !exists) return refuse(Code.NOT_FOUND, `no action profile member ${id}`);
    if (type === "DELETE") {
      const inGroup = [...(s.groups.get(p.id)?.values() ?? [])].some((g) => g.some((x) => x.memberId === id));
      const inEntry = p.tables.some((t) =>
        [...(s.tables.get(t)?.values() ?? [])].some((e) => "member" in e.action && e.action.member === id),
      );
      if (inGroup || inEntry)
        return refuse(
          Code.FAILED_PRECONDITION,
          `action profile member ${id} is in use by ${inGroup ? "a group" : "a table entry"}`,
        );
      j.delete(members, id);
    } else {
      if (type === "INSERT" && p.size > 0 && members.size >= p.size)
        return refuse(Code.RESOURCE_EXHAUSTED, `the action profile holds ${p.size} members`);
      const tables = p.tables.flatMap((tid) => {
        const t = this.#tables.get(tid);
        return t === undefined ? [] : [t];
      });
      const call = this.#call(
        m.action,
        {
          actions: new Set(tables.flatMap((t) => [...t.actions])),
          allowed: new Set(tables.flatMap((t) => [...t.entryActions])),
        },
        "entry",
        `action profile member ${id}`,
      );
      for (const t of tables) this.#translate(s, t, { match: [], priority: 0, action: { call } });
      j.set(members, id, call);
    }
    for (const t of p.tables) touchAll(touched, t);
  }

  #profileGroup(s: Entities, j: Journal, touched: Touched, type: WriteType, g: p4.v1.ActionProfileGroup): void {
    const p = this.#profile(num(g.actionProfileId));
    const id = num(g.groupId);
    const groups = held(s.groups, p.id);
    const exists = groups.has(id);
    if (type === "INSERT" && exists) return refuse(Code.ALREADY_EXISTS, `action profile group ${id} exists`);
    if (type !== "INSERT" && !exists) return refuse(Code.NOT_FOUND, `no action profile group ${id}`);
    if (type === "DELETE") {
      if (
        p.tables.some((t) =>
          [...(s.tables.get(t)?.values() ?? [])].some((e) => "group" in e.action && e.action.group === id),
        )
      ) {
        return refuse(Code.FAILED_PRECONDITION, `action profile group ${id} is in use by a table entry`);
      }
      j.delete(groups, id);
    } else {
      const members = (g.members ?? []).map((x) => ({
        memberId: num(x.memberId),
        weight: x.weight === undefined ? 1 : num(x.weight),
      }));
      for (const x of members) {
        if (s.members.get(p.id)?.has(x.memberId) !== true)
          return refuse(Code.NOT_FOUND, `action profile group ${id}: member ${x.memberId} is not written`);
        if (x.weight < 1)
          return invalid(`action profile group ${id}: member ${x.memberId} has weight ${x.weight} (at least 1)`);
      }
      if (new Set(members.map((x) => x.memberId)).size !== members.length)
        return invalid(`action profile group ${id}: a member twice`);
      if (p.maxGroupSize > 0 && members.length > p.maxGroupSize)
        return refuse(
          Code.RESOURCE_EXHAUSTED,
          `action profile group ${id}: ${members.length} members, at most ${p.maxGroupSize}`,
        );
      j.set(groups, id, members);
    }
    for (const t of p.tables) touchAll(touched, t);
  }

  // ── Rows ─────────────────────────────────────────────────────────────────

  /**
   * The data-plane writes that take the installed rows of the touched entries to the entities
   * (deletes, then modifies, then inserts: a row of an entry's earlier life is deleted and
   * inserted again, so its hit count starts from 0).
   */
  #plan(touched: Touched, ledger: Ledger): { writes: TableWrite[]; commit: () => void } {
    const deletes: TableWrite[] = [];
    const modifies: TableWrite[] = [];
    const inserts: TableWrite[] = [];
    // What each write does to where the entities' rows are: a row gone, or a row (now) in the ledger.
    const gone: { rows: Map<string, Placed>; key: string }[] = [];
    const placed: { rows: Map<string, Placed>; key: string; list: TableWrite[]; at: number; life: number }[] = [];
    const s = this.#entities;
    // Tables the entities had followed to the last change: this write is their own, and they follow it too.
    const followed: { id: number; layout: TableLayout }[] = [];
    for (const [id, keys] of touched) {
      const t = this.#tables.get(id);
      if (t === undefined) continue;
      const layout = t.dev.table;
      if (this.#seen.get(id) === ledger.tableVersion(layout.id)) followed.push({ id, layout });
      const rows = this.#placedOf(t);
      // Every row of the table, or the rows of the keys touched.
      const wanted = keys === "all" ? this.#rows(s, t) : keys;
      const entries = s.tables.get(t.id);
      for (const key of keys === "all" ? new Set([...rows.keys(), ...wanted.keys()]) : keys.keys()) {
        const e = key === DEFAULT_KEY ? s.defaults.get(t.id) : entries?.get(key);
        const row = wanted.get(key);
        const life = e?.life ?? 0;
        const old = rows.get(key);
        const replaced = old !== undefined && old.life !== life;
        if (old !== undefined && (row === undefined || replaced)) {
          deletes.push({ op: "delete", table: layout, match: old.entry.match });
          gone.push({ rows, key });
        }
        if (row === undefined) continue;
        if (old === undefined || replaced) {
          placed.push({ rows, key, list: inserts, at: inserts.length, life });
          inserts.push({ op: "insert", table: layout, match: row.match, action: row.action });
        } else if (actionSig(old.entry.action) !== row.sig) {
          placed.push({ rows, key, list: modifies, at: modifies.length, life });
          modifies.push({ op: "modify", table: layout, match: row.match, action: row.action });
        }
      }
    }
    return {
      writes: [...deletes, ...modifies, ...inserts],
      commit: () => {
        for (const g of gone) g.rows.delete(g.key);
        // The ledger's entries for the writes, in order: deletes, modifies, inserts.
        const written = ledger.written;
        for (const p of placed) {
          const entry = written[deletes.length + (p.list === inserts ? modifies.length : 0) + p.at];
          if (entry !== undefined) p.rows.set(p.key, { entry, life: p.life });
        }
        for (const f of followed) this.#seen.set(f.id, ledger.tableVersion(f.layout.id));
      },
    };
  }

  #placedOf(t: InfoTable): Map<string, Placed> {
    let rows = this.#placed.get(t.id);
    if (rows === undefined) {
      rows = new Map();
      this.#placed.set(t.id, rows);
    }
    return rows;
  }

  /** The data-plane rows of a table's entries, by entry key, translated afresh (with each entry's life as `life`). */
  #rows(s: Entities, t: InfoTable): Map<string, Row & { life: number }> {
    const out = new Map<string, Row & { life: number }>();
    const d = s.defaults.get(t.id);
    const dr = d === undefined ? undefined : this.#defaultRow(s, t, d);
    if (d !== undefined && dr !== undefined) out.set(DEFAULT_KEY, { ...dr, life: d.life });
    for (const [key, e] of s.tables.get(t.id) ?? []) {
      const row = this.#translate(s, t, e);
      if (row !== undefined) out.set(key, { ...row, life: e.life });
    }
    return out;
  }

  /**
   * One entry as a data-plane row (src/p4/import.ts); throws a Refusal for what the data plane
   * cannot run. An action parameter naming a member number the device lacks fits its bit width
   * and is taken (docs/p4-export.md): in a forward table the row drops; elsewhere the entry has
   * no row, so what it matches misses.
   */
  #translate(s: Entities, t: InfoTable, e: Pick<StoredEntry, "match" | "priority" | "action">): Row | undefined {
    const groups = { get: (id: number): readonly number[] => (s.multicast.get(id) ?? []).map((r) => r.instance) };
    let absent = false;
    const memberIndex = (n: bigint): number => {
      const m = this.dev.members.find((x) => BigInt(x.number) === n);
      if (m === undefined) absent = true;
      return m?.member.index ?? 0;
    };
    const match = importMatch(t.dev, e.match, t.fieldNames, e.priority);
    let action: EntryAction;
    if ("group" in e.action)
      action = { name: "physical" }; // anycast: the link picks the receiver
    else {
      const call = "call" in e.action ? e.action.call : s.members.get(t.profile)?.get(e.action.member);
      if (call === undefined)
        throw new Refusal(
          Code.NOT_FOUND,
          `${t.name}: action profile member ${"member" in e.action ? e.action.member : "?"} is not written`,
        );
      action = importAction(t.dev, call, this.#calls, groups, memberIndex);
    }
    if (absent) {
      if (t.dev.role !== "forward") return undefined;
      action = { name: "drop" };
    }
    return { match, action, sig: actionSig(action) };
  }

  // ── Following other writers ──────────────────────────────────────────────

  /**
   * Brings the entities in line with the ledger after other writers (a `--commands` delete or
   * insert, a reload): an entity whose row the ledger no longer holds as it was placed goes
   * (an entry that never had a row stays); an entry the ledger holds that no entity is, and
   * that is a row of the description, becomes the entity the export writes for that row. Only
   * tables the ledger changed since are looked at. Returns the lines of what could not be
   * followed (empty: the entities are the tables').
   */
  follow(ledger: Ledger): string[] {
    const problems = ledger.compiled === this.#compiled ? [] : this.#retable(ledger.compiled);
    for (const t of this.#tables.values()) {
      const version = ledger.tableVersion(t.dev.table.id);
      if (this.#seen.get(t.id) === version) continue;
      this.#seen.set(t.id, version);
      this.#catchUp(t, ledger, problems);
    }
    return problems;
  }

  /** A reload: the device's tables as the new description has them, and its replication and profiles taken in. */
  #retable(compiled: CompiledSpec): string[] {
    const problems: string[] = [];
    const dev = device(compiled, this.deviceId - 1);
    const s = this.#entities;
    for (const [id, t] of this.#tables) {
      const d = dev.tables.find((x) => x.name === t.name);
      if (d !== undefined) {
        this.#tables.set(id, { ...t, dev: d });
        continue;
      }
      problems.push(`table ${t.name} is no longer in the description: its entries are dropped`);
      this.#tables.delete(id);
      for (const m of [s.tables, s.defaults, this.#placed]) m.delete(id);
    }
    this.dev = dev;
    this.#compiled = compiled;
    this.#ids = p4infoIds(dev);
    // The description's multicast groups and action profiles, inserted or modified to its; others' kept.
    const journal = new Journal();
    const hits = this.#hitsReader(undefined);
    for (const u of deviceUpdates(dev, this.#ids)) {
      try {
        this.#apply(s, journal, new Map(), u, hits);
      } catch (e) {
        try {
          if (!(e instanceof Refusal && e.code === Code.ALREADY_EXISTS)) throw e;
          this.#apply(s, journal, new Map(), { ...u, type: "MODIFY" }, hits);
        } catch (again) {
          problems.push(`the description's ${u.entity?.entity ?? "entity"} is not taken over: ${String(again)}`);
        }
      }
    }
    return problems;
  }

  /** One table's entities after other writers changed its ledger entries. */
  #catchUp(t: InfoTable, ledger: Ledger, problems: string[]): void {
    const s = this.#entities;
    const layout = t.dev.table;
    const held = ledger.entries(layout.id);
    const rows = this.#placedOf(t);
    const entries = s.tables.get(t.id);
    const kept = new Set<LedgerEntry>();
    for (const [key, p] of rows) {
      if (held.get(ledgerKey(layout, p.entry.match)) === p.entry) {
        kept.add(p.entry);
        continue;
      }
      rows.delete(key);
      if (key === DEFAULT_KEY) s.defaults.set(t.id, this.#initialDefault(t));
      else entries?.delete(key);
    }
    for (const [key, e] of held) {
      if (kept.has(e)) continue;
      const row = this.#describedAs(t, key, e);
      if (row === undefined) continue; // not a row of the description: no P4Runtime entity says what it is
      try {
        this.#adopt(t, row, e);
      } catch (err) {
        problems.push(`${t.name}: a row of the description is not taken over: ${String(err)}`);
      }
    }
  }

  /** The description row the ledger's entry at `key` is (its match and action), if any. */
  #describedAs(t: InfoTable, key: string, e: LedgerEntry): DeviceEntry | undefined {
    let byKey = this.#described.get(t.dev);
    if (byKey === undefined) {
      byKey = new Map();
      for (const d of t.dev.entries) {
        const k = ledgerKey(t.dev.table, d.row.match);
        byKey.set(k, [...(byKey.get(k) ?? []), d]);
      }
      this.#described.set(t.dev, byKey);
    }
    const sig = actionSig(e.action);
    return byKey.get(key)?.find((d) => actionSig(d.row.action) === sig);
  }

  /** A description row the ledger holds, as the entity the export writes for it, placed at the ledger's entry. */
  #adopt(t: InfoTable, row: DeviceEntry, e: LedgerEntry): void {
    const s = this.#entities;
    const te = tableEntry(t.dev, row, this.#ids);
    const life = ++this.#lives;
    const common = { tableId: t.id, controllerMetadata: "0", metadata: EMPTY, counterBase: 0, life };
    if (te.isDefaultAction === true) {
      const a = te.action?.type === "action" ? te.action.action : undefined;
      const call = this.#call(a, { actions: t.actions, allowed: t.defaultActions }, "default", t.name);
      s.defaults.set(t.id, { ...common, match: [], priority: 0, action: { call }, isDefault: true });
      this.#placedOf(t).set(DEFAULT_KEY, { entry: e, life });
      return;
    }
    const match = this.#match(t, te.match ?? []);
    const priority = num(te.priority);
    const key = entryKey(priority, match);
    const action = this.#entryAction(s, t, te.action);
    held(s.tables, t.id).set(key, { ...common, match, priority, action, isDefault: false });
    this.#placedOf(t).set(key, { entry: e, life });
  }

  // ── Read ─────────────────────────────────────────────────────────────────

  /** The entities a Read asks for (wildcards: a 0 id or an absent field reads all), encoded as p4.v1.Entity. */
  read(entity: p4.v1.Entity, tables: Tables): Uint8Array[] {
    if (entity.entity === "tableEntry") {
      return this.#readTableEntries(entity.tableEntry, tables).map(({ entry, counter }) =>
        counter === undefined
          ? this.#encoded(entry)
          : tableEntryEntity(tableEntryOf(this.#encoded(entry)), { counterData: counter }),
      );
    }
    return this.#readOthers(entity, tables).map(encodeEntity);
  }

  /** An entry as an Entity (without counter data), encoded once: the entry does not change, a write makes another. */
  #encoded(e: StoredEntry): Uint8Array {
    let bytes = this.#encodings.get(e);
    if (bytes === undefined) {
      bytes = tableEntryEntity(encodeTableEntry(this.#entryMsg(e)));
      this.#encodings.set(e, bytes);
    }
    return bytes;
  }

  #readOthers(entity: p4.v1.Entity, tables: Tables): p4.v1.Entity<Encodable>[] {
    const e = this.#entities;
    switch (entity.entity) {
      case undefined:
        return invalid(
          "an empty Entity: name the kind of entity to read (a wildcard read of " +
            "everything is one Entity per kind, §13.2)",
        );
      case "directCounterEntry": {
        // The counters alone: each entry's key and counter data.
        const q: TableEntry = entity.directCounterEntry.tableEntry ?? {};
        const id = num(q.tableId);
        if (id !== 0 && !this.#table(id).hasCounter)
          return invalid(`${this.#table(id).name}: the table has no direct counter`);
        const read = this.#readTableEntries(
          { tableId: id, match: q.match, priority: q.priority, isDefaultAction: q.isDefaultAction, counterData: {} },
          tables,
        );
        // §9.3.1: the counter of one entry, by its match, is NOT_FOUND when the entry is not there.
        if (read.length === 0 && (q.match ?? []).length > 0)
          return refuse(Code.NOT_FOUND, `${this.#table(id).name}: no entry with this match and priority`);
        return read.flatMap(({ entry, counter }) =>
          counter === undefined ? [] : [{ directCounterEntry: { tableEntry: this.#keyMsg(entry), data: counter } }],
        );
      }
      case "packetReplicationEngineEntry": {
        const q = entity.packetReplicationEngineEntry;
        if (q.type === "cloneSessionEntry") {
          const id = num(q.cloneSessionEntry.sessionId);
          return [...e.clone]
            .filter(([k]) => id === 0 || k === id)
            .map(([, c]) => ({ packetReplicationEngineEntry: { cloneSessionEntry: c } }));
        }
        const id = num(q.multicastGroupEntry?.multicastGroupId);
        return [...e.multicast]
          .filter(([k]) => id === 0 || k === id)
          .map(([k, rs]) => ({
            packetReplicationEngineEntry: {
              multicastGroupEntry: {
                multicastGroupId: k,
                replicas: rs.map((r) => ({ port: r.port, instance: r.instance })),
              },
            },
          }));
      }
      case "actionProfileMember": {
        const q = entity.actionProfileMember;
        const pid = num(q.actionProfileId);
        const mid = num(q.memberId);
        return [...e.members]
          .filter(([p]) => pid === 0 || p === pid)
          .flatMap(([p, ms]) =>
            [...ms]
              .filter(([m]) => mid === 0 || m === mid)
              .map(([m, call]) => ({ actionProfileMember: { actionProfileId: p, memberId: m, action: call } })),
          );
      }
      case "actionProfileGroup": {
        const q = entity.actionProfileGroup;
        const pid = num(q.actionProfileId);
        const gid = num(q.groupId);
        return [...e.groups]
          .filter(([p]) => pid === 0 || p === pid)
          .flatMap(([p, gs]) =>
            [...gs]
              .filter(([g]) => gid === 0 || g === gid)
              .map(([g, members]) => ({ actionProfileGroup: { actionProfileId: p, groupId: g, members } })),
          );
      }
      default:
        return refuse(
          Code.UNIMPLEMENTED,
          `reading ${entity.entity} is not supported (table entries, direct counter entries, packet replication ` +
            `engine entries, action profile members and groups are)`,
        );
    }
  }

  /**
   * The table entries a query selects (§9.1.6), each with its counter data when the query
   * asks for it (counter_data set). A table id of 0 reads every table and takes no other
   * filter; `is_default_action` reads the default entries alone, and otherwise they are not
   * read; a match reads the one entry with that key (with the priority given; without one,
   * in a table with priorities, the entries with that match at any priority); the action id,
   * priority, controller_metadata and metadata filter.
   */
  #readTableEntries(
    q: EntryQuery,
    tables: Tables,
  ): { entry: StoredEntry; counter: p4.v1.CounterData<Encodable> | undefined }[] {
    const id = num(q.tableId);
    const given = q.match ?? [];
    const priority = num(q.priority);
    const cookie = cookieOf(q);
    const metadata = metadataOf(q);
    const action = q.action;
    if (
      id === 0 &&
      (given.length > 0 || priority !== 0 || cookie !== "0" || metadata.length > 0 || action !== undefined)
    ) {
      return invalid("a read of every table (table_id 0) takes no other filter than is_default_action (§9.1.6)");
    }
    const actionId = action?.type === "action" ? num(action.action.actionId) : undefined;
    const member = action?.type === "actionProfileMemberId" ? num(action.actionProfileMemberId) : undefined;
    const group = action?.type === "actionProfileGroupId" ? num(action.actionProfileGroupId) : undefined;
    const wanted = (e: StoredEntry): boolean =>
      (priority === 0 || e.priority === priority) &&
      (cookie === "0" || e.controllerMetadata === cookie) &&
      (metadata.length === 0 || Buffer.compare(metadata, e.metadata) === 0) &&
      (actionId === undefined || ("call" in e.action && e.action.call.actionId === actionId)) &&
      (member === undefined || ("member" in e.action && e.action.member === member)) &&
      (group === undefined || ("group" in e.action && e.action.group === group));
    const counters = q.counterData !== undefined;
    const out: { entry: StoredEntry; counter: p4.v1.CounterData<Encodable> | undefined }[] = [];
    for (const t of id === 0 ? this.#tables.values() : [this.#table(id)]) {
      const hits = counters && t.hasCounter ? this.#hitsReader(tables) : undefined;
      const counter = (key: string, e: StoredEntry): p4.v1.CounterData<Encodable> | undefined =>
        hits === undefined ? undefined : { packetCount: String(e.counterBase + hits(t, key, e.life)) };
      if (q.isDefaultAction === true) {
        const d = this.#entities.defaults.get(t.id);
        if (d !== undefined && wanted(d)) out.push({ entry: d, counter: counter(DEFAULT_KEY, d) });
        continue;
      }
      const entries = this.#entities.tables.get(t.id) ?? new Map<string, StoredEntry>();
      if (given.length > 0) {
        const match = this.#match(t, given);
        if (priority !== 0 || !t.priority) {
          const key = entryKey(priority, match);
          const e = entries.get(key);
          if (e !== undefined && wanted(e)) out.push({ entry: e, counter: counter(key, e) });
        } else {
          const suffix = `|${matchKey(match)}`;
          for (const [key, e] of entries)
            if (key.endsWith(suffix) && wanted(e)) out.push({ entry: e, counter: counter(key, e) });
        }
        continue;
      }
      for (const [key, e] of entries) if (wanted(e)) out.push({ entry: e, counter: counter(key, e) });
    }
    return out;
  }

  /** What identifies an entry: its table, match, priority, and whether it is the default. */
  #keyMsg(e: StoredEntry): p4.v1.TableEntry<Encodable> {
    return {
      tableId: e.tableId,
      match: e.match,
      ...(e.priority !== 0 ? { priority: e.priority } : {}),
      ...(e.isDefault ? { isDefaultAction: true } : {}),
    };
  }

  /** An entry as a TableEntry, without counter data (§8.2: what was written reads back, cookies included). */
  #entryMsg(e: StoredEntry): p4.v1.TableEntry<Encodable> {
    const action =
      "call" in e.action
        ? { action: e.action.call }
        : "member" in e.action
          ? { actionProfileMemberId: e.action.member }
          : { actionProfileGroupId: e.action.group };
    return {
      ...this.#keyMsg(e),
      action,
      ...(e.controllerMetadata !== "0" ? { controllerMetadata: e.controllerMetadata } : {}),
      ...(e.metadata.length > 0 ? { metadata: e.metadata } : {}),
    };
  }

  /** The description this device runs. */
  get compiled(): CompiledSpec {
    return this.#compiled;
  }
}
