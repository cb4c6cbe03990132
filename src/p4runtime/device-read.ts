// A Read of a device's entities (P4Runtime §9.1.6, §9.3.1, §13): table entries are read from
// the ledger (./device-view.ts), each as a TableEntry with its match put back into field matches
// (src/p4/import.ts exportMatch), its action in P4 terms and what only P4Runtime knows of it; the
// other entities are P4Runtime's own.

import { entryKey as ledgerKey, type Ledger, type LedgerEntry } from "../control/ledger.js";
import type { Device } from "../p4/device.js";
import { exportMatch, importMatch } from "../p4/import.js";
import type { EntryMatch, Tables } from "../wasm/tables.js";
import { checkMatch } from "./device-checks.js";
import {
  cookieOf,
  type EntryQuery,
  type Extras,
  held,
  type InfoTable,
  invalid,
  metadataOf,
  NO_EXTRAS,
  num,
  refuse,
  type Rowless,
  type TableAct,
  type TableEntry,
} from "./device-entities.js";
import { tableOf } from "./device-index.js";
import { actOf, type Current, type DeviceCtx, entriesOf, heldEntry } from "./device-view.js";
import { keylessMatch } from "./device-writes.js";
import type { Encodable, p4 } from "./messages.js";
import { Code, encodeEntity, encodeTableEntry, tableEntryEntity, tableEntryOf } from "./proto.js";

/** An entry a read found: its table, the entry (none: a keyed table's default entry), its extras, and its action where
 * known (else worked out from the entry when it is encoded). */
interface Found {
  readonly t: InfoTable;
  readonly e: Current | undefined;
  readonly act: TableAct | undefined;
  readonly extras: Extras;
  readonly isDefault: boolean;
  readonly counter: p4.v1.CounterData<Encodable> | undefined;
}

/** An entry encoded for reads, with what it was encoded from: while those are the same, so are the bytes. */
interface Encoded {
  readonly extras: Extras;
  readonly dev: Device;
  readonly bytes: Uint8Array;
}

export class Reader {
  readonly #c: DeviceCtx;
  /** Entries as encoded for reads (Entity messages holding their TableEntry), by the ledger's or rowless entry. */
  readonly #encodings = new WeakMap<LedgerEntry | Rowless, Encoded>();

  constructor(c: DeviceCtx) {
    this.#c = c;
  }

