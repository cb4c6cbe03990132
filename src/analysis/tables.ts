// A member's header tables (acquire, forward, receive) as the analysis reads
// them: for each header class (./header-space.ts), the rows whose patterns
// meet it, in the order the description's rule picks the winner (docs/
// spec.md, "Order and meaning": the first row written, or in a `kind: lpm`
// table the longest prefix) — the same rule the reference interpreter applies
// to one packet (src/model/rows.ts). A row that holds for every header is kept
// once, not under every class. Rows can be taken out and put back (a table
// write), and the index follows the header space when its classes split.
//
// What cuts the classes (ClassCut): by default each table's behaviours (./
// behaviours.ts), so that rows with the same action cut nothing; a class may
// then hold headers that different rows of one behaviour take, and a lookup
// names the rows that take the class's witness header (HeaderSpace.witness):
// a path says `forward row N` for that header, and every header of the class
// meets the same actions. With the cut `rows`, every row's patterns cut the
// classes (the partition the analysis had first): each class is inside or
// outside each row.

import type { Action, TableSpec } from "../description/types.js";
import { type Arrival, lpmField } from "../model/rows.js";
import { FALSE, TRUE } from "./bdd.js";
import { actionKey, Behaviours, type IndexedRow } from "./behaviours.js";
import type { OtherRow } from "./entry-rows.js";
import type { HeaderSpace } from "./header-space.js";
import { PrefixTrie } from "./prefix-trie.js";
import { byPriority, RowMatcher } from "./row-matcher.js";
import { firstOfItsRows, indexRow, inPlace, lcs, Row, winsAfter, withAction } from "./table-rows.js";

export type { IndexedRow } from "./behaviours.js";

/** A row that wins for part of a class: the hop-limit values it wins for. */
export interface Hit {
  readonly row: IndexedRow;
  readonly hops: bigint;
}

/** Which classes a change to a table may change the fate of: some, or (a row without patterns) all. */
export type Affected = readonly number[] | "all";

/** Steps of a walk of the class diagram to find the classes a row meets for the index: a row past it is read for each
 * class (its patterns evaluated at the class's witness). */
const INDEX_STEPS = 1 << 10;
/** The same to say which classes a change may change: past it, every class. */
const AFFECTED_STEPS = 1 << 18;

const NO_ROWS: readonly IndexedRow[] = [];
const inPriority = (x: IndexedRow, y: IndexedRow): number => x.prio - y.prio;
/** Rows with patterns from which a lookup reads them by bit vectors (./row-matcher.ts), and up to which. */
const MATCHED_ROWS = { from: 8, to: 8192 };

/**
 * Rows of a table held as a prefix trie up to which their patterns' diagrams are made at once, as every other table's
 * are: they are what a class is said by (./class-words.ts). A larger trie's are made when asked for (a FIB's 10^5
 * prefixes would be most of the diagram, and words from them too many to read).
 */
const EAGER_PATTERNS = 4096;

