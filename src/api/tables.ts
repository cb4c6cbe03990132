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

import { compile } from "../control/compile.js";
import type { CompiledMember, CompiledSpec, CompiledTable } from "../control/compiled.js";
import { entryKey, type LedgerEntry, prioritised, type Writer } from "../control/ledger.js";
import { parseSpec } from "../description/load.js";
import { SpecError } from "../description/problems.js";
import type { RawMemberTables, RawTable } from "../description/raw.js";
import type { Allocation } from "../description/types.js";
import type { Engine } from "../engine/engine.js";
import { TABLE_ROLES, type TableError } from "../wasm/abi.js";
import type { EntryMatch, TableWrite } from "../wasm/tables.js";
import type { Description, Row, RowOf, TableRole } from "./description.js";
import { TableWriteError } from "./errors.js";

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

/** A member's table as installed, and the description's rows of it. */
interface Place {
  readonly network: string;
  readonly key: string;
  readonly role: TableRole;
  readonly table: CompiledTable;
  readonly written: string;
}

/** The rows of a table as the description writes them (a list, or the explicit form's rows). */
export function rowsOf<R>(t: RawTable<R> | undefined): readonly R[] {
  if (t === undefined) return [];
  return Array.isArray(t) ? (t as readonly R[]) : (t as { rows: readonly R[] }).rows;
}

/** Reads and writes an engine's tables by member and role. */
export class TableBook {
  readonly #engine: Engine;
  readonly #description: Description;
  readonly #file: string;
  readonly #allocation: Allocation | undefined;
  /** Per table id, per entry key, the rows the API wrote (and their text). */
  readonly #written = new Map<number, Map<string, { row: Row; text: string }>>();

  constructor(engine: Engine, description: Description, file: string, allocation: Allocation | undefined) {
    this.#engine = engine;
    this.#description = description;
    this.#file = file;
    this.#allocation = allocation;
  }

