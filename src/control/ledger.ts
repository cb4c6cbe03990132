// The entry ledger: the one record, beside the data plane's own tables, of
// what every table holds. Per table, each entry's match, action, who wrote it
// (the description, a P4Runtime controller, `strata serve --commands`, a
// program through the library) and where the data plane holds it. Every
// writer goes through it — the reconciler installing and converging to a
// description, the control commands, the P4Runtime server — and it writes
// the data plane (Tables): front end → ledger → wasm, one way. Every reader
// asks it: which description rows are in (the summary's row hits, the trace,
// the analysis), what a P4Runtime Read returns, what a reload diffs against.
//
// An entry is a description row while it has that row's match and action,
// whoever wrote it: a controller that writes a row the description has
// installs that row (its hits are the row's), and a reload keeps it.

import type { EntryAction, EntryMatch, TableLayout, TableWrite, Tables, WriteResult } from "../wasm/tables.js";
import type { CompiledSpec, CompiledTable } from "./compiled.js";

/** What is installed, as readers that name description rows take it. */
export interface Installed {
  readonly compiled: CompiledSpec;
  readonly tables: Tables;
  /** Entry index in the data plane of each compiled row (−1: not installed), by table id. */
  readonly entries: ReadonlyMap<number, readonly number[]>;
}

/** Who wrote an entry. */
export type Writer = "description" | "p4runtime" | "commands" | "api";

export interface LedgerEntry {
  readonly match: EntryMatch;
  readonly action: EntryAction;
  /** Who wrote it last (a reload that keeps it keeps who). */
  readonly by: Writer;
  /** Where the data plane holds it. */
  readonly entry: number;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
/** Bytes in hex ("" for none or empty); keys and action data are short. */
function hex(b: Uint8Array | undefined): string {
  if (b === undefined) return "";
  let s = "";
  for (let i = 0; i < b.length; i++) s += HEX[b[i] ?? 0];
  return s;
}

/** Whether a table of `kind` orders its entries by priority (P4Runtime's: ternary, range, optional). */
export const prioritised = (kind: string): boolean => kind === "ternary" || kind === "range" || kind === "optional";

/** Bytes as a string of char codes 0–255 (a key, not for people: cheaper than hex on every write). */
const chars = (b: Uint8Array | undefined): string =>
  b === undefined ? "-" : String.fromCharCode.apply(null, b as unknown as number[]);

/** What identifies an entry in its table: its key's value, mask and bounds, and its priority where the kind has one.
 * (Within a table every key vector has the table's key length, so the parts need no separator but the priority's.) */
export function entryKey(t: Pick<TableLayout, "kind">, m: EntryMatch): string {
  return `${chars(m.value)}${chars(m.mask)}${chars(m.lo)}${chars(m.hi)}|${prioritised(t.kind) ? m.priority : 0}`;
}

/** An action as one string: two entries run the same action when their strings are equal. */
export function actionKey(a: EntryAction): string {
  return `${a.name} ${a.count ?? 0} ${a.arg ?? 0} ${a.arg2 ?? 0} ${hex(a.data)}`;
}

/** Whether two actions are the same (what actionKey says, without making the strings). */
export function sameAction(a: EntryAction, b: EntryAction): boolean {
  if (a.name !== b.name || (a.count ?? 0) !== (b.count ?? 0) || (a.arg ?? 0) !== (b.arg ?? 0)) return false;
  if ((a.arg2 ?? 0) !== (b.arg2 ?? 0)) return false;
  const x = a.data ?? EMPTY_BYTES;
  const y = b.data ?? EMPTY_BYTES;
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}
const EMPTY_BYTES = new Uint8Array(0);

/** Writes the journal keeps (writtenSince): a reader further behind compares the tables instead. */
const JOURNAL_MAX = 1 << 16;

/** One entry written (put in, changed or deleted): its table and key, at the ledger's version after the write. */
export interface Written {
  readonly version: number;
  readonly table: number;
  readonly key: string;
}

export class Ledger {
  readonly tables: Tables;
  #compiled: CompiledSpec;
  /** Table id → entry key → entry. */
  readonly #held = new Map<number, Map<string, LedgerEntry>>();
  /** Bumped by every change: a reader that keeps something made from the ledger knows when it is old. */
  #version = 0;
  /** Per table id, the version at its last change. */
  readonly #changedAt = new Map<number, number>();
  #installed: Installed | undefined;
  #written: readonly (LedgerEntry | undefined)[] = [];
  /** The last writes, oldest first: what a reader that follows the tables write by write asks for (writtenSince). */
  #journal: Written[] = [];
  /** The version the journal goes back to: every write after it is in it. */
  #journalFrom = 0;

