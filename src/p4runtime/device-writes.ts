// A Write's table entries, default entries and direct counters (P4Runtime §9.1, §9.1.3, §9.3.1),
// each checked against the P4Info and against what the tables hold — the ledger, as the batch
// has it so far (./device-batch.ts) — and staged as the entry's new row and Extras.

import { importMatch } from "../p4/import.js";
import type { EntryMatch } from "../wasm/tables.js";
import type { Batch } from "./device-batch.js";
import { checkCall, checkMatch, checkWritable } from "./device-checks.js";
import {
  cookieOf,
  type DefaultEntry,
  type Extras,
  held,
  type InfoTable,
  invalid,
  metadataOf,
  NO_EXTRAS,
  num,
  packets,
  refuse,
  type TableAct,
  type TableEntry,
  type WriteType,
} from "./device-entities.js";
import { tableOf } from "./device-index.js";
import type { p4 } from "./messages.js";
import { Code } from "./proto.js";
import { type Current, translate, writtenAs } from "./device-view.js";

/** The program's default entry of a table (its miss: a drop), with a counter starting from `counterBase`. */
export const initialDefault = (t: InfoTable, counterBase = 0): DefaultEntry => ({
  call: { actionId: t.initialDefault, params: [] },
  extras: counterBase === 0 ? NO_EXTRAS : { ...NO_EXTRAS, counterBase },
});

/** A keyless table's one key: the match of no field. */
export const keylessMatch = (t: InfoTable): EntryMatch => importMatch(t.dev, [], t.fieldNames, 0);

export function writeTableEntry(b: Batch, type: WriteType, te: TableEntry): void {
  const t = tableOf(b.c.index, num(te.tableId), b.c.deviceId);
  const where = t.name;
  checkWritable(t, type, te);
  if (te.isDefaultAction === true) return writeDefault(b, type, t, te);
  if (t.fields.size === 0)
    return invalid(`${where} matches no field: it takes no entries; MODIFY its default entry (is_default_action)`);
  const fields = checkMatch(t, te.match ?? []);
  const priority = num(te.priority);
  if (t.priority && priority <= 0)
    return invalid(`${where}: entries of a table with ternary, range or optional fields need a priority above 0`);
  if (!t.priority && priority !== 0)
    return invalid(`${where}: entries of a table with only exact and LPM fields take no priority (got ${priority})`);
  const match = importMatch(t.dev, fields, t.fieldNames, priority);
  const key = b.keyOf(t, match);
  const old = b.current(t, key);
  if (type === "INSERT" && old !== undefined)
    return refuse(Code.ALREADY_EXISTS, `${where}: an entry with this match and priority exists`);
  if (old === undefined && type !== "INSERT")
    return refuse(Code.NOT_FOUND, `${where}: no entry with this match and priority`);
  if (type === "DELETE") return b.set(t, key, undefined);
  if (type === "INSERT" && t.size > 0 && b.count(t) >= t.size)
    return refuse(Code.RESOURCE_EXHAUSTED, `${where} holds ${t.size} entries`);
  const a = te.action;
  if (old !== undefined && a === undefined) {
    // §9.1.2: a MODIFY without an action keeps the entry as it is; only its counter may change.
    if (te.counterData !== undefined)
      b.set(t, key, { ...old, extras: { ...old.extras, counterBase: packets(te.counterData) - b.hits(t, old) } });
    return;
  }
  const act = entryAct(b, t, a);
  const counterBase =
    te.counterData !== undefined ? packets(te.counterData) - b.hits(t, old) : (old?.extras.counterBase ?? 0);
  const row = translate(b.c, t, match, act);
  const as = row === undefined ? undefined : writtenAs(b.c, t, act, row, key);
  const extras: Extras = {
    cookie: cookieOf(te),
    metadata: metadataOf(te),
    counterBase,
    ...(as !== undefined ? { as } : {}),
  };
  b.set(t, key, { key, match, row, extras, act }, type === "INSERT");
}

