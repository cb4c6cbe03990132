// Tables read and written by member and role, in the description's own row
// notation. A batch of writes is checked by the description's own checks: the
// rows are put in their tables of the description (after the rows there, with
// the table's kind) and the whole is loaded and compiled as a file is, so a row
// means through the API what it means in YAML; its entries are then written
// through the engine's ledger as one all-or-nothing table write. A row the
// checks refuse, or the data plane refuses, is a TableWriteError naming the
// member, the table and the write's index; nothing of its batch is applied.
//
// In a ternary, range or optional table (rows ranked by priority) a written row
// ranks above every row the table holds, the first of a batch highest, as a
// later, higher-priority entry does in P4Runtime.

import type { CompiledMember, CompiledTable } from "../control/compiled.js";
import { entryKey, type LedgerEntry, prioritised, type Writer } from "../control/ledger.js";
import type { RawTable } from "../description/raw.js";
import type { Allocation } from "../description/types.js";
import type { Engine } from "../engine/engine.js";
import type { TableError } from "../wasm/abi.js";
import type { EntryMatch, TableWrite } from "../wasm/tables.js";
import type { Description, Row, RowOf, TableRole } from "./description.js";
import { TableWriteError } from "./errors.js";
import { QuickRows, type QuickWork } from "./quick-rows.js";
import { type Place, RowChecker, rowsOf } from "./row-check.js";

export { rowsOf } from "./row-check.js";

/** One write of a batch: a row of `member`'s `table`, in the description's notation. */
export type RowWrite = {
  [R in TableRole]: {
    /** insert: a new entry; modify: the entry with the row's match takes the row's action; delete: the entry goes. */
    readonly op: "insert" | "modify" | "delete";
    /** "NETWORK:MEMBER" (the network may be left out when one network has the member). */
    readonly member: string;
    readonly table: R;
    readonly row: RowOf[R];
  };
}[TableRole];

/** An entry of a table, read back. */
export interface TableEntry {
  /** The row in the description's notation: the description's or the API's; undefined for another writer's. */
  readonly row: Row | undefined;
  /** The row as a person reads it ("dst 10.0.2.0/24 → out 2"). */
  readonly text: string;
  /** The description's row index, when the entry is one of its rows. */
  readonly descriptionRow?: number;
  readonly by: Writer;
  /** Packets that hit it since the emulation started counting (its hit counter in the data plane). */
  readonly hits: number;
  /** Ternary, range, optional tables: higher wins; 0 for the others. */
  readonly priority: number;
}

/** Reads and writes an engine's tables by member and role. */
export class TableBook {
  readonly #engine: Engine;
  readonly #description: Description;
  readonly #checker: RowChecker;
  readonly #quick: QuickRows;
  /** Per table id, per entry key, the rows the API wrote (and their text). */
  readonly #written = new Map<number, Map<string, { row: Row; text: string }>>();

  constructor(engine: Engine, description: Description, file: string, allocation: Allocation | undefined) {
    this.#engine = engine;
    this.#description = description;
    // The description in force: the ledger's (installed() would index every table's entries again after each write).
    this.#checker = new RowChecker(description, file, allocation, () => engine.ledger.compiled);
    this.#quick = new QuickRows(description, file, allocation);
  }

  /** The work the quick check did (rows it took, loads of the description): for tests that budget it. */
  get quickWork(): Readonly<QuickWork> {
    return this.#quick.work;
  }

  /** The member "NETWORK:MEMBER" (or "MEMBER" when one network has it), or a TableWriteError saying what is there. */
  member(member: string): CompiledMember {
    return this.#checker.member(member);
  }

  /** `member`'s `table`, or a TableWriteError naming what is not there. */
  place(member: string, table: string): Place {
    return this.#checker.place(member, table);
  }