export class TableIndex {
  readonly space: HeaderSpace;
  spec: TableSpec;
  #rows: IndexedRow[] = [];
  #active: boolean[] = [];
  /** Active rows without patterns (or not indexed by class: #unindexed) and without an in-link, by priority. */
  #wild: IndexedRow[] = [];
  /** The same that name an in-link, by it, by priority (a lookup reads only its in-link's). */
  #wildIn = new Map<Arrival, IndexedRow[]>();
  /** Rows with patterns not indexed by class: finding their classes would take a walk of much of the diagram. */
  #unindexed = new Set<IndexedRow>();
  /** Per class, the rows of #unindexed that hold for its witness. */
  #readFor = new Map<number, readonly IndexedRow[]>();
  /** Per class, the active rows with patterns that meet it, by priority. */
  #specific = new Map<number, IndexedRow[]>();
  /** distinctArrivals' answers, by the list of in-links asked about. */
  #distinct = new WeakMap<readonly number[], readonly number[]>();
  /** The last of them asked (a member asks about its own in-links, once a class). */
  #distinctLast: readonly number[] | undefined;
  #distinctLastAnswer: readonly number[] = [];
  /** The table's behaviours, when they cut the classes (cut `behaviour`). */
  #behaviours: Behaviours | undefined;
  /** Its rows' patterns cut the classes: the cut `rows`, or behaviours past their share of the budget (cut()). */
  #byRows: boolean;
  /** The field the data plane matches by longest prefix (an LPM table, written `kind: lpm` or found so). */
  #lpm: string | undefined;
  /** Entries that are no row of the description (a controller's), by key: their index in #rows, after the rows'. */
  #others = new Map<string, number>();
  /** An LPM table's rows as a prefix trie (cut `behaviour`, rows that match their prefix field only): its behaviours
   * are built from it and its lookups follow it, and its rows are not indexed by class. */
  #trie: PrefixTrie | undefined;
  /** The last class looked up and the rows that may win for it (#held): a walk looks up one class many times over. */
  #heldAtom = -1;
  /** namesInLinks, found once for the rows. */
  #namesIn: boolean | undefined;
  #held: readonly IndexedRow[] = NO_ROWS;
  /** The rows with patterns as bit vectors (made when first asked for; null: the table does not use one). */
  #matcher: RowMatcher | null | undefined;

