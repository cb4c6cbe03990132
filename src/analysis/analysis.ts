// A description as the analysis reads it: the reference's topology (src/model/
// topology.ts: one-way links, attachments of layering, shared members), one
// header space per design (./header-space.ts), each member's header tables
// indexed by class (./tables.ts), and the groups of members the model's
// relations range over (seed §2.6, §5.1, §5.3):
//
//   network     one network's members: `reachable`
//   bridged     networks joined by bridging links: `reachableWithBridging`
//   subduction  bridged sets joined by shared links, hand-overs between the
//               shared members followed: `reachabilityWithSubduction`
//
// Layering adds no relation (seed §5.2.1): an overlay link is a link, and the
// underlay's part is checked as a demand (./properties.ts).
//
// Rows can be taken out and put back (a table write) or a table replaced (a
// reload): the change says which classes' fates may change, and the relations
// are walked again for those only (./relations.ts).
//
// Links are counted as the data plane counts them against its hop limit: a
// virtual link costs one and the underlay crossings that carry it (linkCost,
// ./costs.ts).
//
// What it may spend is its budget's (./budget.ts): when building the classes
// stops (too many, too large, too long), the analysis is not `built` and has
// nothing to walk; the relations and properties stop where their budget ends.

import type { CompiledSpec } from "../control/compiled.js";
import type { Installed } from "../control/install.js";
import type { Action, Pattern, TableSpec } from "../description/types.js";
import { type Member, Topology } from "../model/topology.js";
import type { TableRole } from "../wasm/abi.js";
import { DEFAULT_RUNNER } from "../wasm/runner.js";
import { actionKey } from "./behaviours.js";
import { Budget, BudgetStop, isResourceError } from "./budget.js";
import { linkCosts, sameCosts } from "./costs.js";
import { changed, type Down, type DownNames, downIn, NOTHING_DOWN } from "./down.js";
import { type OtherEntries, type OtherRow, otherRow } from "./entry-rows.js";
import type { ClassCut } from "./header-space.js";
import { HeaderSpaces } from "./header-spaces.js";
import {
  type Component,
  DEFAULTS,
  HEADER_ROLES,
  type HeaderRole,
  type KeyedRole,
  type KeyedTable,
  type MemberView,
  setKeyedOthers,
  type Walkable,
} from "./members.js";
import { type Affected, TableIndex } from "./tables.js";
import { groupComponents } from "./components.js";

export { HEADER_ROLES } from "./members.js";
export type { Component, ComponentKind, HeaderRole, KeyedTable, MemberView } from "./members.js";

/** A description row taken out of its table or put back (a table write). */
export interface RowChange {
  /** "network.member". */
  readonly member: string;
  readonly role: TableRole;
  /** The row's index in the description's table. */
  readonly row: number;
  readonly installed: boolean;
  /** The row's new action (a modify: its next hop changed), kept from now on; in force with it when `installed`. */
  readonly action?: Action;
}

export interface AnalysisOptions {
  /** Header spaces shared with another analysis (`--equivalent`): classes then mean the same in both. */
  readonly spaces?: HeaderSpaces;
  /** Patterns to tell classes apart by, besides the rows' (a query's `--header`), by design name. */
  readonly patterns?: ReadonlyMap<string, readonly ReadonlyMap<string, Pattern>[]>;
  /** What the analysis may spend (shared with `spaces`' when they are given); none: no bound but the diagram's. */
  readonly budget?: Budget;
  /** Links a packet may cross, as the data plane's hop limit (`strata run --hop-limit`, 64): one more is a loop. */
  readonly hopLimit?: number;
  /** What cuts the classes (ignored with `spaces`): each table's behaviours (the default), or every row's patterns. */
  readonly cut?: ClassCut;
  /** Links and members an update took down (`strata run --updates`). */
  readonly down?: DownNames;
}

/** The one empty list of in-links (tables remember their answers by list). */
const NO_LINKS: readonly number[] = [];