  /** The entries of `member`'s `table`, highest priority first, then as the data plane holds them. */
  read(member: string, table: TableRole): TableEntry[] {
    const p = this.place(member, table);
    const installed = this.#engine.installed;
    const rowAt = new Map<number, number>();
    (installed.entries.get(p.table.id) ?? []).forEach((entry, i) => {
      if (entry >= 0) rowAt.set(entry, i);
    });
    const hits = installed.tables.hits(p.table);
    const described = rowsOf(this.#description.networks[p.network]?.tables?.[p.key]?.[table] as RawTable<Row>);
    const written = this.#written.get(p.table.id);
    const out: TableEntry[] = [];
    for (const [key, e] of this.#engine.ledger.entries(p.table.id)) {
      const i = rowAt.get(e.entry);
      const compiledRow = i === undefined ? undefined : p.table.rows[i];
      const api = written?.get(key);
      const base = { by: e.by, hits: hits[e.entry] ?? 0, priority: prioritised(p.table.kind) ? e.match.priority : 0 };
      if (compiledRow !== undefined && compiledRow.row >= 0)
        out.push({ row: described[compiledRow.row], text: compiledRow.text, descriptionRow: compiledRow.row, ...base });
      else out.push({ row: api?.row, text: api?.text ?? `entry ${e.entry}`, ...base });
    }
    return out.sort((a, b) => b.priority - a.priority);
  }

  /** Applies `batch` whole, or throws TableWriteError and applies none of it. Only between batches. */
  write(batch: readonly RowWrite[]): void {
    const places = batch.map((w, i) => this.#checker.place(w.member, w.table, i));
    // Rows of their member's alone are checked at their own cost; the rest, and a row found wrong, by the whole check.
    const compiled =
      this.#quick.checked(batch, places, this.#engine.ledger.compiled) ?? this.#checker.checked(batch, places);
    const writes: TableWrite[] = [];
    const top = new Map<number, number>();
    const keys: string[] = [];
    batch.forEach((w, i) => {
      const p = places[i] as Place;
      const c = compiled[i] as { match: EntryMatch; action: TableWrite["action"] & object; text: string };
      const t = p.table;
      const at = { member: w.member, table: w.table, index: i };
      let match = c.match;
      if (prioritised(t.kind)) {
        if (w.op === "insert") {
          const next =
            top.get(t.id) ??
            this.#topPriority(t) +
              batch.filter((x, j) => j >= i && places[j]?.table.id === t.id && x.op === "insert").length;
          top.set(t.id, next - 1);
          match = { ...match, priority: next };
        } else {
          const held = this.#sameMatch(t, match);
          if (held === undefined)
            throw new TableWriteError(
              at,
              "NotFound",
              `no entry of the table has the row's match (${c.text})`,
              "insert it first",
            );
          match = held.match;
        }
      }
      keys.push(entryKey(t, match));
      writes.push(
        w.op === "delete" ? { op: "delete", table: t, match } : { op: w.op, table: t, match, action: c.action },
      );
    });
    const result = this.#engine.write(writes, "api");
    if (!result.ok) throw dataPlaneRefused(result, batch, places, compiled);
    batch.forEach((w, i) => {
      const id = (places[i] as Place).table.id;
      const mine = this.#written.get(id) ?? new Map<string, { row: Row; text: string }>();
      this.#written.set(id, mine);
      if (w.op === "delete") mine.delete(keys[i] ?? "");
      else mine.set(keys[i] ?? "", { row: w.row, text: compiled[i]?.text ?? "" });
    });
  }

  /** The highest priority a table's entries hold (0 for none). */
  #topPriority(t: CompiledTable): number {
    let top = 0;
    for (const e of this.#engine.ledger.entries(t.id).values()) top = Math.max(top, e.match.priority);
    return top;
  }

  /** The entry of `t` with `m`'s key, whatever its priority. */
  #sameMatch(t: CompiledTable, m: EntryMatch): LedgerEntry | undefined {
    const key = entryKey(t, { ...m, priority: 0 });
    for (const e of this.#engine.ledger.entries(t.id).values())
      if (entryKey(t, { ...e.match, priority: 0 }) === key) return e;
    return undefined;
  }
}

/** The data plane's refusal of a batch's table write, as the TableWriteError of the write it names. */
function dataPlaneRefused(
  result: { readonly index: number; readonly error: TableError },
  batch: readonly RowWrite[],
  places: readonly Place[],
  compiled: readonly { readonly text: string }[],
): TableWriteError {
  const w = batch[result.index];
  const t = places[result.index]?.table;
  const said: Partial<Record<TableError, [problem: string, fix: string]>> = {
    NotFound: ["no entry of the table has the row's match", "insert it first"],
    DuplicateEntry: ["an entry with the row's match is in the table already", "modify it, or delete it first"],
    TableFull: [
      `the table is full (its capacity: ${t?.capacity ?? 0} entries)`,
      "give the table a larger capacity in the description: { capacity: N, rows: [ … ] }",
    ],
  };
  const [problem, fix] = said[result.error] ?? [result.error, "see the data plane's table errors in src/wasm/abi.ts"];
  return new TableWriteError(
    { member: w?.member ?? "", table: w?.table ?? "", index: result.index },
    result.error === "ok" || result.error === "NoSuchTable" ? "NoSuchTable" : result.error,
    `${problem} (${compiled[result.index]?.text ?? ""})`,
    fix,
  );
}
