// A batch's rows checked and compiled at the cost of the rows, not of the description: each written row checked by
// the description's own checks (the schema, then ./tables.ts checkTables against its member's links and design, with
// the names other networks resolve, as the description's one load left them) and compiled into its installed table
// as the whole table would compile it. Only rows whose meaning is their member's alone are taken here: a description
// with intents (hand rows contradict or shadow them; an overlay's land in its underlay), layering and subduction rows
// (checked across networks), transmit and send rows (checked against each other) go to the whole check, and so does
// any row this finds wrong, so that the error said is the whole check's, word for word (test/api/quick-rows.test.ts
// holds both to the same answers).

import type { CompiledSpec, CompiledTable } from "../control/compiled.js";
import { compileAppended, type KeyUse, keyUse } from "../control/header-table.js";
import { readDocument, readQuickDocument } from "../description/document.js";
import { parseSpec, type TableContext } from "../description/load.js";
import type { SpecIssue } from "../description/problems.js";
import { Unplaced } from "../description/quick-places.js";
import type { NetworkContext } from "../description/context.js";
import type { RawMemberTables, RawTable } from "../description/raw.js";
import { SCHEMA_FILE } from "../description/schema.js";
import { checkTables } from "../description/tables.js";
import type { Allocation, RowSpec } from "../description/types.js";
import type { Description, Row, TableRole } from "./description.js";
import { type CheckedRow, type Place, rowsOf } from "./row-check.js";

/** The roles whose rows mean what they mean at their member alone (no layering, no rows of others to agree with). */
const OWN_ROLES: ReadonlySet<TableRole> = new Set(["acquire", "forward", "receive"]);

/** The keys of a network that hold no intent: a description with a network with another (routes, l2, overlays…) is
 * checked whole. */
const PLAIN_KEYS: ReadonlySet<string> = new Set(["header", "ttl", "members", "links", "tables", "nonlocal"]);

/** Work done, for tests that budget it: rows checked here, and loads of the whole description. */
export interface QuickWork {
  rows: number;
  loads: number;
}

/** A table written by a batch: where, and its written rows with their index in the batch. */
interface Touched {
  readonly place: Place;
  readonly rows: Row[];
  readonly writes: number[];
}

export class QuickRows {
  readonly #description: Description;
  readonly #file: string;
  readonly #allocation: Allocation | undefined;
  /** Per network, what its rows are checked against; null when the description cannot be read so (then never quick). */
  #contexts: Map<string, TableContext> | null | undefined;
  /** How each installed table's own rows use the key (WeakMap: a table replaced is a table forgotten). */
  readonly #uses = new WeakMap<CompiledTable, KeyUse>();
  readonly work: QuickWork = { rows: 0, loads: 0 };

  constructor(description: Description, file: string, allocation: Allocation | undefined) {
    this.#description = description;
    this.#file = file;
    this.#allocation = allocation;
  }

  /** Each write's row compiled, or undefined: the whole check is to say (a row it cannot take, or one wrong). */
  checked(
    batch: readonly { readonly row: Row }[],
    places: readonly Place[],
    installed: CompiledSpec,
  ): CheckedRow[] | undefined {
    const touched = this.#touched(batch, places, installed);
    const contexts = touched === undefined ? undefined : this.#tableContexts();
    if (touched === undefined || contexts === undefined) return undefined;
    const specs = this.#rowSpecs(touched, contexts);
    if (specs === undefined) return undefined;
    const out: CheckedRow[] = [];
    for (const [i, t] of touched.entries()) {
      const rows = this.#compiled(t, specs[i] as RowSpec[], installed);
      if (rows === undefined) return undefined;
      t.writes.forEach((w, k) => (out[w] = rows[k] as CheckedRow));
    }
    this.work.rows += batch.length;
    return out;
  }

