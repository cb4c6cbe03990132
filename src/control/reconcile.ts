// Desired state and what is installed (SwarmKit's orchestration, seeds 001/002):
// a new description is the desired state; the reconciler compiles nothing
// itself, it compares a compiled description with what the data plane holds
// and converges to it in one atomic step, between packet batches.
//
//   - Tables whose member, role and layout stay: a diff of rows (delete, modify,
//     insert) in ONE command buffer, which the data plane applies all-or-nothing.
//   - Tables that appear, or whose layout (kind, fields, capacity) changed: built
//     aside under fresh ids, filled, then swapped in with memberSetTable.
//   - A topology that changed (members, links, machines, endpoints): every table
//     built aside, then the topology is replaced in one series of calls that
//     cannot fail. Counters of members and links start again from zero. The
//     same topology written in another order is not a change: it is numbered
//     as the one running (./numbering.ts), by identity, not by position.
//
// Anything refused (a row the data plane will not hold, an endpoint the new
// description lacks) throws a SpecError before the first thing that packets
// could see changed, and what was built aside is freed: the installed state
// is exactly what it was. Members and links taken down stay down across
// changes, by name, until they are brought up.

import { SpecError, SpecIssue } from "../description/problems.js";
import type { SourceRef, Spec } from "../description/types.js";
import { UsageError } from "../errors.js";
import { TABLE_ROLES, type TableRole } from "../wasm/abi.js";
import type { DataPlane } from "../wasm/module.js";
import type { TableLayout, TableWrite } from "../wasm/tables.js";
import type { CompiledMember, CompiledSpec, CompiledTable } from "./compiled.js";
import { type ResolvedEndpoint, resolveEndpoint } from "./endpoints.js";
import { type Installed, installLedger, installTopology, rowError } from "./install.js";
import { entryKey, type Ledger, type LedgerEntry, sameAction } from "./ledger.js";
import { keepNumbering } from "./numbering.js";
import { type Resolved, resolveTarget, type Target } from "./targets.js";
import { topologyChanges } from "./topology-changes.js";
import { compile } from "./compile.js";
import { Rerouter, type Rerouted } from "../intents/reroute.js";
import { compileHeaderTable } from "./header-table.js";

export { type Resolved, resolveTarget, type Target } from "./targets.js";
export { topologyChanges } from "./topology-changes.js";

/** What one reconciliation did. */
export interface Change {
  /** Rows written into tables that stayed (one atomic batch). */
  readonly inserted: number;
  readonly modified: number;
  readonly deleted: number;
  /** Tables built aside and swapped in (new, or a layout that changed), and tables taken away. */
  readonly tablesBuilt: number;
  readonly tablesRemoved: number;
  /** The topology changed: everything was built aside and swapped in (counters restart). */
  readonly rebuilt: boolean;
  /** What changed in the topology, in words ("member ip.h3 added"); empty when it stayed. */
  readonly topology: readonly string[];
}

/** Rows written: what a reroute after a link or member went down or came up wrote (only the rows that changed). */
export interface RowWrites {
  readonly inserted: number;
  readonly modified: number;
  readonly deleted: number;
}

/** A change that changed no table (a link or member down or up). */
export const EMPTY_CHANGE: Change = {
  inserted: 0,
  modified: 0,
  deleted: 0,
  tablesBuilt: 0,
  tablesRemoved: 0,
  rebuilt: false,
  topology: [],
};

/** What a reconciliation does with each table: `next` renumbered, tables built aside (under the ids `taken`), kept
 * (old and new rows of one table), and removed. */
interface Fates {
  readonly remapped: CompiledSpec;
  readonly aside: readonly CompiledTable[];
  readonly kept: readonly { readonly old: CompiledTable; readonly next: CompiledTable }[];
  readonly taken: readonly number[];
  readonly removed: readonly CompiledTable[];
}