  constructor(tables: Tables, compiled: CompiledSpec) {
    this.tables = tables;
    this.#compiled = compiled;
  }

  /** The description in force: entries that are its rows are named by it. */
  get compiled(): CompiledSpec {
    return this.#compiled;
  }

  get version(): number {
    return this.#version;
  }

  /** The version at a table's last change (−1: none since the ledger began). */
  tableVersion(tableId: number): number {
    return this.#changedAt.get(tableId) ?? -1;
  }

  /** Creates an empty table in the data plane (held aside until a member points at it). */
  create(layout: TableLayout): void {
    this.tables.create(layout);
    this.#held.set(layout.id, new Map());
    this.#changed(layout.id);
    this.#breakJournal();
  }

  /** Frees a table and forgets its entries. */
  destroy(layout: TableLayout): void {
    this.tables.destroy(layout);
    this.#held.delete(layout.id);
    this.#changed(layout.id);
    this.#breakJournal();
  }

  /** Writes entries, all or none (the data plane's answer), and records them as `by`'s. */
  write(writes: readonly TableWrite[], by: Writer): WriteResult {
    const result = this.tables.write(writes);
    if (!result.ok || writes.length === 0) return result;
    let table = -1;
    let held: Map<string, LedgerEntry> | undefined;
    this.#written = writes.map((w, i) => {
      if (w.table.id !== table || held === undefined) {
        table = w.table.id;
        held = this.#held.get(table) ?? new Map<string, LedgerEntry>();
        this.#held.set(table, held);
        this.#changedAt.set(table, this.#version + 1);
      }
      const key = entryKey(w.table, w.match);
      this.#journal.push({ version: this.#version + 1, table, key });
      if (w.op === "delete" || w.action === undefined) {
        held.delete(key);
        return undefined;
      }
      const e: LedgerEntry = { match: w.match, action: w.action, by, entry: result.entries[i] ?? -1 };
      held.set(key, e);
      return e;
    });
    this.#changed();
    if (this.#journal.length > JOURNAL_MAX) {
      const dropped = this.#journal.splice(0, this.#journal.length - JOURNAL_MAX / 2);
      this.#journalFrom = dropped.at(-1)?.version ?? this.#journalFrom;
    }
    return result;
  }

  /**
   * The entries written since the ledger's `version` (a table, a key: put in, changed or deleted), oldest first; or
   * undefined when the journal no longer goes back that far, or a table was made, freed or the description changed
   * since (then compare the tables).
   */
  writtenSince(version: number): readonly Written[] | undefined {
    if (version < this.#journalFrom || version > this.#version) return undefined;
    let lo = 0;
    let hi = this.#journal.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#journal[mid]?.version ?? 0) <= version) lo = mid + 1;
      else hi = mid;
    }
    return this.#journal.slice(lo);
  }

  /** The entries the last write that went in recorded, one per write (undefined for a delete). */
  get written(): readonly (LedgerEntry | undefined)[] {
    return this.#written;
  }

  /** The entry of `table` with `match`, if it holds one. */
  get(table: Pick<TableLayout, "id" | "kind">, match: EntryMatch): LedgerEntry | undefined {
    return this.#held.get(table.id)?.get(entryKey(table, match));
  }

  /** A table's entries by key (empty for a table it does not have). */
  entries(tableId: number): ReadonlyMap<string, LedgerEntry> {
    return this.#held.get(tableId) ?? EMPTY;
  }

  /** From now on entries are named by `compiled`'s rows (a reconciliation's commit). */
  retable(compiled: CompiledSpec): void {
    this.#compiled = compiled;
    this.#changed();
    this.#breakJournal();
  }

  /** The description in force and, per row, the entry that is it (−1: none is). Made again after a change. */
  installed(): Installed {
    if (this.#installed === undefined) {
      const c = this.#compiled;
      const entries = new Map(c.tables.map((t) => [t.id, this.rowEntries(t)]));
      this.#installed = { compiled: c, tables: this.tables, entries };
    }
    return this.#installed;
  }

  /** Per row of `t`, the entry that has its match and action; −1 where none has. */
  rowEntries(t: CompiledTable): number[] {
    const held = this.entries(t.id);
    return t.rows.map((r) => {
      const e = held.get(entryKey(t, r.match));
      return e !== undefined && sameAction(e.action, r.action) ? e.entry : -1;
    });
  }

  #changed(tableId?: number): void {
    this.#version++;
    if (tableId !== undefined) this.#changedAt.set(tableId, this.#version);
    this.#installed = undefined;
  }

  /** A change the journal does not say (a table made or freed, a new description): readers before it compare. */
  #breakJournal(): void {
    this.#journal = [];
    this.#journalFrom = this.#version;
  }
}

const EMPTY: ReadonlyMap<string, LedgerEntry> = new Map();
