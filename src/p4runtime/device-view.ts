// Table entries as P4Runtime sees them, read from the ledger (src/control/ledger.ts): an entry's
// row is the ledger's, what only P4Runtime knows of it (its Extras) is kept beside the ledger's
// entry, and its action as P4Runtime names it is the row's action put back into P4 terms — the
// description's own call for a row of the description (as `strata export p4` writes it), else
// the export's mapping of a row's action (src/p4/row-actions.ts) — unless the Extras say how it
// was written. An entry the data plane has no row for (Rowless) is P4Runtime's alone.

import type { CompiledRow } from "../control/compiled.js";
import { entryKey as ledgerKey, type Ledger, type LedgerEntry, sameAction } from "../control/ledger.js";
import { canonical } from "../p4/bytes.js";
import type { ActionCall, Device, DeviceEntry, DeviceTable } from "../p4/device.js";
import { importAction, outLinks } from "../p4/import.js";
import { ACTION_NAMES as A, pushAction } from "../p4/names.js";
import { idOf, type P4InfoIds } from "../p4/p4info.js";
import { rowCall } from "../p4/row-actions.js";
import type { EntryAction, EntryMatch } from "../wasm/tables.js";
import { sameCall } from "./device-checks.js";
import {
  type Call,
  type Entities,
  type Extras,
  type InfoTable,
  NO_EXTRAS,
  Refusal,
  type Row,
  type TableAct,
} from "./device-entities.js";
import type { P4InfoIndex } from "./device-index.js";
import { Code } from "./proto.js";

/** What the view of a device's entries is made from. */
export interface DeviceCtx {
  readonly deviceId: number;
  readonly index: P4InfoIndex;
  readonly entities: Entities;
  /** What only P4Runtime knows of the ledger's entries it wrote; an entry another writer changed has none. */
  readonly extras: WeakMap<LedgerEntry, Extras>;
  readonly dev: Device;
  readonly ids: P4InfoIds;
  /** Per device table, its description rows by ledger key. */
  readonly described: WeakMap<DeviceTable, Map<string, DeviceEntry[]>>;
}

/** A table entry as it is now: its match, its row (none: rowless), what only P4Runtime knows of it. */
export interface Current {
  readonly key: string;
  readonly match: EntryMatch;
  readonly row: Row | undefined;
  readonly extras: Extras;
  /** Its action as P4Runtime names it, when known without working it out from the row. */
  readonly act?: TableAct;
  /** The ledger's entry it is, unchanged. */
  readonly held?: LedgerEntry;
}

/** The ledger's entry as P4Runtime sees it. */
export const heldEntry = (c: DeviceCtx, key: string, e: LedgerEntry): Current => ({
  key,
  match: e.match,
  row: e,
  extras: c.extras.get(e) ?? NO_EXTRAS,
  held: e,
});

/** Every entry of a table now (the ledger's, then the rowless), before a batch's changes. */
export function* entriesOf(c: DeviceCtx, t: InfoTable, ledger: Ledger): Generator<Current> {
  const held = ledger.entries(t.dev.table.id);
  for (const [key, e] of held) yield heldEntry(c, key, e);
  for (const [key, r] of c.entities.rowless.get(t.id) ?? []) if (!held.has(key)) yield { key, ...r, row: undefined };
}

/** An entry's action as P4Runtime names it; undefined where P4 has no name for its row's. */
export function actOf(c: DeviceCtx, t: InfoTable, e: Current): TableAct | undefined {
  if (e.act !== undefined) return e.act;
  if (e.extras.as !== undefined) return e.extras.as;
  return e.row === undefined ? undefined : rowAct(c, t, e.row, e.key);
}

/** A row's action in P4 terms: the description's call where the row is one of its rows, else the export's mapping. */
export function rowAct(c: DeviceCtx, t: InfoTable, row: Row, key?: string): TableAct | undefined {
  const d = describedAs(c, t.dev, row, key);
  if (d !== undefined) {
    if (d.profileGroup !== undefined) return { group: d.profileGroup };
    if (d.profileMember !== undefined) return { member: d.profileMember };
    return { call: callOf(c.ids, d.call) };
  }
  try {
    const r: CompiledRow = {
      row: -1,
      match: row.match,
      action: row.action,
      outLinks: sentOn(row.action),
      at: null,
      text: "",
    };
    const numberOf = (i: number): number => {
      const m = c.dev.members.find((x) => x.member.index === i);
      if (m === undefined) throw new Error(`no member ${i}`);
      return m.number;
    };
    const call = callOf(c.ids, rowCall(t.dev.role, t.dev.member, r, groupOf(c), numberOf, c.dev.targetOf, "", t.name));
    if (t.profile === 0) return { call };
    for (const [id, m] of c.entities.members.get(t.profile) ?? []) if (sameCall(m, call)) return { member: id };
    return undefined;
  } catch {
    return undefined; // a row P4 names no action for
  }
}