export class Reconciler {
  readonly #dp: DataPlane;
  readonly #ledger: Ledger;
  readonly #endpointTexts: readonly string[];
  #endpoints: readonly ResolvedEndpoint[];
  /** Table ids free for the next table built aside, and the next never used. */
  readonly #freeIds: number[] = [];
  #nextId: number;
  readonly #downLinks = new Set<string>();
  readonly #downMembers = new Set<string>();
  /** The routes intents' state, of the description installed (made again when another is). */
  #rerouter: Rerouter | undefined;
  /**
   * Per table id, the ledger's version of the table when it last held every row of the description installed (just
   * written, or diffed): a table whose next rows are the very rows installed, and whose version has not moved since,
   * has nothing to write, and is not diffed again. A reload that compiled one member again (./reload.ts keeps the
   * others' rows) then costs that member's tables, not every table's.
   */
  readonly #intact = new Map<number, number>();
  /** Work done, for tests that budget it: tables whose rows were compared with what they hold. */
  readonly work = { compared: 0 };

  private constructor(
    dp: DataPlane,
    ledger: Ledger,
    endpointTexts: readonly string[],
    endpoints: readonly ResolvedEndpoint[],
  ) {
    this.#dp = dp;
    this.#ledger = ledger;
    this.#endpointTexts = endpointTexts;
    this.#endpoints = endpoints;
    this.#nextId = Math.max(-1, ...ledger.compiled.tables.map((t) => t.id)) + 1;
  }

  /**
   * Installs `compiled` into a fresh data plane with input endpoints written as on the
   * command line (`lan:h1.1`); a UsageError for an endpoint it lacks, a SpecIssue for a row
   * the data plane refuses. With `empty`, every table starts empty (a controller installs the rows).
   */
  static install(
    dp: DataPlane,
    compiled: CompiledSpec,
    endpoints: readonly string[] = [],
    options: { readonly empty?: boolean } = {},
  ): Reconciler {
    const resolved = endpoints.map((e) => resolveEndpoint(compiled, e));
    const r = new Reconciler(dp, installLedger(dp, compiled, resolved, options), endpoints, resolved);
    if (options.empty !== true) r.#holdsAll(r.#ledger.compiled.tables);
    return r;
  }