export class Analysis implements Walkable {
  readonly compiled: CompiledSpec;
  readonly topology: Topology;
  readonly spaces: HeaderSpaces;
  readonly budget: Budget;
  readonly hopLimit: number;
  /** The classes were built and the links' costs found: the relations can be walked. False: the budget ran out first.
   * */
  readonly built: boolean;
  readonly members: readonly MemberView[];
  readonly components: readonly Component[];
  /** Which networks a change touches: the components to walk again. */
  readonly #componentsOf: ReadonlyMap<number, readonly Component[]>;
  /** A virtual link's cost per receiver (links not here cost one): ./costs.ts. */
  #costs = new Map<number, number[]>();
  #down: Down;
  /** Header tables that hold entries beyond the description's rows (setOthers). */
  readonly #withOthers = new Set<number>();
  /** Those entries as rows, by table id. */
  #otherRows: ReadonlyMap<number, readonly OtherRow[]> = new Map();
  /** Per component, its links from outside (no sender). */
  readonly #inbound = new Map<Component, number[]>();
  /** Per member, the in-links a loop can come in by (loopLinks). */
  #loopLinks: Map<number, number[]> | undefined;
  /** The classes a change under way may have changed (apply, replaceTables): of one that splits, both parts. */
  #pending: Map<Component, Affected> | undefined;

  constructor(compiled: CompiledSpec, options: AnalysisOptions = {}) {
    this.compiled = compiled;
    this.topology = new Topology(compiled);
    this.budget = options.budget ?? options.spaces?.budget ?? new Budget();
    this.spaces = options.spaces ?? new HeaderSpaces(this.budget, options.cut);
    this.hopLimit = options.hopLimit ?? DEFAULT_RUNNER.hopLimit;
    this.#down = options.down === undefined ? NOTHING_DOWN : downIn(compiled, options.down);
    let members: MemberView[] = [];
    let built = false;
    try {
      members = this.#views(compiled, options.patterns);
      built = true;
    } catch (err) {
      if (!(err instanceof BudgetStop) && !isResourceError(err)) throw err;
      // The classes are not all there: nothing can be walked. A stack or a collection that ran out is a limit too.
      if (!(err instanceof BudgetStop)) this.budget.stopFor("depth");
    }
    this.members = members;
    this.components = built ? groupComponents(compiled, this.topology, this.members) : [];
    const byMember = new Map<number, Component[]>();
    for (const c of this.components) for (const m of c.members) byMember.set(m, [...(byMember.get(m) ?? []), c]);
    this.#componentsOf = byMember;
    this.built = built && linkCosts(this, this.budget, this.#costs);
  }

  /** The members with their tables indexed by class: the classes built (throws BudgetStop past the budget). */
  #views(compiled: CompiledSpec, patterns: AnalysisOptions["patterns"]): MemberView[] {
    const partners = sharedPartners(compiled);
    const inLinks = receivedLinks(this.topology, partners, compiled);
    const members = this.topology.members.map((m): MemberView => {
      const space = this.spaces.of(m.network.design);
      const tables: Partial<Record<HeaderRole, TableIndex>> = {};
      for (const role of HEADER_ROLES) {
        const t = m.tables[role];
        const lpm = compiled.members[m.index]?.tables[role]?.fields.find((f) => f.kind === "lpm")?.name;
        if (t !== undefined) tables[role] = new TableIndex(space, t, undefined, lpm);
      }
      const keyed = (t: TableSpec | undefined): KeyedTable | undefined =>
        t === undefined ? undefined : { spec: t, active: t.rows.map(() => true), others: [] };
      return {
        index: m.index,
        member: m,
        space,
        decrements: m.network.decrementTtl && space.hopField !== undefined,
        tables,
        transmit: keyed(m.tables.transmit),
        send: keyed(m.tables.send),
        inLinks: [...(inLinks.get(m.index) ?? [])].sort((a, b) => a - b),
        partner: partners.get(m.index),
      };
    });
    for (const [design, list] of patterns ?? []) {
      const space = this.spaces.all().find((s) => s.design.name === design);
      for (const p of list) space?.predicate(p);
    }
    for (const v of members) for (const t of Object.values(v.tables)) t.cut();
    this.spaces.build();
    for (const v of members) for (const t of Object.values(v.tables)) t.index();
    for (const space of this.spaces.all()) {
      const tables = members.filter((v) => v.space === space).flatMap((v) => Object.values(v.tables));
      space.listen({
        split: (from, born) => {
          for (const t of tables) t.split(from, born);
          for (const [c, x] of this.#pending ?? [])
            if (c.space === space && x !== "all" && x.includes(from)) this.#pending?.set(c, [...x, born]);
        },
        died: (atom) => {
          for (const t of tables) t.died(atom);
        },
      });
    }
    return members;
  }

  /** Links a crossing of `link` counts for its receiver number `receiver`: one, and for a virtual link the underlay's
   * crossings that carry it (more than the hop limit when the underlay cannot carry it within it). */
  linkCost(link: number, receiver: number): number {
    return this.#costs.get(link)?.[receiver] ?? 1;
  }

  /**
   * The in-links of `member` a loop can come in by: those on which some member that passes on what it receives (an
   * acquire row that forwards, or a shared member) sends to it. What a host or the outside sends is in no loop.
   */
  loopLinks(member: number): readonly number[] {
    this.#loopLinks ??= this.#findLoopLinks();
    return this.#loopLinks.get(member) ?? NO_LINKS;
  }

  #findLoopLinks(): Map<number, number[]> {
    const passesOn = (m: number): boolean => {
      const v = this.member(m);
      const acquire = v.tables.acquire;
      return (
        v.partner !== undefined ||
        (acquire?.rows.some((r) => ["forward", "both", "shared-acquire"].includes(r.row.action.kind)) ?? false)
      );
    };
    const from = new Map<number, Set<number>>();
    const add = (m: number, inLink: number): void => {
      from.set(m, (from.get(m) ?? new Set<number>()).add(inLink));
    };
    for (const l of this.topology.links) {
      if (l === undefined || l.sender < 0 || !passesOn(l.sender)) continue;
      for (const r of l.receivers) {
        add(r.member, r.inLink);
        const p = this.member(r.member).partner;
        if (p !== undefined) add(p, r.inLink);
      }
    }
    const out = new Map<number, number[]>();
    for (const v of this.members) {
      const inLinks = from.get(v.index);
      if (inLinks !== undefined)
        out.set(
          v.index,
          v.inLinks.filter((p) => inLinks.has(p)),
        );
    }
    return out;
  }

