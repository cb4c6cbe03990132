// Header classes: the coarsest partition of a design's headers that no table
// behaviour can split (atomic predicates, Yang & Lam; APKeep keeps them as rules
// change, and merges the predicates of rules with one action). By default each
// header table's rows are first made into what the table does with a header
// (./behaviours.ts), and each behaviour's headers are a predicate; with the cut
// `rows`, every row's patterns are one. Two headers are in one class when every
// predicate holds for both or for neither. A class is then a number, and a
// table is, for each class, the rows that may win; what a packet does depends
// only on its class, its in-link and its hop-limit value (./hops.ts, kept apart
// because forwarding changes it).
//
// The partition is one multi-terminal decision diagram over the fields' bits
// (./bdd.ts; the fields laid out as variables in ./pattern-nodes.ts): each leaf
// is the set of predicates that hold on the paths to it, and each leaf is a
// class. Adding a predicate marks the leaves under it; a leaf partly under it
// splits in two (a new class), one wholly under it moves (the class keeps its
// number). Nothing ever merges, so classes are stable numbers across row
// changes; a class that ends up empty is dead. A class in words: ./class-words.ts.
//
// How many classes a design may have, and how large its diagram may grow, is
// the budget's (./budget.ts): past either, building stops with a BudgetStop.
// Every recursion here follows the diagram down one variable a level, so its
// depth is bounded by the design's bits, never by the number of rows.

import type { Pattern } from "../description/types.js";
import type { DesignDef, FieldDef } from "../wire/designs.js";
import { Bdd, copy, FALSE, TRUE } from "./bdd.js";
import { Budget } from "./budget.js";
import { atomsMeeting, classesWhere } from "./class-walks.js";
import type { ClassCut, RowPattern, SpaceListener } from "./space-types.js";
import { type FateOwner, type Moved, note, Refates, refated, regionMemo, walkAgain } from "./fate-owner.js";
import { mapRegion, type RegionMemo } from "./region-walk.js";
import { ALL_HOPS, hopsOf, NO_HOPS } from "./hops.js";
import { FieldBits, feasibleNode, formatPatterns, matchNode, patternKey, type SpaceField } from "./pattern-nodes.js";

interface Predicate {
  /** The patterns it was made of; none for a table's behaviour region (./tables.ts). */
  readonly match: ReadonlyMap<string, Pattern> | undefined;
  /** The predicate as a boolean diagram (FALSE for a table's behaviour, which has `table` and `leaf`). */
  readonly node: number;
  /** A table's behaviour (./tables.ts): the headers that reach `leaf` of the table's diagram `table`. */
  readonly table?: number;
  readonly leaf?: number;
  /** The table whose behaviour it is. */
  readonly owner?: FateOwner;
}

export type { ClassCut, RowPattern, SpaceListener } from "./space-types.js";

export class HeaderSpace {
  readonly design: DesignDef;
  /** The field kept apart as a set of values (./hops.ts), when the design has one. */
  readonly hopField: FieldDef | undefined;
  readonly fields: readonly SpaceField[];
  readonly bdd: Bdd;
  readonly #bits: FieldBits;
  readonly #preds: Predicate[] = [];
  readonly #predByKey = new Map<string, number>();
  readonly #patterns: RowPattern[] = [];
  readonly #patternByKey = new Map<string, number>();
  readonly cut: ClassCut;
  /** Tables cut by their rows' patterns because their behaviours passed their share of the budget (./tables.ts). */
  tablesByRows = 0;
  /** Feasible headers: the design's read rules make some field values impossible together. */
  readonly #domain: number;
  readonly #infeasible: number;
  readonly #leafSig = new Map<number, readonly number[]>();
  readonly #leafByKey = new Map<string, number>();
  #root = -1;
  readonly #atomLeaf: number[] = [];
  readonly #leafAtom = new Map<number, number>();
  readonly #dead: boolean[] = [];
  readonly #predAtoms: number[][] = [];
  readonly #witness = new Map<number, ReadonlyMap<string, bigint>>();
  readonly #listeners: SpaceListener[] = [];
  readonly #budget: Budget;
  /** What class-diagram nodes became under a table's fates (made at the first write that keeps them). */
  #refates: Refates | undefined;
  /** Headers per leaf (countHeaders), kept as writes move them; undefined until the first write asks for them. */
  #counts: Map<number, bigint> | undefined;