const sentOn = (a: EntryAction): number[] => (a.name === "out" ? outLinks(a) : []);

/** The multicast group that copies to these out-links (the first written). */
const groupOf =
  (c: DeviceCtx) =>
  (outLinks: readonly number[]): number => {
    for (const [id, rs] of c.entities.multicast)
      if (rs.length === outLinks.length && rs.every((r, i) => r.instance === outLinks[i])) return id;
    throw new Error(`no multicast group copies to out-links ${outLinks.join(", ")}`);
  };

/** The description row with this match and action, if the row is one. */
function describedAs(c: DeviceCtx, dev: DeviceTable, row: Row, key?: string): DeviceEntry | undefined {
  let byKey = c.described.get(dev);
  if (byKey === undefined) {
    byKey = new Map();
    for (const d of dev.entries) {
      const k = ledgerKey(dev.table, d.row.match);
      byKey.set(k, [...(byKey.get(k) ?? []), d]);
    }
    c.described.set(dev, byKey);
  }
  return byKey.get(key ?? ledgerKey(dev.table, row.match))?.find((d) => sameAction(d.row.action, row.action));
}

/** The device's action call in the P4Info's ids. */
export const callOf = (ids: P4InfoIds, call: ActionCall): Call => ({
  actionId: idOf(ids.actions, call.action),
  params: call.args.map((v, i) => ({ paramId: i + 1, value: canonical(v) })),
});

/** Calls whose row says them exactly: rowAct gives each back as written. */
const EXACT: ReadonlySet<string> = new Set([
  A.acquireForward,
  A.acquireReceive,
  A.acquireBoth,
  A.forwardOut,
  A.forwardDrop,
  A.receiveDeliver,
]);

export const sameAct = (a: TableAct, b: TableAct): boolean =>
  "call" in a
    ? "call" in b && sameCall(a.call, b.call)
    : "member" in a
      ? "member" in b && a.member === b.member
      : "group" in b && a.group === b.group;

/**
 * An entry as a data-plane row (src/p4/import.ts); throws a Refusal for what the data plane
 * cannot run. An action parameter naming a member number the device lacks fits its bit width
 * and is taken (docs/p4-export.md): in a forward table the row drops; elsewhere the entry has
 * no row, so what it matches misses.
 */
export function translate(c: DeviceCtx, t: InfoTable, match: EntryMatch, act: TableAct): Row | undefined {
  const s = c.entities;
  if ("group" in act) return { match, action: { name: "physical" } }; // anycast: the link picks the receiver
  const call = "call" in act ? act.call : s.members.get(t.profile)?.get(act.member);
  if (call === undefined)
    throw new Refusal(
      Code.NOT_FOUND,
      `${t.name}: action profile member ${"member" in act ? act.member : "?"} is not written`,
    );
  const groups = { get: (id: number): readonly number[] => (s.multicast.get(id) ?? []).map((r) => r.instance) };
  let absent = false;
  const memberIndex = (n: bigint): number => {
    const m = c.dev.members.find((x) => BigInt(x.number) === n);
    if (m === undefined) absent = true;
    return m?.member.index ?? 0;
  };
  const action = importAction(t.dev, call, c.index.calls, groups, memberIndex);
  if (!absent) return { match, action };
  return t.dev.role === "forward" ? { match, action: { name: "drop" } } : undefined;
}

/**
 * The action as written, where the row does not give it back for good: a profile member or group
 * (P4's alone: the row holds what the member does), a multicast group's number (the row holds
 * its out-links), or any call rowAct would name otherwise.
 */
export function writtenAs(c: DeviceCtx, t: InfoTable, act: TableAct, row: Row, key?: string): TableAct | undefined {
  if (!("call" in act)) return act;
  const name = c.index.calls.get(act.call.actionId)?.name ?? "";
  if (name === A.forwardReplicate) return act;
  // These the importer and the export map into each other exactly (no member, link target or group in them): the
  // row gives the call back, and working it out on every write would cost a batch about a tenth of its time.
  if (EXACT.has(name) || name === pushAction(t.dev.member.design.name)) return undefined;
  const derived = rowAct(c, t, row, key);
  return derived !== undefined && sameAct(derived, act) ? undefined : act;
}