  /** The component's links from outside (no sender). */
  inbound(c: Component): readonly number[] {
    let list = this.#inbound.get(c);
    if (list === undefined) {
      list = [];
      for (const l of this.topology.links)
        if (l !== undefined && l.sender < 0 && l.receivers.some((r) => c.has[r.member] === 1)) list.push(l.index);
      this.#inbound.set(c, list);
    }
    return list;
  }

  linkDown(link: number): boolean {
    return this.#down.links.has(link);
  }

  memberDown(member: number): boolean {
    return this.#down.members.has(member);
  }

  /** Takes links and members down or brings them up, as `down` says of every one; returns how many changed. The
   * components their classes' fate may change in (every class: a link or member is on any path) go into `out`. */
  setDown(down: DownNames, out: Map<Component, Affected>): number {
    const next = downIn(this.compiled, down);
    const links = changed(this.#down.links, next.links);
    const members = changed(this.#down.members, next.members);
    this.#down = next;
    const ends = links.flatMap((l) => [
      this.topology.link(l).sender,
      ...this.topology.link(l).receivers.map((r) => r.member),
    ]);
    for (const m of [...members, ...ends]) if (m >= 0) for (const c of this.componentsOf(m)) out.set(c, "all");
    return links.length + members.length;
  }

  /** The virtual links' costs found again (an underlay's rows or links changed): when they changed, every class of
   * every component may have, added to `out`. */
  refreshCosts(out: Map<Component, Affected>): void {
    const costs = new Map<number, number[]>();
    if (!linkCosts(this, this.budget, costs)) return;
    if (!sameCosts(costs, this.#costs)) for (const c of this.components) out.set(c, "all");
    this.#costs = costs;
  }

  member(i: number): MemberView {
    const v = this.members[i];
    if (v === undefined) throw new Error(`no member ${i}`);
    return v;
  }

  /** The member named "network.key" (or "network:key"). */
  memberNamed(name: string): MemberView | undefined {
    const q = name.replace(":", ".");
    return this.members.find((v) => v.member.qualified === q);
  }

  /** The components a member is in. */
  componentsOf(member: number): readonly Component[] {
    return this.#componentsOf.get(member) ?? [];
  }

  /**
   * Takes rows out or puts them back. Returns, per component touched, the classes whose fate may
   * have changed ("all" for a row without patterns), added to `out`; changes that change nothing are left out.
   */
  apply(changes: readonly RowChange[], out = new Map<Component, Affected>()): Map<Component, Affected> {
    return this.#changing(out, () => this.#apply(changes, out));
  }

  /** `f`, with the classes of `out` that split while it runs followed (both parts may have changed). */
  #changing(out: Map<Component, Affected>, f: () => void): Map<Component, Affected> {
    this.#pending = out;
    try {
      f();
    } finally {
      this.#pending = undefined;
    }
    return out;
  }

  #apply(changes: readonly RowChange[], out: Map<Component, Affected>): void {
    for (const ch of changes) {
      const v = this.memberNamed(ch.member);
      if (v === undefined) throw new Error(`no member ${ch.member}`);
      let affected: Affected;
      if (ch.role === "transmit" || ch.role === "send") {
        const t = ch.role === "transmit" ? v.transmit : v.send;
        const row = t?.spec.rows[ch.row];
        if (t === undefined || row === undefined) continue;
        const action = ch.action;
        const retold = action !== undefined && actionKey(action) !== actionKey(row.action);
        if (!retold && t.active[ch.row] === ch.installed) continue;
        if (retold) t.spec = { ...t.spec, rows: t.spec.rows.map((r, i) => (i === ch.row ? { ...r, action } : r)) };
        t.active[ch.row] = ch.installed;
        affected = "all"; // an out-link or a session for every class
      } else {
        const t = v.tables[ch.role];
        if (t === undefined) continue;
        affected =
          ch.action === undefined ? t.setActive(ch.row, ch.installed) : t.setAction(ch.row, ch.action, ch.installed);
      }
      if (affected !== "all" && affected.length === 0) continue;
      for (const c of this.componentsOf(v.index)) out.set(c, merge(out.get(c), affected));
    }
  }

  /** Makes the entries beyond the description's rows in each table `others`' (read as rows, ./entry-rows.ts):
   * the classes whose fate may change, per component, added to `out`. Returns how many entries went out or in. */
  setOthers(others: OtherEntries, out = new Map<Component, Affected>()): number {
    const rows = new Map<number, readonly OtherRow[]>();
    for (const t of this.compiled.tables) {
      const list = others.get(t.id);
      if (list !== undefined)
        rows.set(
          t.id,
          list.flatMap((e) => otherRow(this.compiled, t, e) ?? []),
        );
    }
    return this.setOtherRows(rows, out);
  }

  /** The entries beyond the description's rows, read as rows, by table id (what setOthers was last given). */
  get otherRows(): ReadonlyMap<number, readonly OtherRow[]> {
    return this.#otherRows;
  }

  /** setOthers with the entries read as rows already (an analysis made afresh from another's otherRows). */
  setOtherRows(rows: ReadonlyMap<number, readonly OtherRow[]>, out = new Map<Component, Affected>()): number {
    let n = 0;
    this.#otherRows = rows;
    this.#changing(out, () => {
      for (const t of this.compiled.tables) {
        const list = rows.get(t.id);
        if (list === undefined && !this.#withOthers.has(t.id)) continue;
        const v = this.members[t.member];
        const index = v?.tables[t.role as HeaderRole];
        const keyed = t.role === "transmit" || t.role === "send";
        if (v === undefined || (index === undefined && !keyed)) continue;
        if (list === undefined) this.#withOthers.delete(t.id);
        else this.#withOthers.add(t.id);
        // An out-link or a session for every class.
        const { affected, changed } =
          index === undefined ? setKeyedOthers(v, t.role as KeyedRole, list) : index.setOthers(list ?? []);
        n += changed;
        if (affected !== "all" && affected.length === 0) continue;
        this.#loopLinks = undefined;
        for (const c of this.componentsOf(v.index)) out.set(c, merge(out.get(c), affected));
      }
    });
    return n;
  }

  /** The rows a data plane holds now, against what the analysis has: the changes to apply (serve's table writes). */
  changesFrom(installed: Pick<Installed, "compiled" | "entries">): RowChange[] {
    const out: RowChange[] = [];
    for (const t of installed.compiled.tables) {
      const m = installed.compiled.members[t.member];
      const v = m === undefined ? undefined : this.memberNamed(m.qualified);
      if (v === undefined) continue;
      const entries = installed.entries.get(t.id) ?? [];
      t.rows.forEach((r, k) => {
        if (r.row < 0) return; // a row the compiler added: no description row stands for it
        const now = (entries[k] ?? -1) >= 0;
        const role = t.role;
        const was =
          role === "transmit"
            ? v.transmit?.active[r.row]
            : role === "send"
              ? v.send?.active[r.row]
              : v.tables[role as HeaderRole]?.isActive(r.row);
        if (was !== undefined && was !== now)
          out.push({ member: m?.qualified ?? "", role, row: r.row, installed: now });
      });
    }
    return out;
  }

  /**
   * A new description with the same topology (a reload that changed rows only): each table that
   * changed is replaced. Returns the classes whose fate may have changed, per component, added to `out`.
   */
  replaceTables(compiled: CompiledSpec, out = new Map<Component, Affected>()): Map<Component, Affected> {
    return this.#changing(out, () => this.#replaceTables(compiled, out));
  }

  #replaceTables(compiled: CompiledSpec, out: Map<Component, Affected>): void {
    const next = new Topology(compiled);
    for (const m of next.members) {
      const v = this.memberNamed(m.qualified);
      if (v === undefined)
        throw new Error(
          `the new description has member ${m.qualified}, which the analysed one lacks: analyse it afresh`,
        );
      for (const role of HEADER_ROLES) {
        const spec = m.tables[role];
        const t = v.tables[role];
        if (spec === t?.spec) continue;
        if (spec === undefined || t === undefined)
          throw new Error(`${m.qualified} gained or lost its ${role} table: analyse it afresh`);
        const affected = t.replace(spec);
        for (const c of this.componentsOf(v.index)) out.set(c, merge(out.get(c), affected));
      }
      for (const role of ["transmit", "send"] as const) {
        const spec = m.tables[role];
        const t = role === "transmit" ? v.transmit : v.send;
        if (spec === t?.spec || (spec === undefined && t?.spec === DEFAULTS)) continue;
        if (spec === undefined || t === undefined)
          throw new Error(`${m.qualified} gained or lost its ${role} table: analyse it afresh`);
        t.spec = spec;
        t.active = spec.rows.map(() => true);
        for (const c of this.componentsOf(v.index)) out.set(c, "all");
      }
    }
  }
}