  /** `budget.maxClasses`: the most leaves (classes, dead ones included) the partition may make before it stops. */
  constructor(design: DesignDef, budget = new Budget(), cut: ClassCut = "behaviour") {
    this.design = design;
    this.cut = cut;
    this.#budget = budget;
    this.bdd = new Bdd(budget);
    this.hopField = design.fields.find((f) => f.name === design.hopLimitField);
    this.#bits = new FieldBits(design, this.hopField);
    this.fields = this.#bits.fields;
    this.#domain = feasibleNode(this.bdd, design, this.#bits.byName);
    this.#infeasible = this.bdd.terminal();
  }

  /** The values a row's hop-limit pattern allows (every value without one; 1n for a design without the field). */
  hops(match: ReadonlyMap<string, Pattern>): bigint {
    if (this.hopField === undefined) return NO_HOPS;
    const p = match.get(this.hopField.name);
    return p === undefined ? ALL_HOPS : hopsOf(p, this.hopField.bits);
  }

  /** Every hop value of this design. */
  get allHops(): bigint {
    return this.hopField === undefined ? NO_HOPS : ALL_HOPS;
  }

  /** What the space may spend (shared with the tables that cut it). */
  get budget(): Budget {
    return this.#budget;
  }

  get built(): boolean {
    return this.#root >= 0;
  }

  /** Classes made so far, while building too (a building the budget stopped made at least this many). */
  get made(): number {
    return this.#leafByKey.size;
  }

  /**
   * The predicate of a row's patterns (its hop-limit pattern aside), registered once; −1 when
   * it has none (it holds for every header). Registered after build(), a new predicate splits
   * classes at once, and the listeners hear of it.
   */
  predicate(match: ReadonlyMap<string, Pattern>): number {
    const key = this.#matchKey(match);
    if (key === "") return -1;
    const found = this.#predByKey.get(key);
    if (found !== undefined) return found;
    return this.#register(key, match, this.pattern(match));
  }

  /**
   * Cuts the classes by a table's behaviours (./behaviours.ts): the headers that reach each of `leaves` in the multi-
   * terminal diagram `table` are given `owner`'s predicate of that fate (the other leaves cut nothing; the headers of
   * `owner.omitted` lose the owner's predicates and get none). After build(), the classes the headers leave and join
   * split or die, and the listeners hear of it; returned, the classes walked again: those made, those whose witness
   * the write reached (which rows take it may have changed) or took away.
   */
  cutBy(table: number, leaves: readonly number[], owner: FateOwner): readonly number[] {
    const ids = new Map<number, number>();
    for (const leaf of leaves) ids.set(leaf, this.#fatePred(owner, table, leaf));
    if (ids.size === 0 || !this.built) return [];
    if (owner.shared) return this.#addLive(table, (moved) => this.#fates(ids, moved));
    return this.#addLive(
      table,
      (moved) => (fate) => {
        const id = ids.get(fate);
        return id === undefined ? undefined : (leaf) => this.#refate(leaf, owner, id, moved);
      },
      (moved) =>
        regionMemo((this.#refates ??= new Refates(this.bdd, this.#bits.vars)), owner, ids, {
          refate: (leaf, id) => this.#refate(leaf, owner, id, moved),
          isClass: (leaf) => leaf === this.#infeasible || this.#leafAtom.has(leaf),
        }),
    );
  }