  constructor(space: HeaderSpace, spec: TableSpec, active?: readonly boolean[], lpm?: string) {
    this.space = space;
    this.spec = spec;
    this.#byRows = space.cut === "rows";
    this.#lpm = lpm ?? (spec.kind === "lpm" ? lpmField(spec) : undefined);
    this.#active = spec.rows.map((_, i) => active?.[i] ?? true);
    [this.#rows, this.#trie] = this.#rowsOf(spec);
  }

  /** The table's rows, and its trie when it is held as one. */
  #rowsOf(spec: TableSpec): [IndexedRow[], PrefixTrie | undefined] {
    const fields = new Map(this.space.fields.map((f) => [f.def.name, f]));
    const field = this.#byRows ? undefined : PrefixTrie.fieldOf(spec, fields, this.space.hopField?.name);
    // A large trie's rows make their patterns' diagrams only when something asks for them (a write, a property).
    const lazy = field !== undefined && spec.rows.length > EAGER_PATTERNS;
    const rows = spec.rows.map((row, index) => indexRow(this.space, row, index, this.#lpm, this.#byRows, { lazy }));
    return [rows, field === undefined ? undefined : PrefixTrie.of(field, rows, this.#active)];
  }

  /** Cuts the header space by the table's behaviours (the rows' patterns cut it as they are indexed with the cut
   * `rows`): before the space is built, or after (its classes split). */
  cut(): void {
    if (this.#byRows) return;
    const slots = new Map<Arrival, number>();
    for (const r of this.#rows) if (r.row.in !== undefined && !slots.has(r.row.in)) slots.set(r.row.in, slots.size + 1);
    const behaviours = new Behaviours(this.space, slots.size + 1, (r) =>
      r.row.in === undefined ? undefined : slots.get(r.row.in),
    );
    const trie = this.#trie;
    if (trie !== undefined) {
      this.#behaviours = behaviours;
      // A table write cuts the classes where its rows change (setActive): the twin's cut holds until then.
      if (!this.space.built && !firstOfItsRows(this.space, this.#rows, this.#active, behaviours.owner)) return;
      // Bottom-up from the trie, a node per trie node at most: not a trial, as it cannot outgrow the rows' prefixes.
      behaviours.buildFrom((b, leaves) => trie.diagram(b, leaves));
      return;
    }
    if (behaviours.build(this.#inForce())) {
      this.#behaviours = behaviours;
      return;
    }
    // Its behaviours passed their share of the budget: its rows' patterns cut the classes, one at a time, and a budget
    // that stops them keeps the classes made.
    this.#byRows = true;
    this.#behaviours = undefined;
    this.space.tablesByRows++;
    const space = this.space;
    this.#rows = this.#rows.map((r) => new Row(space, r.index, r.row, space.predicate(r.row.match), r.hops, r.prio));
  }

  /** Fills the per-class lists (the header space must be built). */
  index(): void {
    this.#heldAtom = -1;
    this.#matcher = undefined;
    this.#wild = [];
    this.#wildIn = new Map();
    this.#specific = new Map();
    this.#unindexed = new Set();
    this.#readFor = new Map();
    if (this.#trie === undefined) for (const r of this.#inForce()) this.#insert(r);
  }

  /** The active rows, by priority. */
  #inForce(): IndexedRow[] {
    return this.#rows.filter((_, i) => this.#active[i] === true).sort((x, y) => x.prio - y.prio);
  }

  get rows(): readonly IndexedRow[] {
    return this.#rows;
  }

  /** A lookup finds the same rows for every class (no row's patterns cut the classes: a host's "everything out"). */
  get sameForEveryClass(): boolean {
    return this.#trie === undefined && this.#specific.size === 0 && this.#unindexed.size === 0;
  }

  /** Some row, in or out, names an in-link. */
  get namesInLinks(): boolean {
    this.#namesIn ??= this.#rows.some((r) => r.row.in !== undefined);
    return this.#namesIn;
  }
  /**
   * Of `inLinks`, those a lookup tells apart: those some row names (`in`), and, when some row names none, the first
   * of the others, which stands for them all (what this table does with a class from one it does from each). A table
   * whose rows all name their in-link finds nothing for the others.
   */
  distinctArrivals(inLinks: readonly number[]): readonly number[] {
    if (inLinks === this.#distinctLast) return this.#distinctLastAnswer;
    const known = this.#distinct.get(inLinks);
    if (known !== undefined) {
      this.#distinctLast = inLinks;
      this.#distinctLastAnswer = known;
      return known;
    }
    const named = new Set(this.#rows.map((r) => r.row.in));
    const other = named.has(undefined) ? inLinks.find((p) => !named.has(p)) : undefined;
    const arrivals = inLinks.filter((p) => named.has(p) || p === other);
    this.#distinct.set(inLinks, arrivals);
    this.#distinctLast = inLinks;
    this.#distinctLastAnswer = arrivals;
    return arrivals;
  }

  isActive(index: number): boolean {
    return this.#active[index] === true;
  }

  /**
   * The rows that win for class `atom` arriving on `arrival`, with the hop-limit values each wins
   * for, in priority order, appended to `out`. Returns the values no row takes (a miss).
   */
  lookup(arrival: Arrival, atom: number, hops: bigint, out: Hit[]): bigint {
    if (this.#trie !== undefined) return this.#lookupTrie(this.#trie, arrival, atom, hops, out);
    // Two lists merged by priority: the rows that may win for the class, and those without patterns for this in-link.
    if (atom !== this.#heldAtom) {
      // A table without patterns (a host's "everything out") holds the same rows for every class.
      this.#held = this.#specific.size === 0 && this.#unindexed.size === 0 ? this.#wild : this.#hold(atom);
      this.#heldAtom = atom;
    }
    const held = this.#held;
    const wildIn = this.#wildIn.size === 0 ? NO_ROWS : (this.#wildIn.get(arrival) ?? NO_ROWS);
    let i = 0;
    let j = 0;
    let rest = hops;
    while (rest !== 0n) {
      const x = held[i];
      const y = wildIn[j];
      let r: IndexedRow;
      if (x !== undefined && (y === undefined || x.prio < y.prio)) {
        r = x;
        i++;
      } else if (y !== undefined) {
        r = y;
        j++;
      } else break;
      if (r.row.in !== undefined && r.row.in !== arrival) continue;
      // Most rows take every hop value: no arithmetic on the set then.
      const take = r.hops === this.space.allHops ? rest : rest & r.hops;
      if (take === 0n) continue;
      out.push({ row: r, hops: take });
      rest = take === rest ? 0n : rest ^ take;
    }
    return rest;
  }

  /** lookup() in a prefix trie: the rows on the path of the class's witness header, longest prefix first (followed
   * once a class, as #held is). */
  #lookupTrie(trie: PrefixTrie, arrival: Arrival, atom: number, hops: bigint, out: Hit[]): bigint {
    if (atom !== this.#heldAtom) {
      this.#held = trie.along(this.space.witness(atom).get(trie.field.def.name) ?? 0n);
      this.#heldAtom = atom;
    }
    let rest = hops;
    for (const r of this.#held) {
      if (rest === 0n) break;
      if (r.row.in !== undefined && r.row.in !== arrival) continue;
      // Most rows take every hop value: no arithmetic on the set then (each operation makes a 256-bit number).
      const take = r.hops === this.space.allHops ? rest : rest & r.hops;
      if (take === 0n) continue;
      out.push({ row: r, hops: take });
      rest = take === rest ? 0n : rest ^ take;
    }
    return rest;
  }

  /**
   * The rows that may win for class `atom`, from any in-link, by priority: the class's rows, those read for it, and the
   * rows without patterns for any in-link; a row of a behaviour that holds for part of the class only is there when it
   * takes the class's witness header.
   */
  #hold(atom: number): readonly IndexedRow[] {
    const m = (this.#matcher ??= this.#matcherOf());
    if (m !== null) {
      const holding = m.holding(this.space.witness(atom)).flatMap((i) => this.#rows[i] ?? []);
      return holding.length === 0 ? this.#wild : byPriority(holding, this.#wild);
    }
    const specific = this.#specific.get(atom) ?? NO_ROWS;
    const read = this.#read(atom);
    if (specific.length + read.length === 0) return this.#wild;
    const rows = [...specific, ...read, ...this.#wild].sort((x, y) => x.prio - y.prio);
    let witness: ReadonlyMap<string, bigint> | undefined;
    return rows.filter(
      (r) =>
        r.pred >= 0 || r.node === TRUE || this.space.evaluate(r.node, (witness ??= this.space.witness(atom))) === TRUE,
    );
  }

  /** The rows with patterns as bit vectors, when the table has many and is no trie (null otherwise). */
  #matcherOf(): RowMatcher | null {
    if (this.#trie !== undefined || this.#byRows || this.#rows.length > MATCHED_ROWS.to) return null;
    const rows = this.#rows.filter((r) => r.node !== TRUE).sort(inPriority);
    if (rows.length < MATCHED_ROWS.from) return null;
    return new RowMatcher(this.space.bdd, this.space.fields, rows, this.#active);
  }

  /** The rows with patterns not indexed by class that hold for class `atom`'s witness, by priority (found once). */
  #read(atom: number): readonly IndexedRow[] {
    if (this.#unindexed.size === 0) return NO_ROWS;
    let list = this.#readFor.get(atom);
    if (list === undefined) {
      const w = this.space.witness(atom);
      list = [...this.#unindexed].filter((r) => this.space.evaluate(r.node, w) === TRUE).sort(inPriority);
      this.#readFor.set(atom, list);
    }
    return list;
  }

  /**
   * Whether active row `r` wins for some header arriving on one of `arrivals`: its patterns hold for a header and a
   * hop value that no row before it takes from there.
   */
  wins(r: IndexedRow, arrivals: readonly Arrival[]): boolean {
    const before = this.#inForce().filter((x) => x.prio < r.prio);
    return winsAfter(this.space, before, r, arrivals);
  }

  /** Takes row `index` out of the table or puts it back; the classes whose fate may change. */
  setActive(index: number, on: boolean): Affected {
    const r = this.#rows[index];
    if (r === undefined || this.#active[index] === on) return [];
    return this.#write(r, r, on);
  }

  /**
   * Gives row `index` the action `action` (a modify: a next hop changed), in force when `on`: the headers its patterns
   * meet done again once, as a write that takes it out or puts it back does. The classes whose fate may change.
   */
  setAction(index: number, action: Action, on: boolean): Affected {
    const r = this.#rows[index];
    if (r === undefined) return [];
    if (actionKey(r.row.action) === actionKey(action)) return this.setActive(index, on);
    const next = withAction(r, action);
    this.#rows[index] = next;
    if (this.#active[index] !== true && !on) return [];
    return this.#write(r, next, on);
  }

  /** Row `was` (in force or not) is now `now` (the same patterns), in force when `on`: the index, the trie and the
   * behaviours follow where its patterns hold. */
  #write(was: IndexedRow, now: IndexedRow, on: boolean): Affected {
    const index = now.index;
    const before = this.#active[index] === true;
    this.#active[index] = on;
    if (this.#trie !== undefined) {
      // The headers under the row's prefix, from the rows on the path to it and under it.
      this.#heldAtom = -1;
      if (before) this.#trie.setActive(was, false);
      if (on) this.#trie.setActive(now, true);
      const trie = this.#trie;
      // The classes there now, all new (no walk for them, nor a diagram of the row's patterns).
      const born = this.#behaviours?.updateFrom((b, leaves, none) => trie.region(b, leaves, now, none));
      return born ?? this.#atomsOf(now) ?? "all";
    }
    // The table's behaviours where the row's patterns hold, from the rows that meet them there.
    const b = this.space.bdd;
    this.#behaviours?.update(
      now.node,
      this.#inForce().filter((x) => now.node === TRUE || b.and(x.node, now.node) !== FALSE),
    );
    if (before) this.#remove(was);
    if (on) this.#insert(now);
    this.#matcher?.setActive(index, on);
    return this.#atomsOf(now) ?? "all";
  }

  /**
   * Makes the entries beyond the description's rows those of `rows` (a controller's writes): those gone are taken out,
   * new ones put in where the data plane orders them (by longest prefix in an LPM table, else by priority: above the
   * rows of lower priority); the classes whose fate may change, and how many entries went out or in.
   */
  setOthers(rows: readonly OtherRow[]): { affected: Affected; changed: number } {
    const keep = new Set(rows.map((r) => r.key));
    let all = false;
    const atoms = new Set<number>();
    let changed = 0;
    const add = (a: Affected): void => {
      changed++;
      if (a === "all") all = true;
      else for (const x of a) atoms.add(x);
    };
    for (const [key, i] of this.#others) if (!keep.has(key) && this.#active[i] === true) add(this.setActive(i, false));
    const n = this.spec.rows.length;
    if (rows.some((r) => !this.#others.has(r.key))) this.#distinct = new WeakMap(); // a new row may name an in-link
    for (const r of rows) {
      let i = this.#others.get(r.key);
      if (i === undefined) {
        i = this.#rows.length;
        // A row of priority p stands where the description's row of that priority (n − index) does, just below it.
        const row = indexRow(this.space, r.row, i, this.#lpm, this.#byRows, { order: n - r.priority + 0.5 });
        this.#rows.push(row);
        this.#namesIn = undefined;
        this.#matcher = undefined;
        if (this.#trie?.holds(r.row.match, this.space.hopField?.name) === true) this.#trie.place(row);
        else if (this.#trie !== undefined) this.#untrie();
        this.#active.push(false);
        this.#others.set(r.key, i);
      }
      if (this.#active[i] !== true) add(this.setActive(i, true));
    }
    return { affected: all ? "all" : [...atoms].sort((x, y) => x - y), changed };
  }

  /** The table's rows indexed by class, as a table that is no trie has them: a row the trie cannot hold came. Its
   * behaviours stay, and change as any table's do. */
  #untrie(): void {
    this.#trie = undefined;
    this.index();
  }

  /** The table as a new description writes it (rows added, removed, reordered); the classes whose fate may change. */
  replace(spec: TableSpec, active?: readonly boolean[]): Affected {
    const before = this.#inForce();
    this.spec = spec;
    this.#others = new Map();
    this.#namesIn = undefined;
    this.#distinct = new WeakMap();
    this.#distinctLast = undefined;
    this.#active = spec.rows.map((_, i) => active?.[i] ?? true);
    [this.#rows, this.#trie] = this.#rowsOf(spec);
    const after = this.#inForce();
    this.cut();
    this.index();
    // Rows that stayed (same in-link, patterns, action, in the same order) change no class; the others may.
    const key = (r: IndexedRow): string => `${String(r.row.in)}|${r.node}|${r.hops}|${actionKey(r.row.action)}`;
    const kept = lcs(before.map(key), after.map(key));
    const changed = [...before.filter((_, i) => !kept.a.has(i)), ...after.filter((_, i) => !kept.b.has(i))];
    const atoms = new Set<number>();
    for (const r of changed) {
      const of = this.#atomsOf(r);
      if (of === undefined) return "all";
      for (const a of of) atoms.add(a);
    }
    return [...atoms].sort((x, y) => x - y);
  }

  /** The header space cut class `from`: `born` gets its rows (the row that cut it adds itself). */
  split(from: number, born: number): void {
    this.#heldAtom = -1;
    const list = this.#specific.get(from);
    if (list !== undefined) this.#specific.set(born, [...list]);
    // Read again: the witness may have gone with the new class.
    this.#readFor.delete(from);
  }

  died(atom: number): void {
    this.#heldAtom = -1;
    this.#specific.delete(atom);
    this.#readFor.delete(atom);
  }

  /** The live classes row `r`'s patterns meet; undefined when it has none (every class), or when finding them would
   * take more than `maxSteps` (every class may be said). */
  #atomsOf(r: IndexedRow, maxSteps = AFFECTED_STEPS): readonly number[] | undefined {
    if (r.node === TRUE) return undefined;
    if (r.pred >= 0) return this.space.atomsOf(r.pred).filter((a) => !this.space.isDead(a));
    return this.space.atomsMeeting(r.node, maxSteps);
  }

  #insert(r: IndexedRow): void {
    this.#heldAtom = -1;
    const atoms = this.#atomsOf(r, INDEX_STEPS);
    if (atoms === undefined && r.node !== TRUE) {
      this.#unindexed.add(r);
      this.#readFor.clear();
      return;
    }
    if (atoms === undefined) {
      const list = r.row.in === undefined ? this.#wild : (this.#wildIn.get(r.row.in) ?? []);
      inPlace(list, r);
      if (r.row.in !== undefined) this.#wildIn.set(r.row.in, list);
      return;
    }
    for (const a of atoms) {
      const list = this.#specific.get(a);
      if (list === undefined) this.#specific.set(a, [r]);
      else inPlace(list, r);
    }
  }

  #remove(r: IndexedRow): void {
    this.#heldAtom = -1;
    if (this.#unindexed.delete(r)) {
      this.#readFor.clear();
      return;
    }
    if (r.node === TRUE) {
      if (r.row.in === undefined) this.#wild = this.#wild.filter((x) => x !== r);
      else
        this.#wildIn.set(
          r.row.in,
          (this.#wildIn.get(r.row.in) ?? []).filter((x) => x !== r),
        );
      return;
    }
    // The classes it was indexed under, or (a walk too long to say) every class.
    for (const a of this.#atomsOf(r, INDEX_STEPS) ?? [...this.#specific.keys()]) {
      const list = this.#specific.get(a);
      if (list === undefined) continue;
      const k = list.indexOf(r);
      if (k >= 0) list.splice(k, 1);
      if (list.length === 0) this.#specific.delete(a);
    }
  }
}