  /** `tables` hold every row of theirs now. */
  #holdsAll(tables: readonly CompiledTable[]): void {
    for (const t of tables) this.#intact.set(t.id, this.#ledger.tableVersion(t.id));
  }

  /** Whether `next` would write nothing into the table `old` (the same rows, and the table not written since it held
   * them all). */
  #unchanged(old: CompiledTable, next: CompiledTable): boolean {
    return old.rows === next.rows && this.#intact.get(old.id) === this.#ledger.tableVersion(old.id);
  }

  /** What the tables hold, every writer's entries: what apply() diffs against. */
  get ledger(): Ledger {
    return this.#ledger;
  }

  /** What is installed: the compiled description with the table ids the data plane holds, and each row's entry. */
  current(): Installed {
    return this.#ledger.installed();
  }

  /** The input endpoints, resolved against the description installed now. */
  get endpoints(): readonly ResolvedEndpoint[] {
    return this.#endpoints;
  }

  get downLinks(): ReadonlySet<string> {
    return this.#downLinks;
  }
  get downMembers(): ReadonlySet<string> {
    return this.#downMembers;
  }

  /**
   * Converges to `next`: all of it, or (SpecError) none of it. Call only between batches:
   * packets already processed followed the tables before, every later one follows `next`.
   */
  apply(given: CompiledSpec, options: { readonly rebuild?: boolean } = {}): Change {
    const before = this.#ledger.compiled;
    // The same topology written in another order keeps the numbering running: only tables change.
    const next = keepNumbering(before, given);
    const endpoints = this.#resolveEndpoints(next);
    const topology = topologyChanges(before, next, this.#endpoints, endpoints);
    const rebuild = topology.length > 0;
    if (rebuild && options.rebuild === false) {
      throw new SpecError([
        new SpecIssue(
          whole(next.spec.file),
          `this change needs another topology ` +
            `(${topology.slice(0, 3).join(", ")}${topology.length > 3 ? ", …" : ""}), and here only tables may change`,
          "change rows and tables only; members, links and networks stay as they were started",
        ),
      ]);
    }
    const plan = this.#fates(before, next, rebuild);
    const counts = this.#build(plan, rebuild);
    // Commit: nothing below can be refused.
    const x = this.#dp.exports;
    const remapped = plan.remapped;
    if (rebuild) installTopology(this.#dp, remapped, endpoints);
    else {
      for (const m of remapped.members) {
        for (const role of TABLE_ROLES) {
          const was = before.members[m.index]?.tables[role];
          const now = m.tables[role];
          if (was?.id !== now?.id)
            x.memberSetTable(m.index, TABLE_ROLES.indexOf(role), now === undefined ? -1 : now.id);
        }
      }
    }
    for (const t of plan.removed) {
      this.#intact.delete(t.id);
      this.#ledger.destroy(t);
      this.#freeIds.push(t.id);
    }
    this.#freeIds.sort((a, b) => a - b);
    x.setMaxFanout(remapped.maxFanout);
    this.#ledger.retable(remapped);
    this.#endpoints = endpoints;
    this.#applyDown();
    const built = { tablesBuilt: plan.aside.length, tablesRemoved: plan.removed.length };
    return { ...counts, ...built, rebuilt: rebuild, topology };
  }

  /** Each table's fate and id (kept, or built aside under a fresh id; the old ones not kept are removed); nothing is
   * written yet. */
  #fates(before: CompiledSpec, next: CompiledSpec, rebuild: boolean): Fates {
    const oldTables = new Map(before.tables.map((t) => [tableKey(before, t), t]));
    const ids = new Map<CompiledTable, number>();
    const aside: CompiledTable[] = [];
    const kept: { old: CompiledTable; next: CompiledTable }[] = [];
    const taken: number[] = [];
    for (const t of next.tables) {
      const old = rebuild ? undefined : oldTables.get(tableKey(next, t));
      if (old !== undefined && sameLayout(old, t)) {
        ids.set(t, old.id);
        kept.push({ old, next: t });
      } else {
        const id = this.#freeIds.length > 0 ? (this.#freeIds.shift() ?? this.#nextId++) : this.#nextId++;
        taken.push(id);
        ids.set(t, id);
        aside.push(t);
      }
    }
    const remapped = withIds(next, ids);
    const keptIds = new Set(kept.map((k) => k.old.id));
    const position = new Map(next.tables.map((t, i) => [t, i]));
    const at = (t: CompiledTable): CompiledTable => remapped.tables[position.get(t) ?? -1] ?? t;
    return {
      remapped,
      aside: aside.map(at),
      kept: kept.map((k) => ({ old: k.old, next: at(k.next) })),
      taken,
      removed: before.tables.filter((t) => !keptIds.has(t.id)),
    };
  }

  /** The tables built aside and the rows of those kept written, all or (thrown) none: what was built is freed. */
  #build(plan: Fates, rebuild: boolean): { inserted: number; modified: number; deleted: number } {
    const created: TableLayout[] = [];
    // Tables whose rows are those installed, untouched since, have nothing to write or check.
    const changed = plan.kept.filter((k) => !this.#unchanged(k.old, k.next));
    try {
      // Duplicate rows are refused the way a fresh install refuses them (the diff alone would not see them).
      for (const t of plan.aside) duplicates(t);
      for (const k of changed) if (k.old.rows !== k.next.rows) duplicates(k.next);
      for (const r of plan.aside) {
        this.#ledger.create(r);
        created.push(r);
        const result = this.#ledger.write(
          r.rows.map((row) => ({ op: "insert" as const, table: r, match: row.match, action: row.action })),
          "description",
        );
        if (!result.ok) throw new SpecError([rowError(r, result.index, result.error)]);
      }
      this.#holdsAll(plan.aside);
      return rebuild ? { inserted: 0, modified: 0, deleted: 0 } : this.#writeDiff(changed);
    } catch (err) {
      for (const t of created) this.#ledger.destroy(t);
      this.#freeIds.push(...plan.taken);
      this.#freeIds.sort((a, b) => a - b);
      throw err;
    }
  }

  /** Takes a link, member or machine down (or up), by name; a UsageError when the description installed now has no such
   * thing. */
  setDown(target: Target, down: boolean, retabled?: () => void): Resolved & { readonly rerouted?: RowWrites } {
    const found = resolveTarget(this.#ledger.compiled, target);
    if ("problem" in found) throw new UsageError(`${found.problem} (${found.fix})`);
    for (const l of found.links) down ? this.#downLinks.add(l) : this.#downLinks.delete(l);
    for (const m of found.members) down ? this.#downMembers.add(m) : this.#downMembers.delete(m);
    this.#applyDown();
    // Routes an intent made go round what is down: the rows that change, and only those, are written.
    if (this.#rerouter?.spec !== this.#ledger.compiled.spec) this.#rerouter = Rerouter.of(this.#ledger.compiled.spec);
    if (this.#rerouter === undefined) return found;
    const { spec, changed } = this.#rerouter.update(this.#downLinks, this.#downMembers);
    if (changed.length === 0) return { ...found, rerouted: { inserted: 0, modified: 0, deleted: 0 } };
    const patched = this.#withForward(spec, changed);
    // Routes moved: `retabled` (the engine's trace and listeners) follows the new rows.
    if (patched === undefined) {
      const { inserted, modified, deleted } = this.apply(compile(spec), { rebuild: false });
      retabled?.();
      return { ...found, rerouted: { inserted, modified, deleted } };
    }
    const written = this.#writeDiff(patched.pairs);
    this.#ledger.retable(patched.next);
    retabled?.();
    return { ...found, rerouted: written };
  }

  /**
   * The installed description with the members' forward tables `changed` compiled again in place (same ids), and the
   * pairs to diff; undefined when one cannot be (a table it lacks, or another layout: then the whole is reconciled).
   */
  #withForward(
    spec: Spec,
    changed: readonly Rerouted[],
  ): { next: CompiledSpec; pairs: { old: CompiledTable; next: CompiledTable }[] } | undefined {
    const c = this.#ledger.compiled;
    const networks = c.networks.map((n, i) => {
      const now = spec.networks[i];
      return now === undefined || now === n.spec ? n : { ...n, spec: now };
    });
    const byName = new Map(c.members.map((m) => [m.qualified, m]));
    const position = new Map(c.tables.map((t, i) => [t, i]));
    const members = [...c.members];
    const tables = [...c.tables];
    const pairs: { old: CompiledTable; next: CompiledTable }[] = [];
    const problems: SpecIssue[] = [];
    for (const r of changed) {
      const m = byName.get(`${r.network}.${r.member}`);
      const old = m?.tables.forward;
      const net = m === undefined ? undefined : networks[m.network];
      const at = old === undefined ? undefined : position.get(old);
      if (m === undefined || old === undefined || net === undefined || at === undefined) return undefined;
      const next = compileHeaderTable(
        old.id,
        m.index,
        net,
        r.forward,
        () => -1,
        () => -1,
        problems,
      );
      if (problems.length > 0) throw new SpecError(problems);
      if (!sameLayout(old, next)) return undefined;
      members[m.index] = { ...m, tables: { ...m.tables, forward: next } };
      tables[at] = next;
      pairs.push({ old, next });
    }
    return { next: { ...c, spec, networks, members, tables }, pairs };
  }

  /** Writes the down flags of every link and member of the installed description. */
  #applyDown(): void {
    const x = this.#dp.exports;
    const c = this.#ledger.compiled;
    for (const l of c.links) x.linkSetDown(l.index, this.#downLinks.has(l.qualified) ? 1 : 0);
    for (const m of c.members) x.memberSetDown(m.index, this.#downMembers.has(m.qualified) ? 1 : 0);
  }

  #resolveEndpoints(next: CompiledSpec): ResolvedEndpoint[] {
    return this.#endpointTexts.map((text, k) => {
      const at = whole(next.spec.file);
      let e: ResolvedEndpoint;
      try {
        e = resolveEndpoint(next, text);
      } catch (err) {
        if (!(err instanceof UsageError)) throw err;
        throw new SpecError([
          new SpecIssue(
            at,
            `the input endpoint ${text} is not in this description: ${err.message}`,
            "keep every endpoint captures are injected at",
          ),
        ]);
      }
      const was = this.#endpoints[k];
      if (was !== undefined && (was.kind !== e.kind || was.network.spec.design.id !== e.network.spec.design.id)) {
        throw new SpecError([
          new SpecIssue(
            at,
            `the input endpoint ${text} would take ${e.network.spec.design.name} packets (${e.kind}) instead ` +
              `of ${was.network.spec.design.name} (${was.kind})`,
            "keep the network's header design and the endpoint's kind",
          ),
        ]);
      }
      return e;
    });
  }

  /**
   * One command buffer for every row that changed in the tables that stay, diffed against the
   * ledger: the entries that are the old description's rows are kept, modified or deleted; the
   * other writers' entries are kept as they are (a new row with the match of one is refused, as
   * the data plane refuses a duplicate).
   */
  #writeDiff(pairs: readonly { old: CompiledTable; next: CompiledTable }[]): {
    inserted: number;
    modified: number;
    deleted: number;
  } {
    const deletes: TableWrite[] = [];
    const modifies: TableWrite[] = [];
    const inserts: TableWrite[] = [];
    /** Per insert: its table and row (to name it if refused). */
    const insertedAt: { table: CompiledTable; row: number }[] = [];
    this.work.compared += pairs.length;
    for (const { old, next } of pairs) {
      const held = this.#ledger.entries(old.id);
      // The old description's rows that are in (another writer may have taken some out).
      const described = new Map<string, LedgerEntry>();
      for (const r of old.rows) {
        const key = entryKey(old, r.match);
        const e = held.get(key);
        if (e !== undefined && sameAction(e.action, r.action)) described.set(key, e);
      }
      next.rows.forEach((r, k) => {
        const key = entryKey(next, r.match);
        const was = described.get(key);
        if (was === undefined) {
          inserts.push({ op: "insert", table: next, match: r.match, action: r.action });
          insertedAt.push({ table: next, row: k });
          return;
        }
        described.delete(key);
        if (!sameAction(was.action, r.action))
          modifies.push({ op: "modify", table: next, match: r.match, action: r.action });
      });
      for (const e of described.values()) deletes.push({ op: "delete", table: old, match: e.match });
    }
    const writes = [...deletes, ...modifies, ...inserts];
    const result = writes.length === 0 ? undefined : this.#ledger.write(writes, "description");
    if (result !== undefined && !result.ok) {
      const at = insertedAt[result.index - deletes.length - modifies.length];
      if (at !== undefined) throw new SpecError([rowError(at.table, at.row, result.error)]);
      throw new Error(`data plane refused a ${writes[result.index]?.op ?? "write"} of a row it holds: ${result.error}`);
    }
    this.#holdsAll(pairs.map((p) => p.next));
    return { inserted: inserts.length, modified: modifies.length, deleted: deletes.length };
  }
}

