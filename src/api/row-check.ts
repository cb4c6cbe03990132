// A batch of row writes checked by the description's own checks, for any device: each write's member and table found
// in the description as compiled, and its row put after the rows of its table (with the table's kind) and the
// description loaded and compiled again, so that a row means through the API what it means in YAML. What is wrong is a
// TableWriteError naming the member, the table and the write's index. The emulation (./tables.ts) and the P4Runtime
// device (./p4runtime-device.ts) both write what this compiles.

import { compile } from "../control/compile.js";
import type { CompiledMember, CompiledSpec, CompiledTable } from "../control/compiled.js";
import { parseSpec } from "../description/load.js";
import { SpecError } from "../description/problems.js";
import type { RawMemberTables, RawTable } from "../description/raw.js";
import type { Allocation } from "../description/types.js";
import { TABLE_ROLES } from "../wasm/abi.js";
import type { EntryMatch, TableWrite } from "../wasm/tables.js";
import type { Description, Row, TableRole } from "./description.js";
import { TableWriteError } from "./errors.js";

/** A write of a batch as checked here (./tables.ts RowWrite). */
export interface Written {
  readonly member: string;
  readonly table: TableRole;
  readonly row: Row;
}

/** A member's table as installed, and the description's rows of it. */
export interface Place {
  readonly network: string;
  readonly key: string;
  readonly role: TableRole;
  readonly table: CompiledTable;
  readonly written: string;
}

/** Where a write's row went: its member's table, and its index among the table's rows. */
export interface Slot {
  readonly net: string;
  readonly key: string;
  readonly role: TableRole;
  readonly at: number;
}

/** A write's row as the description compiles it. */
export interface CheckedRow {
  readonly match: EntryMatch;
  readonly action: NonNullable<TableWrite["action"]>;
  readonly text: string;
}

/** The rows of a table as the description writes them (a list, or the explicit form's rows). */
export function rowsOf<R>(t: RawTable<R> | undefined): readonly R[] {
  if (t === undefined) return [];
  return Array.isArray(t) ? (t as readonly R[]) : (t as { rows: readonly R[] }).rows;
}

/** Checks batches of writes against a description: the members and tables they name, and their rows. */
export class RowChecker {
  readonly #description: Description;
  readonly #file: string;
  readonly #allocation: Allocation | undefined;
  readonly #installed: () => CompiledSpec;

  /** `installed`: the description in force (its members and tables, as a device holds them). */
  constructor(
    description: Description,
    file: string,
    allocation: Allocation | undefined,
    installed: () => CompiledSpec,
  ) {
    this.#description = description;
    this.#file = file;
    this.#allocation = allocation;
    this.#installed = installed;
  }

  get #compiled(): CompiledSpec {
    return this.#installed();
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

  /** The description's tables of the written members with the batch's rows after theirs; where each row went. */
  #placed(
    batch: readonly Written[],
    places: readonly Place[],
  ): { tables: Map<string, Map<string, Record<string, unknown>>>; slot: Slot[] } {
    const d = this.#description;
    const tables = new Map<string, Map<string, Record<string, unknown>>>();
    const slot: Slot[] = [];
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
    return { tables, slot };
  }

  /**
   * The whole description compiled with the batch's rows after the rows of their tables, and where each went (its
   * member's table and row index): what a device built from the description holds once the batch is written. Call
   * after checked(), which names what is wrong with a row.
   */
  compiledWith(batch: readonly Written[], places: readonly Place[]): { compiled: CompiledSpec; slot: readonly Slot[] } {
    const { tables, slot } = this.#placed(batch, places);
    return { compiled: this.#compile(withTables(this.#description, tables, false)), slot };
  }

  /**
   * Each write's row compiled as the description compiles it: put after the rows of its table (of the table's kind),
   * the description loaded and compiled again. A row it refuses is a TableWriteError at that write.
   */
  checked(batch: readonly Written[], places: readonly Place[]): CheckedRow[] {
    const d = this.#description;
    const { tables, slot } = this.#placed(batch, places);
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
  #refused(err: SpecError, batch: readonly Written[], slot: readonly Slot[]): TableWriteError {
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