function merge(a: Affected | undefined, b: Affected): Affected {
  if (a === undefined) return b;
  if (a === "all" || b === "all") return "all";
  return [...new Set([...a, ...b])].sort((x, y) => x - y);
}

/** Subduction's shared members, both ways: the underlay's member at a shared link's end and its partner in the overlay.
 * */
function sharedPartners(compiled: CompiledSpec): Map<number, number> {
  const index = new Map(compiled.members.map((m) => [m.qualified, m.index]));
  const out = new Map<number, number>();
  for (const net of compiled.spec.networks) {
    for (const l of net.links) {
      if (l.shared === undefined || l.sharedAt === undefined) continue;
      const here = index.get(`${net.name}.${l.sharedAt.member}`);
      const there = index.get(`${l.shared}.${l.sharedAt.partner}`);
      if (here === undefined || there === undefined) continue;
      out.set(here, there);
      out.set(there, here);
    }
  }
  return out;
}

/** The identifiers each member receives on; a shared link's end counts for both shared members. */
function receivedLinks(
  t: Topology,
  partners: ReadonlyMap<number, number>,
  compiled: CompiledSpec,
): Map<number, Set<number>> {
  const out = new Map<number, Set<number>>();
  const add = (m: number, inLink: number): void => {
    const s = out.get(m) ?? new Set<number>();
    s.add(inLink);
    out.set(m, s);
  };
  const sharedLinks = new Set(compiled.links.filter((l) => l.spec.shared !== undefined).map((l) => l.index));
  for (const l of t.links) {
    if (l === undefined) continue;
    for (const r of l.receivers) {
      add(r.member, r.inLink);
      const p = partners.get(r.member);
      if (p !== undefined && sharedLinks.has(l.index)) add(p, r.inLink);
    }
  }
  return out;
}