/** §9.1.3: the default entry is only MODIFYed: to an action, or (no action) back to the program's. */
function writeDefault(b: Batch, type: WriteType, t: InfoTable, te: TableEntry): void {
  const where = `${t.name} default entry`;
  if (type !== "MODIFY") return invalid(`${where}: the default entry is always there: it is only MODIFYed (§9.1.3)`);
  if ((te.match ?? []).length > 0) return invalid(`${where}: the default entry has no match`);
  if (num(te.priority) !== 0) return invalid(`${where}: the default entry has no priority`);
  if (t.constDefault) return refuse(Code.PERMISSION_DENIED, `${where}: the table's default action is constant`);
  const defaults = b.c.entities.defaults;
  const match = t.fields.size === 0 ? keylessMatch(t) : undefined;
  const key = match === undefined ? "" : b.keyOf(t, match);
  const old = match === undefined ? undefined : b.current(t, key);
  const action = te.action;
  if (action === undefined) {
    // A reset: the program's action, no cookies, the counter from 0 (or from the value given).
    b.journal.set(defaults, t.id, initialDefault(t, packets(te.counterData)));
    if (old !== undefined) b.set(t, key, undefined);
    return;
  }
  if (action.type !== "action")
    return invalid(`${where}: a default entry names an action, not a profile member or group`);
  const call = checkCall(
    b.c.index.actions,
    action.action,
    { actions: t.actions, allowed: t.defaultActions },
    "default",
    where,
  );
  const before = old?.extras ?? held(defaults, t.id).extras;
  const counterBase = te.counterData !== undefined ? packets(te.counterData) - b.hits(t, old) : before.counterBase;
  const extras: Extras = { cookie: cookieOf(te), metadata: metadataOf(te), counterBase };
  // A keyless table's default entry is its one row; its miss action (the drop) is no row at all, nor is any other
  // table's default.
  const act: TableAct = { call };
  const row = match === undefined || call.actionId === t.initialDefault ? undefined : translate(b.c, t, match, act);
  if (match === undefined || row === undefined) {
    b.journal.set(defaults, t.id, { call, extras });
    if (old !== undefined) b.set(t, key, undefined);
    return;
  }
  const as = writtenAs(b.c, t, act, row, key);
  b.journal.set(defaults, t.id, initialDefault(t));
  b.set(t, key, { key, match, row, extras: { ...extras, ...(as !== undefined ? { as } : {}) }, act });
}

/** §9.3.1: a DirectCounterEntry is only MODIFYed, and sets the counter of an entry that is there. */
export function writeDirectCounter(b: Batch, type: WriteType, dc: p4.v1.DirectCounterEntry): void {
  if (type !== "MODIFY")
    return invalid(`a direct counter entry is only MODIFYed: it comes and goes with its table entry (§9.3.1)`);
  const te: TableEntry = dc.tableEntry ?? {};
  const t = tableOf(b.c.index, num(te.tableId), b.c.deviceId);
  if (!t.hasCounter) return invalid(`${t.name}: the table has no direct counter`);
  if (dc.data === undefined) return;
  const counterBase = (e: Current | undefined): number => packets(dc.data) - b.hits(t, e);
  if (te.isDefaultAction === true) {
    const e = t.fields.size === 0 ? b.current(t, b.keyOf(t, keylessMatch(t))) : undefined;
    if (e !== undefined) return b.set(t, e.key, { ...e, extras: { ...e.extras, counterBase: counterBase(e) } });
    const d = held(b.c.entities.defaults, t.id);
    b.journal.set(b.c.entities.defaults, t.id, { ...d, extras: { ...d.extras, counterBase: counterBase(undefined) } });
    return;
  }
  const match = importMatch(t.dev, checkMatch(t, te.match ?? []), t.fieldNames, num(te.priority));
  const key = b.keyOf(t, match);
  const e = b.current(t, key);
  if (e === undefined) return refuse(Code.NOT_FOUND, `${t.name}: no entry with this match and priority`);
  b.set(t, key, { ...e, extras: { ...e.extras, counterBase: counterBase(e) } });
}

/** An entry's action checked: a call the table names for entries, or a member or group of its action profile. */
function entryAct(b: Batch, t: InfoTable, a: p4.v1.TableAction | undefined): TableAct {
  if (a === undefined || a.type === undefined) return invalid(`${t.name}: the entry has no action`);
  const s = b.c.entities;
  if (a.type === "action") {
    if (t.profile !== 0)
      return invalid(`${t.name} is implemented by an action selector: its entries name a profile member or group`);
    return {
      call: checkCall(b.c.index.actions, a.action, { actions: t.actions, allowed: t.entryActions }, "entry", t.name),
    };
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