/** The first row of `t` that matches exactly what an earlier row matches: refused as a fresh install refuses it. */
function duplicates(t: CompiledTable): void {
  const seen = new Set<string>();
  t.rows.forEach((r, k) => {
    const key = entryKey(t, r.match);
    if (seen.has(key)) throw new SpecError([rowError(t, k, "DuplicateEntry")]);
    seen.add(key);
  });
  if (t.rows.length > t.capacity) throw new SpecError([rowError(t, t.capacity, "TableFull")]);
}

function tableKey(c: CompiledSpec, t: CompiledTable): string {
  return `${c.members[t.member]?.qualified ?? t.member}/${t.role}`;
}

function sameLayout(a: CompiledTable, b: CompiledTable): boolean {
  return (
    a.role === b.role &&
    a.kind === b.kind &&
    a.keyLen === b.keyLen &&
    a.capacity === b.capacity &&
    a.fields.length === b.fields.length &&
    a.fields.every((f, i) => {
      const g = b.fields[i];
      return g !== undefined && f.name === g.name && f.offset === g.offset && f.len === g.len && f.kind === g.kind;
    })
  );
}

/** `c` with the table ids in `ids`, members pointing at the renumbered tables. */
function withIds(c: CompiledSpec, ids: ReadonlyMap<CompiledTable, number>): CompiledSpec {
  const renumbered = new Map<CompiledTable, CompiledTable>();
  for (const t of c.tables) {
    const id = ids.get(t) ?? t.id;
    if (id !== t.id) renumbered.set(t, { ...t, id });
  }
  if (renumbered.size === 0) return c;
  const members: CompiledMember[] = c.members.map((m) => {
    if (TABLE_ROLES.every((role) => !renumbered.has(m.tables[role] as CompiledTable))) return m;
    const tables: Partial<Record<TableRole, CompiledTable>> = {};
    for (const role of TABLE_ROLES) {
      const t = m.tables[role];
      if (t !== undefined) tables[role] = renumbered.get(t) ?? t;
    }
    return { ...m, tables };
  });
  return { ...c, members, tables: c.tables.map((t) => renumbered.get(t) ?? t) };
}

/** A place for an error about the whole description file. */
function whole(file: string): SourceRef {
  return { file, path: "", line: 0, column: 0 };
}