  /** The entities a Read asks for (wildcards: a 0 id or an absent field reads all), encoded as p4.v1.Entity. */
  read(entity: p4.v1.Entity, ledger: Ledger, tables: Tables): Uint8Array[] {
    if (entity.entity === "tableEntry") {
      const whole = this.#whole(entity.tableEntry, ledger);
      if (whole !== undefined) return whole;
      return this.#tableEntries(entity.tableEntry, ledger, tables).flatMap((f) => {
        const bytes = this.#encoded(f);
        if (bytes === undefined) return []; // a row P4 names no action for
        return [f.counter === undefined ? bytes : tableEntryEntity(tableEntryOf(bytes), { counterData: f.counter })];
      });
    }
    return readOthers(this.#c, entity, (q) => this.#tableEntries(q, ledger, tables)).map(encodeEntity);
  }

  /** A read of one whole table with no filter and no counters (a controller's sync), straight from the encodings kept;
   * undefined for any other read. */
  #whole(q: EntryQuery, ledger: Ledger): Uint8Array[] | undefined {
    const c = this.#c;
    const id = num(q.tableId);
    if (id === 0 || (q.match ?? []).length > 0 || num(q.priority) !== 0 || q.isDefaultAction === true) return undefined;
    if (q.counterData !== undefined || filter(q) !== undefined) return undefined;
    const t = tableOf(c.index, id, c.deviceId);
    const out: Uint8Array[] = [];
    if (t.fields.size === 0) return out;
    const held = ledger.entries(t.dev.table.id);
    for (const [key, e] of held) {
      const extras = c.extras.get(e) ?? NO_EXTRAS;
      const kept = this.#encodings.get(e);
      const bytes =
        kept !== undefined && kept.extras === extras && kept.dev === c.dev
          ? kept.bytes
          : this.#encoded({ t, e: heldEntry(c, key, e), act: undefined, extras, isDefault: false, counter: undefined });
      if (bytes !== undefined) out.push(bytes);
    }
    for (const [key, r] of c.entities.rowless.get(t.id) ?? []) {
      if (held.has(key)) continue;
      const e: Current = { key, ...r, row: undefined };
      const bytes = this.#encoded({ t, e, act: r.act, extras: r.extras, isDefault: false, counter: undefined });
      if (bytes !== undefined) out.push(bytes);
    }
    return out;
  }

  /** An entry as an Entity (without counter data), encoded once while it and its extras stay; undefined where P4 names
   * no action for its row. */
  #encoded(f: Found): Uint8Array | undefined {
    const owner = f.e?.held ?? (f.e !== undefined ? this.#c.entities.rowless.get(f.t.id)?.get(f.e.key) : undefined);
    const cached = owner === undefined ? undefined : this.#encodings.get(owner);
    if (cached !== undefined && cached.extras === f.extras && cached.dev === this.#c.dev) return cached.bytes;
    const act = f.act ?? (f.e === undefined ? undefined : actOf(this.#c, f.t, f.e));
    if (act === undefined) return undefined;
    const bytes = tableEntryEntity(encodeTableEntry(entryMsg(f, act)));
    if (owner !== undefined) this.#encodings.set(owner, { extras: f.extras, dev: this.#c.dev, bytes });
    return bytes;
  }

  /**
   * The table entries a query selects (§9.1.6), each with its counter data when the query
   * asks for it (counter_data set). A table id of 0 reads every table and takes no other
   * filter; `is_default_action` reads the default entries alone, and otherwise they are not
   * read; a match reads the one entry with that key (with the priority given; without one,
   * in a table with priorities, the entries with that match at any priority); the action id,
   * priority, controller_metadata and metadata filter.
   */
  #tableEntries(q: EntryQuery, ledger: Ledger, tables: Tables): Found[] {
    const c = this.#c;
    const id = num(q.tableId);
    const given = q.match ?? [];
    const priority = num(q.priority);
    const wanted = filter(q);
    if (id === 0 && (given.length > 0 || priority !== 0 || wanted !== undefined))
      return invalid("a read of every table (table_id 0) takes no other filter than is_default_action (§9.1.6)");
    const out: Found[] = [];
    for (const t of id === 0 ? c.index.tables.values() : [tableOf(c.index, id, c.deviceId)]) {
      const hits = q.counterData !== undefined && t.hasCounter ? tables.hits(t.dev.table) : undefined;
      const take = (e: Current | undefined, act: TableAct | undefined, extras: Extras, isDefault: boolean): void => {
        const p = e === undefined || !t.priority ? 0 : e.match.priority;
        if (priority !== 0 && p !== priority) return;
        if (wanted !== undefined && !wanted(() => act ?? (e === undefined ? undefined : actOf(c, t, e)), extras))
          return;
        const count = extras.counterBase + (e?.held === undefined ? 0 : (hits?.[e.held.entry] ?? 0));
        const counter = hits === undefined ? undefined : { packetCount: String(count) };
        out.push({ t, e, act, extras, isDefault, counter });
      };
      if (q.isDefaultAction === true) {
        const e = t.fields.size === 0 ? lookup(c, t, ledger, keylessMatch(t)) : undefined;
        const act = e === undefined ? undefined : actOf(c, t, e);
        if (e !== undefined && act !== undefined) take(e, act, e.extras, true);
        else {
          const d = held(c.entities.defaults, t.id);
          take(undefined, { call: d.call }, d.extras, true);
        }
        continue;
      }
      if (t.fields.size === 0) continue;
      for (const e of given.length > 0 ? this.#matching(t, given, priority, ledger) : entriesOf(c, t, ledger))
        take(e, undefined, e.extras, false);
    }
    return out;
  }

  /** The entries with the match given: at the priority given, or (none, in a table with priorities) at any. */
  #matching(t: InfoTable, given: readonly p4.v1.FieldMatch[], priority: number, ledger: Ledger): Current[] {
    const match = importMatch(t.dev, checkMatch(t, given), t.fieldNames, priority);
    if (priority !== 0 || !t.priority) {
      const e = lookup(this.#c, t, ledger, match);
      return e === undefined ? [] : [e];
    }
    const key = keyOf(t, match);
    const stem = key.slice(0, key.lastIndexOf("|") + 1);
    return [...entriesOf(this.#c, t, ledger)].filter(
      (e) => e.key.startsWith(stem) && e.key.lastIndexOf("|") + 1 === stem.length,
    );
  }
}

const keyOf = (t: InfoTable, m: EntryMatch): string => ledgerKey(t.dev.table, m);

/** The entry with this match, if the table holds one. */
function lookup(c: DeviceCtx, t: InfoTable, ledger: Ledger, match: EntryMatch): Current | undefined {
  const key = keyOf(t, match);
  const e = ledger.entries(t.dev.table.id).get(key);
  if (e !== undefined) return heldEntry(c, key, e);
  const r = c.entities.rowless.get(t.id)?.get(key);
  return r === undefined ? undefined : { key, ...r, row: undefined };
}

/** What a query's action, cookie and metadata ask of an entry; undefined: nothing. */
function filter(q: EntryQuery): ((act: () => TableAct | undefined, x: Extras) => boolean) | undefined {
  const cookie = cookieOf(q);
  const metadata = metadataOf(q);
  const action = q.action;
  if (cookie === "0" && metadata.length === 0 && action === undefined) return undefined;
  const actionId = action?.type === "action" ? num(action.action.actionId) : undefined;
  const member = action?.type === "actionProfileMemberId" ? num(action.actionProfileMemberId) : undefined;
  const group = action?.type === "actionProfileGroupId" ? num(action.actionProfileGroupId) : undefined;
  return (actOf, x) => {
    if (cookie !== "0" && x.cookie !== cookie) return false;
    if (metadata.length > 0 && Buffer.compare(metadata, x.metadata) !== 0) return false;
    if (action === undefined) return true;
    const act = actOf();
    if (act === undefined) return false;
    return (
      (actionId === undefined || ("call" in act && act.call.actionId === actionId)) &&
      (member === undefined || ("member" in act && act.member === member)) &&
      (group === undefined || ("group" in act && act.group === group))
    );
  };
}

/** What identifies an entry: its table, match, priority, and whether it is the default. */
function keyMsg(f: Found): p4.v1.TableEntry<Encodable> {
  const priority = f.e === undefined || !f.t.priority ? 0 : f.e.match.priority;
  return {
    tableId: f.t.id,
    match: f.isDefault || f.e === undefined ? [] : exportMatch(f.t.dev, f.e.match),
    ...(priority !== 0 ? { priority } : {}),
    ...(f.isDefault ? { isDefaultAction: true } : {}),
  };
}

/** An entry as a TableEntry, without counter data (§8.2: what was written reads back, cookies included). */
function entryMsg(f: Found, a: TableAct): p4.v1.TableEntry<Encodable> {
  const action =
    "call" in a
      ? { action: a.call }
      : "member" in a
        ? { actionProfileMemberId: a.member }
        : { actionProfileGroupId: a.group };
  return {
    ...keyMsg(f),
    action,
    ...(f.extras.cookie !== "0" ? { controllerMetadata: f.extras.cookie } : {}),
    ...(f.extras.metadata.length > 0 ? { metadata: f.extras.metadata } : {}),
  };
}

function readOthers(
  c: DeviceCtx,
  entity: p4.v1.Entity,
  tableEntries: (q: EntryQuery) => Found[],
): p4.v1.Entity<Encodable>[] {
  const e = c.entities;
  switch (entity.entity) {
    case undefined:
      return invalid(
        "an empty Entity: name the kind of entity to read (a wildcard read of " +
          "everything is one Entity per kind, §13.2)",
      );
    case "directCounterEntry":
      return directCounters(c, entity.directCounterEntry, tableEntries);
    case "packetReplicationEngineEntry": {
      const q = entity.packetReplicationEngineEntry;
      if (q.type === "cloneSessionEntry") {
        const id = num(q.cloneSessionEntry.sessionId);
        return [...e.clone]
          .filter(([k]) => id === 0 || k === id)
          .map(([, s]) => ({ packetReplicationEngineEntry: { cloneSessionEntry: s } }));
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

/** Direct counters alone (§9.3.1): each entry's key and counter data. */
function directCounters(
  c: DeviceCtx,
  dc: p4.v1.DirectCounterEntry,
  tableEntries: (q: EntryQuery) => Found[],
): p4.v1.Entity<Encodable>[] {
  const q: TableEntry = dc.tableEntry ?? {};
  const id = num(q.tableId);
  const t = id === 0 ? undefined : tableOf(c.index, id, c.deviceId);
  if (t !== undefined && !t.hasCounter) return invalid(`${t.name}: the table has no direct counter`);
  const read = tableEntries({
    tableId: id,
    match: q.match,
    priority: q.priority,
    isDefaultAction: q.isDefaultAction,
    counterData: {},
  });
  // The counter of one entry, by its match, is NOT_FOUND when the entry is not there.
  if (read.length === 0 && (q.match ?? []).length > 0)
    return refuse(Code.NOT_FOUND, `${t?.name ?? ""}: no entry with this match and priority`);
  return read.flatMap((f) =>
    f.counter === undefined ? [] : [{ directCounterEntry: { tableEntry: keyMsg(f), data: f.counter } }],
  );
}