  /** The description in force (the ledger's: installed() would index every table's entries again after each write). */
  get #compiled(): CompiledSpec {
    return this.#engine.ledger.compiled;
  }

  /** The member "NETWORK:MEMBER" (or "MEMBER" when one network has it), or a TableWriteError saying what is there. */
  member(member: string, at: { table: string; index: number } = { table: "", index: 0 }): CompiledMember {
    const compiled = this.#compiled;
    const colon = member.indexOf(":");
    const named = compiled.members.filter((m) =>
      colon < 0
        ? m.key === member
        : compiled.networks[m.network]?.name === member.slice(0, colon) && m.key === member.slice(colon + 1),
    );
    const m = named[0];
    if (m !== undefined && named.length === 1) return m;
    const all = compiled.members.map((x) => `${compiled.networks[x.network]?.name}:${x.key}`);
    throw new TableWriteError(
      { member, ...at },
      "NoSuchMember",
      named.length > 1 ? `${named.length} networks have a member '${member}'` : `there is no member '${member}'`,
      named.length > 1 ? "write NETWORK:MEMBER" : `members: ${all.join(", ")}`,
    );
  }

  /** `member`'s `table`, or a TableWriteError naming what is not there (`index`: the write's). */
  place(member: string, table: string, index = 0): Place {
    const m = this.member(member, { table, index });
    const network = this.#compiled.networks[m.network]?.name ?? "";
    const t = (TABLE_ROLES as readonly string[]).includes(table) ? m.tables[table as TableRole] : undefined;
    if (t === undefined)
      throw new TableWriteError(
        { member, table, index },
        "NoSuchTable",
        `${network}:${m.key} has no ${table} table`,
        `its tables: ${Object.keys(m.tables).join(", ")}`,
      );
    return { network, key: m.key, role: table as TableRole, table: t, written: member };
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
    const places = batch.map((w, i) => this.place(w.member, w.table, i));
    const compiled = this.#checked(batch, places);
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

  /**
   * Each write's row compiled as the description compiles it: put after the rows of its table (of the table's kind),
   * the description loaded and compiled again. A row it refuses is a TableWriteError at that write.
   */
  #checked(
    batch: readonly RowWrite[],
    places: readonly Place[],
  ): { match: EntryMatch; action: NonNullable<TableWrite["action"]>; text: string }[] {
    const d = this.#description;
    const tables = new Map<string, Map<string, Record<string, unknown>>>();
    const slot: { net: string; key: string; role: TableRole; at: number }[] = [];
    const added = new Map<string, Row[]>();
    batch.forEach((w, i) => {
      const p = places[i] as Place;
      const id = `${p.network}\u0000${p.key}\u0000${p.role}`;
      const list = added.get(id) ?? [];
      added.set(id, list);
      const before = rowsOf(d.networks[p.network]?.tables?.[p.key]?.[p.role] as RawTable<Row>).length;
      slot.push({ net: p.network, key: p.key, role: p.role, at: before + list.length });
      list.push(w.row);
      const byMember = tables.get(p.network) ?? new Map<string, Record<string, unknown>>();
      tables.set(p.network, byMember);
      const own = byMember.get(p.key) ?? { ...(d.networks[p.network]?.tables?.[p.key] ?? {}) };
      byMember.set(p.key, own);
      const t = p.table;
      own[p.role] = {
        kind: t.kind,
        capacity: t.capacity + batch.length,
        rows: [...rowsOf(d.networks[p.network]?.tables?.[p.key]?.[p.role] as RawTable<Row>), ...list],
      };
    });
    let next: CompiledSpec;
    try {
      next = this.#compile(withTables(d, tables, true));
    } catch (err) {
      if (!(err instanceof SpecError)) throw err;
      // The whole description, for the errors it has: a row's are the same, and the rest are named too.
      try {
        next = this.#compile(withTables(d, tables, false));
      } catch (whole) {
        if (whole instanceof SpecError) throw this.#refused(whole, batch, slot);
        throw whole;
      }
    }
    return batch.map((w, i) => {
      const s = slot[i] as (typeof slot)[number];
      const m = next.members.find((x) => next.networks[x.network]?.name === s.net && x.key === s.key);
      const t = m?.tables[s.role];
      const row = t?.rows.find((r) => r.row === s.at);
      const installed = (places[i] as Place).table;
      if (t === undefined || row === undefined)
        throw new Error(`the compiled description lost ${s.net}:${s.key} ${s.role} row ${s.at}`);
      const fields = (x: CompiledTable): string => x.fields.map((f) => `${f.name} ${f.kind}`).join(", ");
      if (t.kind !== installed.kind || t.keyLen !== installed.keyLen || fields(t) !== fields(installed))
        throw new TableWriteError(
          { member: w.member, table: w.table, index: i },
          "BadRow",
          `the row needs a ${t.kind} table on ${fields(t) || "no field"}; ` +
            `the table is ${installed.kind} on ${fields(installed) || "no field"}`,
          "match on the fields the table's rows match on, as they do",
        );
      return { match: row.match, action: row.action, text: row.text };
    });
  }

  /** A description checked and compiled as a file is, its identifiers where the loaded description has them. */
  #compile(d: Description): CompiledSpec {
    const spec = parseSpec(JSON.stringify(d), this.#file, {
      ...(this.#allocation !== undefined ? { previous: this.#allocation } : {}),
      warn: () => {},
    });
    return compile(spec);
  }

  /** A SpecError of the description with the batch's rows in it, as the TableWriteError of the first write it names. */
  #refused(
    err: SpecError,
    batch: readonly RowWrite[],
    slot: readonly { net: string; key: string; role: TableRole; at: number }[],
  ): TableWriteError {
    for (const issue of err.errors) {
      const i = slot.findIndex((s) => {
        const prefix = `networks.${s.net}.tables.${s.key}.${s.role}`;
        return issue.path.startsWith(`${prefix}.rows[${s.at}]`) || issue.path.startsWith(`${prefix}[${s.at}]`);
      });
      const w = batch[i];
      if (w !== undefined)
        return new TableWriteError({ member: w.member, table: w.table, index: i }, "BadRow", issue.problem, issue.fix);
    }
    const first = err.errors[0];
    const w = batch[0];
    return new TableWriteError(
      { member: w?.member ?? "", table: w?.table ?? "", index: 0 },
      "BadRow",
      `${first?.path ?? ""}: ${first?.problem ?? err.message}`,
      first?.fix ?? "",
    );
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

/**
 * `d` with the tables of `changed` (network → member → its tables) in place. `alone`: every other member's tables left
 * out but its send table (whose named rows are the sessions other rows may name), which is what checking the changed
 * members' rows needs: their members, links and sessions, as loading the whole description would check them.
 */
function withTables(
  d: Description,
  changed: ReadonlyMap<string, ReadonlyMap<string, Record<string, unknown>>>,
  alone: boolean,
): Description {
  const networks = Object.entries(d.networks).map(([name, n]) => {
    const mine = changed.get(name) ?? new Map<string, Record<string, unknown>>();
    const others = Object.entries(n.tables ?? {})
      .filter(([member]) => !mine.has(member))
      .map(([member, t]): [string, RawMemberTables] => [
        member,
        alone ? (t.send === undefined ? {} : { send: t.send }) : t,
      ]);
    return [name, { ...n, tables: Object.fromEntries([...others, ...mine]) as Record<string, RawMemberTables> }];
  });
  return { networks: Object.fromEntries(networks) as Description["networks"] };
}