  /** The batch's tables and their rows; undefined when a write is not one to check here. */
  #touched(
    batch: readonly { readonly row: Row }[],
    places: readonly Place[],
    installed: CompiledSpec,
  ): Touched[] | undefined {
    if (installed.networks.some((n) => n.spec.links.some((l) => l.shared !== undefined))) return undefined;
    // Intents anywhere (an overlay's rows land in its underlay's tables) put rows beside the written ones.
    const networks = Object.values(this.#description.networks);
    if (networks.some((n) => Object.keys(n).some((k) => !PLAIN_KEYS.has(k)))) return undefined;
    const byTable = new Map<number, Touched>();
    for (const [i, w] of batch.entries()) {
      const p = places[i];
      const raw = this.#description.networks[p?.network ?? ""];
      if (p === undefined || raw === undefined || !OWN_ROLES.has(p.role)) return undefined;
      const t = byTable.get(p.table.id) ?? { place: p, rows: [], writes: [] };
      byTable.set(p.table.id, t);
      t.rows.push(w.row);
      t.writes.push(i);
    }
    return [...byTable.values()];
  }

  /** What each network's rows are checked against, from one load of the description (its other tables left out). */
  #tableContexts(): Map<string, TableContext> | undefined {
    if (this.#contexts === undefined) {
      const contexts = new Map<string, TableContext>();
      const networks = Object.entries(this.#description.networks).map(([name, n]) => {
        const sends = Object.entries(n.tables ?? {}).map(([m, t]) => [m, t.send === undefined ? {} : { send: t.send }]);
        return [name, { ...n, tables: Object.fromEntries(sends) as Record<string, RawMemberTables> }];
      });
      this.work.loads++;
      try {
        parseSpec(JSON.stringify({ networks: Object.fromEntries(networks) }), this.#file, {
          ...(this.#allocation !== undefined ? { previous: this.#allocation } : {}),
          warn: () => {},
          tableContext: (c) => contexts.set(c.network, c),
        });
        this.#contexts = contexts;
      } catch {
        this.#contexts = null;
      }
    }
    return this.#contexts ?? undefined;
  }

  /**
   * The written rows as the description's checks read them (per touched table, in order): a document of the written
   * members' tables holding only the batch's rows, checked by the schema and by checkTables as loading the whole would
   * check them; undefined when a check finds anything wrong.
   */
  #rowSpecs(touched: readonly Touched[], contexts: ReadonlyMap<string, TableContext>): RowSpec[][] | undefined {
    const doc: Record<string, { header: string; members: Record<string, unknown>; tables: Record<string, object> }> =
      {};
    for (const t of touched) {
      const { network, key, role, table } = t.place;
      const raw = this.#description.networks[network];
      const net = (doc[network] ??= { header: raw?.header ?? "", members: {}, tables: {} });
      net.members[key] = raw?.members[key];
      const own = (net.tables[key] ??= {}) as Record<string, unknown>;
      own[role] = { kind: table.kind, capacity: table.capacity + t.rows.length, rows: t.rows };
    }
    const text = JSON.stringify({ networks: doc });
    let read;
    try {
      read = readQuickDocument(text, this.#file, SCHEMA_FILE) ?? readDocument(text, this.#file, SCHEMA_FILE, EMPTY);
    } catch (err) {
      if (err instanceof Unplaced) return undefined;
      throw err;
    }
    if (read.schemaErrors.length > 0 || read.problems.count > 0) return undefined;
    const specs: RowSpec[][] = [];
    for (const [network, n] of Object.entries(doc)) {
      const c = contexts.get(network);
      if (c === undefined) return undefined;
      const ctx: NetworkContext = {
        problems: read.problems,
        network,
        path: ["networks", network],
        design: c.design,
        value: (at, v) => (typeof v === "number" ? (read.source.sourceText(at) ?? v) : v),
        schemaError: () => false,
      };
      const tables = checkTables(ctx, c.design, n.tables as Record<string, RawMemberTables>, c.topology, c.elsewhere);
      for (const t of touched)
        if (t.place.network === network)
          specs[touched.indexOf(t)] = [...(tables.get(t.place.key)?.[t.place.role]?.rows ?? [])];
    }
    if (read.problems.count > 0) return undefined;
    return specs;
  }

  /** A touched table's rows compiled into it, after the description's rows; undefined when the whole must say. */
  #compiled(t: Touched, specs: readonly RowSpec[], installed: CompiledSpec): CheckedRow[] | undefined {
    const table = t.place.table;
    if (specs.length !== t.rows.length) return undefined;
    for (const r of specs)
      if (r.in === "shared" || r.action.kind === "link" || r.action.kind.startsWith("shared")) return undefined;
    const layout = installed.networks[installed.members[table.member]?.network ?? -1]?.layout;
    if (layout === undefined || table.spec === undefined) return undefined;
    let before = this.#uses.get(table);
    if (before === undefined) this.#uses.set(table, (before = keyUse(layout, table.spec.rows)));
    const { network, key, role } = t.place;
    const first = rowsOf(this.#description.networks[network]?.tables?.[key]?.[role] as RawTable<Row>).length;
    const issues: SpecIssue[] = [];
    let elsewhere = false;
    const across = (): number => {
      elsewhere = true;
      return -1;
    };
    const rows = compileAppended(
      table,
      layout,
      before,
      specs,
      { first, n: first + specs.length },
      across,
      across,
      issues,
    );
    if (rows === undefined || issues.length > 0 || elsewhere) return undefined;
    return rows.map((r) => ({ match: r.match, action: r.action, text: r.text }));
  }
}

const EMPTY = { problem: "the batch is empty", fix: "" };