  /** `owner`'s predicate of fate `leaf` of diagram `table` (new for each write of a shared owner); −1 for the omitted
   * fate. */
  #fatePred(owner: FateOwner, table: number, leaf: number): number {
    if (leaf === owner.omitted && !owner.shared) return -1;
    const found = owner.shared ? undefined : owner.preds.get(leaf);
    if (found !== undefined) return found;
    const id = this.#preds.push({ match: undefined, node: FALSE, table, leaf, owner }) - 1;
    this.#predAtoms.push([]);
    if (!owner.shared) owner.preds.set(leaf, id);
    return id;
  }

  /** Leaf `leaf` with `owner`'s predicates replaced by `id` (none when −1); `moved` hears of it when it changed. */
  #refate(leaf: number, owner: FateOwner, id: number, moved: Moved): number {
    if (leaf === this.#infeasible) return leaf;
    const r = this.#leaf(refated(this.#leafSig.get(leaf) ?? [], id, (q) => this.#preds[q]?.owner === owner));
    if (r !== leaf) note(moved, leaf, r);
    return r;
  }

  #register(key: string, match: ReadonlyMap<string, Pattern> | undefined, node: number): number {
    const id = this.#preds.length;
    this.#preds.push({ match, node });
    this.#predByKey.set(key, id);
    this.#predAtoms.push([]);
    if (this.built)
      this.#addLive(node, (moved) => (t) => (t === TRUE ? (leaf) => this.#mark(leaf, id, moved) : undefined));
    return id;
  }

  /**
   * A row's patterns (its hop-limit pattern aside) as a boolean diagram, remembered to say what classes are (describe)
   * but cutting none: TRUE when it has none.
   */
  pattern(match: ReadonlyMap<string, Pattern>): number {
    const key = this.#matchKey(match);
    if (key === "") return TRUE;
    const found = this.#patternByKey.get(key);
    if (found !== undefined) return this.#patterns[found]?.node ?? TRUE;
    const node = matchNode(this.bdd, this.fields, match);
    this.#patternByKey.set(key, this.#patterns.push({ match, node }) - 1);
    return node;
  }

  #matchKey(match: ReadonlyMap<string, Pattern>): string {
    return this.fields
      .flatMap((f) => {
        const p = match.get(f.def.name);
        return p === undefined ? [] : [`${f.def.name}:${patternKey(p)}`];
      })
      .join(" ");
  }

  /** Computes the classes of every predicate registered so far; later ones split them as they come. */
  build(): void {
    if (this.built) return;
    const empty = this.#leaf([]);
    // The feasible headers in one class, the others in none.
    let root = copy(this.bdd, this.#domain, this.bdd, (t) => (t === TRUE ? empty : this.#infeasible));
    const rows = this.#preds.filter((p) => p.match !== undefined).length;
    const unit =
      rows === 0 ? "behaviours" : rows === this.#preds.length ? "row patterns" : "behaviours and row patterns";
    this.#budget.stage(`building the ${this.design.name} header classes`, this.#preds.length, unit);
    for (let id = 0; id < this.#preds.length;) {
      this.#budget.need();
      const table = this.#preds[id]?.table;
      if (table === undefined) {
        root = this.#addPred(root, id++, undefined);
        continue;
      }
      // A table's behaviours at once: one walk of its diagram.
      const ids = new Map<number, number>();
      for (let p = this.#preds[id]; p?.table === table; p = this.#preds[++id]) {
        if (ids.size > 0) this.#budget.need();
        ids.set(p.leaf ?? -1, id);
      }
      root = this.#addFates(root, table, ids, undefined);
    }
    this.#root = root;
    // Classes numbered in the order a walk meets their leaves (low branch first): the same description, the same
    // numbers.
    this.bdd.firstPaths(root, (leaf) => {
      if (leaf !== this.#infeasible) this.#newAtom(leaf);
    });
  }

  listen(l: SpaceListener): void {
    this.#listeners.push(l);
  }

  /** Classes ever made (dead ones included): class numbers are below this. */
  get atomCount(): number {
    return this.#atomLeaf.length;
  }

  isDead(atom: number): boolean {
    return this.#dead[atom] === true;
  }

  /** The live classes, ascending. */
  atoms(): number[] {
    return this.#atomLeaf.flatMap((_, a) => (this.#dead[a] === true ? [] : [a]));
  }

  /** The classes a predicate holds for (dead ones may be listed: skip them). */
  atomsOf(pred: number): readonly number[] {
    return this.#predAtoms[pred] ?? [];
  }

  /** The predicates that hold for a class, ascending. */
  signature(atom: number): readonly number[] {
    return this.#leafSig.get(this.#atomLeaf[atom] ?? -1) ?? [];
  }

  /** The class of a header given by its field values (absent fields: 0), or −1 when no header has them (./bdd.ts
   * domain). */
  classify(values: ReadonlyMap<string, bigint>): number {
    return this.#leafAtom.get(this.#walk(values)) ?? -1;
  }

  /** The classes of the headers with these field values and any value in the fields left out (read-only fields a send
   * row cannot write). */
  classesWhere(values: ReadonlyMap<string, bigint>): number[] {
    return classesWhere(this.bdd, this.#bits, this.#root, (leaf) => this.#leafAtom.get(leaf), values);
  }

  /** A header of the class: field values (the hop-limit field left out). */
  witness(atom: number): ReadonlyMap<string, bigint> {
    let found = this.#witness.get(atom);
    if (found === undefined) {
      this.#findWitnesses();
      found = this.#witness.get(atom);
    }
    if (found === undefined) throw new Error(`class ${atom} of ${this.design.name} is empty`);
    return found;
  }

  /** A header of every live class that has none yet, in one walk of the diagram (a walk per class is one too many). */
  #findWitnesses(): void {
    this.bdd.firstPaths(this.#root, (leaf, bits) => {
      const atom = this.#leafAtom.get(leaf);
      if (atom !== undefined && !this.#witness.has(atom)) this.#witness.set(atom, this.#bits.header(bits));
    });
  }

  /** The rows' patterns registered so far (pattern()), as diagrams: what a class is said by (./class-words.ts). */
  get patterns(): readonly RowPattern[] {
    return this.#patterns;
  }

  /** Whether the design has a matchable field of this name (the hop-limit field aside). */
  hasField(name: string): boolean {
    return this.#bits.byName.has(name);
  }

  /** Patterns as a row writes them: "dst=10.0.2.0/24 proto=17". */
  formatMatch(match: ReadonlyMap<string, Pattern>): string {
    return formatPatterns(this.design, match);
  }

  /** Nodes in the diagram (a measure of its memory). */
  get nodes(): number {
    return this.bdd.size;
  }

  // ── What tables build their behaviour with (./tables.ts) ──────────────────

  /** The terminal of headers the design's parser cannot produce (no class). */
  get infeasible(): number {
    return this.#infeasible;
  }

  /** The feasible headers, as a boolean diagram. */
  get domain(): number {
    return this.#domain;
  }

  /** The terminal a header with these field values (absent fields: 0) reaches from `node`. */
  evaluate(node: number, values: ReadonlyMap<string, bigint>): number {
    return this.#bits.evaluate(this.bdd, node, values);
  }

  /** The headers of these classes, as a boolean diagram (what two partitions of one design compare). */
  headersOf(atoms: Iterable<number>): number {
    const leaves = new Set<number>();
    for (const a of atoms) {
      const leaf = this.#atomLeaf[a];
      if (leaf !== undefined && this.#dead[a] !== true) leaves.add(leaf);
    }
    return copy(this.bdd, this.#root, this.bdd, (leaf) => (leaves.has(leaf) ? TRUE : FALSE));
  }

  /**
   * The live classes some header of the boolean diagram `q` is in, ascending; undefined when finding them would take
   * more than `maxSteps` steps of the walk (a pattern that meets a large part of a large diagram).
   */
  atomsMeeting(q: number, maxSteps = Infinity): number[] | undefined {
    const live = (leaf: number): number | undefined => {
      const a = this.#leafAtom.get(leaf);
      return a === undefined || this.#dead[a] === true ? undefined : a;
    };
    return atomsMeeting(this.bdd, this.#root, q, live, this.#leafAtom.size, maxSteps);
  }

  // ── Building ──────────────────────────────────────────────────────────────

  #leaf(sig: readonly number[]): number {
    const key = sig.join(",");
    const found = this.#leafByKey.get(key);
    if (found !== undefined) return found;
    if (this.#leafByKey.size >= this.#budget.maxClasses)
      throw this.#budget.reached(
        "classes",
        `the rows cut the ${this.design.name} headers into more than ` +
          `${this.#budget.maxClasses.toLocaleString("en-US")} classes`,
      );
    const n = this.bdd.terminal();
    this.#leafByKey.set(key, n);
    this.#leafSig.set(n, sig);
    return n;
  }

  /** The diagram `root` with predicate `id` added to every leaf under it; `moved` hears of each leaf it replaced. */
  #addPred(root: number, id: number, moved: Moved | undefined): number {
    const p = this.#preds[id];
    if (p === undefined) throw new Error(`no predicate ${id}`);
    return this.bdd.mapUnder(root, p.node, (leaf) => this.#mark(leaf, id, moved));
  }

  /** Leaf `leaf` with predicate `id` added (the infeasible leaf stays); `moved` hears of it. */
  #mark(leaf: number, id: number, moved: Moved | undefined): number {
    if (leaf === this.#infeasible) return leaf;
    const r = this.#leaf([...(this.#leafSig.get(leaf) ?? []), id]);
    if (moved !== undefined) note(moved, leaf, r);
    return r;
  }

  #newAtom(leaf: number): number {
    const a = this.#atomLeaf.push(leaf) - 1;
    this.#leafAtom.set(leaf, a);
    for (const q of this.#leafSig.get(leaf) ?? []) this.#predAtoms[q]?.push(a);
    return a;
  }

  /** The diagram `root` with the predicates `ids` gives the leaves of the table's diagram `table` added where they
   * hold; `moved` hears of each leaf it replaced. */
  #addFates(root: number, table: number, ids: ReadonlyMap<number, number>, moved: Moved | undefined): number {
    return this.bdd.mapUnderLeaves(root, table, this.#fates(ids, moved));
  }

  /** Per leaf of a table's diagram, what its headers' leaves become: marked with the predicate `ids` gives it. */
  #fates(ids: ReadonlyMap<number, number>, moved: Moved | undefined) {
    return (fate: number): ((leaf: number) => number) | undefined => {
      const id = ids.get(fate);
      return id === undefined ? undefined : (leaf) => this.#mark(leaf, id, moved);
    };
  }

  /**
   * Predicates registered after build, where `replace` says (per leaf of diagram `region`, what the leaves of its
   * headers become; the other leaves of `region` are outside it): the classes they cut split, and the listeners hear of
   * it. What it costs follows the region, not the diagram: which classes still have headers is told by counting the
   * headers of each leaf (HeaderSpace.countHeaders), and a new class's headers are counted, and its witness found, in
   * the walk that cuts it (./region-walk.ts).
   */
  #addLive(
    region: number,
    replace: (moved: Moved) => (leaf: number) => ((t: number) => number) | undefined,
    memo?: (moved: Moved) => RegionMemo,
  ): number[] {
    this.#budget.stage(`adding a row's patterns to the ${this.design.name} header classes`, 1, "row patterns");
    const moved: Moved = new Map();
    const what = `cutting the ${this.design.name} header classes`;
    const f = replace(moved);
    const cut = mapRegion(this.bdd, this.#root, region, f, this.#bits.vars, what, memo?.(moved));
    this.#root = cut.root;
    const reached = cut.reached;
    const moving = (oldLeaf: number, newLeaf: number): bigint => {
      const got = reached.get(newLeaf);
      if (got === undefined) throw new Error(`a leaf of the ${this.design.name} classes was made outside its region`);
      return got.from.get(oldLeaf) ?? 0n;
    };
    const counts = this.#counts;
    if (counts === undefined && moved.size > 0) this.countHeaders();
    // Counts first: a class that loses headers and gains others in one write lives on.
    if (counts !== undefined)
      for (const [oldLeaf, to] of moved)
        for (const newLeaf of to) {
          const n = moving(oldLeaf, newLeaf);
          counts.set(newLeaf, (counts.get(newLeaf) ?? 0n) + n);
          counts.set(oldLeaf, (counts.get(oldLeaf) ?? 0n) - n);
        }
    const again: number[] = []; // classes made, and those whose witness moved away
    for (const [oldLeaf, to] of moved) {
      const from = this.#leafAtom.get(oldLeaf);
      if (from === undefined) continue; // a leaf no class has any more
      for (const newLeaf of to) {
        const into = this.#leafAtom.get(newLeaf);
        if (into !== undefined) {
          for (const l of this.#listeners) l.joined?.(from, into);
          continue;
        }
        const got = reached.get(newLeaf);
        const atom = this.#newAtom(newLeaf);
        again.push(atom);
        this.#witness.set(atom, this.#bits.header(got?.path ?? []));
        for (const l of this.#listeners) l.split(from, atom);
      }
    }
    for (const oldLeaf of moved.keys()) {
      const from = this.#leafAtom.get(oldLeaf);
      if (from === undefined) continue;
      // A witness that went with the headers that moved is no longer this one's: a class that lives on is walked again
      // from a header it still holds (its paths named the rows that took the old one).
      const w = this.#witness.get(from);
      const lost = w !== undefined && this.#walk(w) !== oldLeaf;
      if (lost) this.#witness.delete(from);
      if ((this.#counts?.get(oldLeaf) ?? 0n) === 0n) {
        this.#dead[from] = true;
        this.#leafAtom.delete(oldLeaf);
        for (const l of this.#listeners) l.died(from);
      } else if (lost) again.push(from);
    }
    // And the classes whose witness the write reached: which rows take it may have changed.
    const inside = (atom: number): boolean => {
      const w = this.#witness.get(atom);
      return w !== undefined && f(this.evaluate(region, w)) !== undefined;
    };
    return walkAgain(again, cut.met, (leaf) => this.#leafAtom.get(leaf), inside);
  }

  /** Counts the headers of each leaf (one walk of the diagram), from which writes after it tell which classes they
   * emptied without walking the diagram again: a running analysis (./live.ts) does it before its first write. */
  countHeaders(): void {
    if (this.built) this.#counts ??= this.bdd.countsUnder(this.#root, this.#bits.vars);
  }

  #walk(values: ReadonlyMap<string, bigint>): number {
    return this.evaluate(this.#root, values);
  }
}
