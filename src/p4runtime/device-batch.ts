// A Write batch's changes to table entries while it is staged (./device-state.ts): each update
// sees the ones before it; at the end the changes become data-plane writes through the ledger,
// one all-or-nothing write, and only once the ledger took them are the entries' Extras and the
// rowless entries changed. Nothing here outlives the batch.

import { entryKey as ledgerKey, type Ledger, type LedgerEntry, sameAction } from "../control/ledger.js";
import type { EntryMatch, TableWrite, Tables } from "../wasm/tables.js";
import { type Extras, type InfoTable, Journal, plain, type TableAct } from "./device-entities.js";
import { actOf, type Current, type DeviceCtx, entriesOf, heldEntry, translate, writtenAs } from "./device-view.js";

/** What a batch made of an entry: what it is now (undefined: deleted), and whether a row it had was replaced. */
export interface Pending {
  readonly t: InfoTable;
  readonly now: Current | undefined;
  /** Inserted after the ledger's entry at its key was deleted in the batch: a new row, its hits from 0. */
  readonly fresh: boolean;
}

export class Batch {
  readonly c: DeviceCtx;
  readonly ledger: Ledger;
  readonly journal = new Journal();
  /** P4Info table id → ledger key → the entry's change. */
  readonly pending = new Map<number, Map<string, Pending>>();
  /** Tables each of whose entries is translated again (a multicast group or profile member they read changed). */
  readonly all = new Set<number>();
  readonly #added = new Map<number, number>();
  readonly #tables: Tables | undefined;
  readonly #hits = new Map<number, Float64Array>();

  constructor(c: DeviceCtx, ledger: Ledger, tables: Tables | undefined) {
    this.c = c;
    this.ledger = ledger;
    this.#tables = tables;
  }

  keyOf(t: InfoTable, match: EntryMatch): string {
    return ledgerKey(t.dev.table, match);
  }

  /** The entry at `key` as the batch has it so far. */
  current(t: InfoTable, key: string): Current | undefined {
    const p = this.pending.get(t.id)?.get(key);
    if (p !== undefined) return p.now;
    const e = this.ledger.entries(t.dev.table.id).get(key);
    if (e !== undefined) return heldEntry(this.c, key, e);
    const r = this.c.entities.rowless.get(t.id)?.get(key);
    return r === undefined ? undefined : { key, ...r, row: undefined };
  }

  /** Whether the table held an entry at `key` before the batch. */
  #holds(t: InfoTable, key: string): boolean {
    return this.ledger.entries(t.dev.table.id).has(key) || this.c.entities.rowless.get(t.id)?.has(key) === true;
  }

  /** How many entries the table holds, as the batch has it so far. */
  count(t: InfoTable): number {
    let n = this.ledger.entries(t.dev.table.id).size + (this.#added.get(t.id) ?? 0);
    const held = this.ledger.entries(t.dev.table.id);
    for (const k of this.c.entities.rowless.get(t.id)?.keys() ?? []) if (!held.has(k)) n++;
    return n;
  }

  /** Sets the entry at `key` (undefined: deletes it); `insert`: a new entry, never the ledger's one before. */
  set(t: InfoTable, key: string, now: Current | undefined, insert = false): void {
    let keys = this.pending.get(t.id);
    if (keys === undefined) {
      keys = new Map();
      this.pending.set(t.id, keys);
    }
    const before = keys.get(key);
    const had = before !== undefined ? before.now !== undefined : this.#holds(t, key);
    if (had === (now === undefined)) this.#added.set(t.id, (this.#added.get(t.id) ?? 0) + (now === undefined ? -1 : 1));
    keys.set(key, { t, now, fresh: insert || (before?.fresh ?? false) });
  }

  /** Every entry of the table as the batch has it. */
  *entries(t: InfoTable): Generator<Current> {
    const keys = this.pending.get(t.id);
    for (const e of entriesOf(this.c, t, this.ledger)) if (keys?.has(e.key) !== true) yield e;
    for (const p of keys?.values() ?? []) if (p.now !== undefined) yield p.now;
  }

  /** The packets the data plane counted for the entry's row so far (0 for a row the batch made). */
  hits(t: InfoTable, e: Current | undefined): number {
    const held = e?.held;
    if (held === undefined || this.#tables === undefined || held.entry < 0) return 0;
    if (this.pending.get(t.id)?.get(e?.key ?? "")?.fresh === true) return 0;
    let hits = this.#hits.get(t.id);
    if (hits === undefined) {
      hits = this.#tables.hits(t.dev.table);
      this.#hits.set(t.id, hits);
    }
    return hits[held.entry] ?? 0;
  }

  /** The entries of tables marked `all`, translated again from their P4 actions. */
  #retranslate(): void {
    for (const id of this.all) {
      const t = this.c.index.tables.get(id);
      if (t === undefined) continue;
      for (const e of [...this.entries(t)]) {
        const act = actOf(this.c, t, e);
        if (act === undefined) continue; // a row P4 names no action for: another writer's, left as it is
        const row = translate(this.c, t, e.match, act);
        if (row === e.row || (row !== undefined && e.row !== undefined && sameAction(row.action, e.row.action)))
          continue;
        const as = row === undefined ? undefined : writtenAs(this.c, t, act, row, e.key);
        const extras: Extras = { ...e.extras, ...(as !== undefined ? { as } : {}) };
        if (as === undefined) delete (extras as { as?: TableAct }).as;
        this.set(t, e.key, { key: e.key, match: e.match, row, extras, act });
      }
    }
  }

  /**
   * The data-plane writes that take the ledger's entries to the batch's (deletes, then modifies,
   * then inserts: a row replaced is deleted and inserted again, so its hit count starts from 0),
   * and what to note once the ledger took them.
   */
  plan(): { readonly writes: readonly TableWrite[]; commit(): void } {
    this.#retranslate();
    const deletes: TableWrite[] = [];
    const modifies: TableWrite[] = [];
    const inserts: TableWrite[] = [];
    const noted: { e: Current; t: InfoTable; list: TableWrite[] | undefined; at: number }[] = [];
    for (const keys of this.pending.values())
      for (const [key, p] of keys) {
        const layout = p.t.dev.table;
        const old = this.ledger.entries(layout.id).get(key);
        const row = p.now?.row;
        if (old !== undefined && (row === undefined || p.fresh))
          deletes.push({ op: "delete", table: layout, match: old.match });
        if (p.now === undefined) continue;
        let list: TableWrite[] | undefined;
        if (row !== undefined && (old === undefined || p.fresh)) list = inserts;
        else if (row !== undefined && old !== undefined && !sameAction(old.action, row.action)) list = modifies;
        noted.push({ e: p.now, t: p.t, list, at: list?.length ?? 0 });
        if (row !== undefined && list !== undefined)
          list.push({
            op: list === inserts ? "insert" : "modify",
            table: layout,
            match: row.match,
            action: row.action,
          });
      }
    return {
      writes: [...deletes, ...modifies, ...inserts],
      commit: () => this.#commit(noted, deletes.length, modifies.length, inserts),
    };
  }

  #commit(
    noted: readonly { e: Current; t: InfoTable; list: TableWrite[] | undefined; at: number }[],
    deleted: number,
    modified: number,
    inserts: TableWrite[],
  ): void {
    const { extras, entities } = this.c;
    for (const [id, keys] of this.pending) for (const key of keys.keys()) entities.rowless.get(id)?.delete(key);
    const written = this.ledger.written;
    for (const { e, t, list, at } of noted) {
      if (e.row === undefined) {
        let rowless = entities.rowless.get(t.id);
        if (rowless === undefined) {
          rowless = new Map();
          entities.rowless.set(t.id, rowless);
        }
        rowless.set(e.key, { match: e.match, act: e.act ?? actOrThrow(this.c, t, e), extras: e.extras });
        continue;
      }
      const entry: LedgerEntry | undefined =
        list === undefined
          ? this.ledger.entries(t.dev.table.id).get(e.key)
          : written[deleted + (list === inserts ? modified : 0) + at];
      if (entry === undefined) continue;
      if (plain(e.extras)) extras.delete(entry);
      else extras.set(entry, e.extras);
    }
  }
}

function actOrThrow(c: DeviceCtx, t: InfoTable, e: Current): TableAct {
  const act = actOf(c, t, e);
  if (act === undefined) throw new Error(`internal: a rowless entry of ${t.name} without its action`);
  return act;
}
