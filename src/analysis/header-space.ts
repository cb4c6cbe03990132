// Header classes: the coarsest partition of a design's headers that no row can
// split (atomic predicates, Yang & Lam; APKeep keeps them as rules change).
// Every row's match is a predicate over the design's matchable fields (src/wire/
// designs.ts) — exact, prefix, ternary and range patterns alike — and two
// headers are in one class when every predicate holds for both or for
// neither. A class is then a number, and a table is, for each class, the rows
// that may win; what a packet does depends only on its class, its in-link and
// its hop-limit value (./hops.ts, kept apart because forwarding changes it).
//
// The partition is one multi-terminal decision diagram over the fields' bits
// (./bdd.ts): each leaf is the set of predicates that hold on the paths to it,
// and each leaf is a class. Adding a predicate marks the leaves under it; a
// leaf partly under it splits in two (a new class), one wholly under it moves
// (the class keeps its number). Nothing ever merges, so classes are stable
// numbers across row changes; a class that ends up empty is dead.
//
// How many classes a design may have, and how large its diagram may grow, is
// the budget's (./budget.ts): past either, building stops with a BudgetStop.
// Every recursion here follows the diagram down one variable a level, so its
// depth is bounded by the design's bits, never by the number of rows.
// A row's patterns become diagrams in ./pattern-nodes.ts.

import type { Pattern } from "../description/types.js";
import type { DesignDef, FieldDef } from "../wire/designs.js";
import { Bdd, FALSE, TRUE } from "./bdd.js";
import { Budget } from "./budget.js";
import { ALL_HOPS, hopsOf, NO_HOPS } from "./hops.js";
import { feasibleNode, formatPatterns, matchNode, patternKey, type SpaceField } from "./pattern-nodes.js";

interface Predicate {
  /** The patterns it was made of; none for a table's behaviour region (./tables.ts). */
  readonly match: ReadonlyMap<string, Pattern> | undefined;
  /** The predicate as a boolean diagram (FALSE for a table's behaviour, which has `table` and `leaf`). */
  readonly node: number;
  /** A table's behaviour (./tables.ts): the headers that reach `leaf` of the table's diagram `table`. */
  readonly table?: number;
  readonly leaf?: number;
}

/** Rows' patterns, kept to say what a class is (describe), whether or not they cut the classes. */
interface Pattern_ {
  readonly match: ReadonlyMap<string, Pattern>;
  readonly node: number;
}

/**
 * What the classes are cut by. `behaviour` (the default): per table, the headers that meet the same fate there
 * (./behaviours.ts), so that rows leading to the same action cut nothing (APKeep's merge of predicates per
 * port); `rows`: every row's patterns, the finer partition the analysis had before (kept to compare the two).
 */
export type ClassCut = "behaviour" | "rows";

const ID = 2 ** 22;

/** What a split or a death tells the tables that index classes. */
export interface SpaceListener {
  /** Class `born` was cut out of class `from` (it is in every predicate `from` is in, and one more). */
  split(from: number, born: number): void;
  /** Class `atom` became empty. */
  died(atom: number): void;
}

export class HeaderSpace {
  readonly design: DesignDef;
  /** The field kept apart as a set of values (./hops.ts), when the design has one. */
  readonly hopField: FieldDef | undefined;
  readonly fields: readonly SpaceField[];
  readonly bdd: Bdd;
  readonly #varField: Int32Array;
  readonly #varShift: Int32Array;
  readonly #byName: ReadonlyMap<string, SpaceField>;
  readonly #preds: Predicate[] = [];
  readonly #predByKey = new Map<string, number>();
  readonly #patterns: Pattern_[] = [];
  readonly #patternByKey = new Map<string, number>();
  readonly cut: ClassCut;
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

  /** `budget.maxClasses`: the most leaves (classes, dead ones included) the partition may make before it stops. */
  constructor(design: DesignDef, budget = new Budget(), cut: ClassCut = "behaviour") {
    this.design = design;
    this.cut = cut;
    this.#budget = budget;
    this.bdd = new Bdd(budget);
    this.hopField = design.fields.find((f) => f.name === design.hopLimitField);
    let v = 0;
    const fields: SpaceField[] = [];
    for (const def of design.fields) {
      if (def === this.hopField) continue;
      fields.push({ def, first: v, bits: def.bits });
      v += def.bits;
    }
    this.fields = fields;
    this.#byName = new Map(fields.map((f) => [f.def.name, f]));
    this.#varField = new Int32Array(v);
    this.#varShift = new Int32Array(v);
    fields.forEach((f, i) => {
      for (let b = 0; b < f.bits; b++) {
        this.#varField[f.first + b] = i;
        this.#varShift[f.first + b] = f.bits - 1 - b;
      }
    });
    this.#domain = feasibleNode(this.bdd, design, this.#byName);
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
   * terminal diagram `table` become a predicate (the other leaves cut nothing). After build(), as predicate().
   */
  cutBy(table: number, leaves: readonly number[]): void {
    const ids = new Map<number, number>();
    for (const leaf of leaves) {
      ids.set(leaf, this.#preds.push({ match: undefined, node: FALSE, table, leaf }) - 1);
      this.#predAtoms.push([]);
    }
    if (ids.size > 0 && this.built) this.#addLive((root, moved) => this.#addFates(root, table, ids, moved));
  }

  #register(key: string, match: ReadonlyMap<string, Pattern> | undefined, node: number): number {
    const id = this.#preds.length;
    this.#preds.push({ match, node });
    this.#predByKey.set(key, id);
    this.#predAtoms.push([]);
    if (this.built) this.#addLive((root, moved) => this.#addPred(root, id, moved));
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
    let root = this.#mapBoolean(this.#domain, empty);
    const unit = this.cut === "rows" ? "row patterns" : "behaviours";
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
    const seen = new Set<number>();
    const walk = (n: number): void => {
      if (seen.has(n)) return;
      seen.add(n);
      if (this.bdd.isTerminal(n)) {
        if (n !== this.#infeasible) this.#newAtom(n);
        return;
      }
      walk(this.bdd.low(n));
      walk(this.bdd.high(n));
    };
    walk(root);
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
    const out = new Set<number>();
    const b = this.bdd;
    const seen = new Set<number>();
    const walk = (n: number): void => {
      if (b.isTerminal(n)) {
        const a = this.#leafAtom.get(n);
        if (a !== undefined) out.add(a);
        return;
      }
      const v = b.variable(n);
      const f = this.fields[this.#varField[v] ?? 0];
      const value = f === undefined ? undefined : values.get(f.def.name);
      if (value === undefined) {
        // A free bit: both ways (a node met again below a free bit leads to the same leaves).
        if (seen.has(n)) return;
        seen.add(n);
        walk(b.low(n));
        walk(b.high(n));
        return;
      }
      walk((value >> BigInt(this.#varShift[v] ?? 0)) & 1n ? b.high(n) : b.low(n));
    };
    walk(this.#root);
    return [...out].sort((x, y) => x - y);
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
    const b = this.bdd;
    const seen = new Set<number>();
    const bits: number[] = [];
    const rec = (n: number): void => {
      if (seen.has(n)) return;
      seen.add(n);
      if (b.isTerminal(n)) {
        const atom = this.#leafAtom.get(n);
        if (atom !== undefined && !this.#witness.has(atom)) this.#witness.set(atom, this.#valuesOf(bits));
        return;
      }
      rec(b.low(n));
      bits.push(b.variable(n));
      rec(b.high(n));
      bits.pop();
    };
    rec(this.#root);
  }

  /** The header whose set bits are the variables `bits`. */
  #valuesOf(bits: readonly number[]): Map<string, bigint> {
    const values = new Map(this.fields.map((f) => [f.def.name, 0n]));
    for (const v of bits) {
      const f = this.fields[this.#varField[v] ?? 0];
      if (f !== undefined)
        values.set(f.def.name, (values.get(f.def.name) ?? 0n) | (1n << BigInt(this.#varShift[v] ?? 0)));
    }
    return values;
  }

  /**
   * The class in words: the patterns every header of it matches, then those it is carved out
   * of ("dst=02:00:00:00:00:03", "any header except dst=…, dst=… (+1021 more)"). A class cut by
   * behaviour may join headers no such words tell apart from others: it is then said by one of its
   * headers' ("like dst=02:00:00:00:00:03").
   */
  describe(atom: number, maxExcept = 3): string {
    const region = this.#region(this.#root, (leaf) => leaf === this.#atomLeaf[atom]);
    const inside = this.#patterns.flatMap((p, q) => (this.bdd.minus(region, p.node) === FALSE ? [q] : []));
    const said = this.#words(inside, maxExcept);
    if (said.exact === region) return said.text;
    const w = this.witness(atom);
    const around = this.#patterns.flatMap((p, q) => (this.evaluate(p.node, w) === TRUE ? [q] : []));
    return `like ${this.#words(around, maxExcept).text}`;
  }

  /** The headers matching every pattern of `inside` and no other, in words, and as a diagram. */
  #words(inside: readonly number[], maxExcept: number): { text: string; exact: number } {
    const held = new Map<string, Pattern[]>();
    let node = this.#domain;
    for (const q of inside) {
      const p = this.#patterns[q];
      if (p === undefined) continue;
      node = this.bdd.and(node, p.node);
      for (const [name, pattern] of p.match)
        if (this.#byName.has(name)) held.set(name, [...(held.get(name) ?? []), pattern]);
    }
    // On one field, an exact value says it all, and the longest of nested prefixes.
    const parts = this.fields.flatMap((f) => {
      const ps = held.get(f.def.name) ?? [];
      const exact = ps.find((p) => p.kind === "exact");
      const prefixes = ps
        .filter((p) => p.kind === "prefix")
        .sort((x, y) => (y.kind === "prefix" && x.kind === "prefix" ? y.len - x.len : 0));
      const keep =
        exact !== undefined
          ? [exact]
          : [...(prefixes[0] === undefined ? [] : [prefixes[0]]), ...ps.filter((p) => p.kind !== "prefix")];
      return [...new Set(keep.map((p) => this.formatMatch(new Map([[f.def.name, p]]))))];
    });
    const set = new Set(inside);
    const except: string[] = [];
    let more = 0;
    let exact = node;
    this.#patterns.forEach((p, q) => {
      if (set.has(q) || this.bdd.and(node, p.node) === FALSE) return;
      exact = this.bdd.minus(exact, p.node);
      if (except.length < maxExcept) except.push(this.formatMatch(p.match));
      else more++;
    });
    const base = parts.length === 0 ? "any header" : parts.join(" ");
    if (except.length === 0) return { text: base, exact };
    return { text: `${base} except ${except.join(", ")}${more > 0 ? ` (+${more} more)` : ""}`, exact };
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
    let n = node;
    const b = this.bdd;
    while (!b.isTerminal(n)) {
      const v = b.variable(n);
      const f = this.fields[this.#varField[v] ?? 0];
      const value = f === undefined ? 0n : (values.get(f.def.name) ?? 0n);
      n = (value >> BigInt(this.#varShift[v] ?? 0)) & 1n ? b.high(n) : b.low(n);
    }
    return n;
  }

  /** The headers of these classes, as a boolean diagram (what two partitions of one design compare). */
  headersOf(atoms: Iterable<number>): number {
    const leaves = new Set<number>();
    for (const a of atoms) {
      const leaf = this.#atomLeaf[a];
      if (leaf !== undefined && this.#dead[a] !== true) leaves.add(leaf);
    }
    return this.#region(this.#root, (leaf) => leaves.has(leaf));
  }

  /** The headers of the multi-terminal diagram `root` whose leaf `inside` takes, as a boolean diagram. */
  #region(root: number, inside: (leaf: number) => boolean): number {
    const b = this.bdd;
    const memo = new Map<number, number>();
    const rec = (n: number): number => {
      if (b.isTerminal(n)) return n !== this.#infeasible && inside(n) ? TRUE : FALSE;
      const found = memo.get(n);
      if (found !== undefined) return found;
      const r = b.mk(b.variable(n), rec(b.low(n)), rec(b.high(n)));
      memo.set(n, r);
      return r;
    };
    return rec(root);
  }

  /**
   * The live classes some header of the boolean diagram `q` is in, ascending; undefined when finding them would take
   * more than `maxSteps` steps of the walk (a pattern that meets a large part of a large diagram).
   */
  atomsMeeting(q: number, maxSteps = Infinity): number[] | undefined {
    const b = this.bdd;
    const out = new Set<number>();
    const seen = new Set<number>();
    // Every live class met: the rest of the walk can find no other (a row of a few wide patterns meets them all).
    const all = this.#leafAtom.size;
    const rec = (n: number, p: number): boolean => {
      if (p === FALSE || out.size === all) return true;
      if (b.isTerminal(n)) {
        const a = this.#leafAtom.get(n);
        if (a !== undefined && this.#dead[a] !== true) out.add(a);
        return true;
      }
      const key = n * ID + p;
      if (seen.has(key)) return true;
      seen.add(key);
      if (seen.size > maxSteps) return false;
      const v = Math.min(b.variable(n), b.variable(p));
      const [n0, n1] = b.cofactors(n, v);
      const [p0, p1] = b.cofactors(p, v);
      return rec(n0, p0) && rec(n1, p1);
    };
    return rec(this.#root, q) ? [...out].sort((x, y) => x - y) : undefined;
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

  /** A boolean diagram with TRUE turned into `leaf` and FALSE into the infeasible leaf. */
  #mapBoolean(n: number, leaf: number): number {
    const memo = new Map<number, number>();
    const rec = (x: number): number => {
      if (x === TRUE) return leaf;
      if (x === FALSE) return this.#infeasible;
      const found = memo.get(x);
      if (found !== undefined) return found;
      const r = this.bdd.mk(this.bdd.variable(x), rec(this.bdd.low(x)), rec(this.bdd.high(x)));
      memo.set(x, r);
      return r;
    };
    return rec(n);
  }

  /** The diagram `root` with predicate `id` added to every leaf under it; `moved` hears of each leaf it replaced. */
  #addPred(root: number, id: number, moved: Map<number, number> | undefined): number {
    const p = this.#preds[id];
    if (p === undefined) throw new Error(`no predicate ${id}`);
    return this.bdd.mapUnder(root, p.node, (leaf) => {
      if (leaf === this.#infeasible) return leaf;
      const r = this.#leaf([...(this.#leafSig.get(leaf) ?? []), id]);
      moved?.set(leaf, r);
      return r;
    });
  }

  #newAtom(leaf: number): number {
    const a = this.#atomLeaf.push(leaf) - 1;
    this.#leafAtom.set(leaf, a);
    for (const q of this.#leafSig.get(leaf) ?? []) this.#predAtoms[q]?.push(a);
    return a;
  }

  /** The diagram `root` with the predicates `ids` gives the leaves of the table's diagram `table` added where they
   * hold; `moved` hears of each leaf it replaced. */
  #addFates(
    root: number,
    table: number,
    ids: ReadonlyMap<number, number>,
    moved: Map<number, number> | undefined,
  ): number {
    const b = this.bdd;
    const marked = new Map<number, Map<number, number>>();
    const mark = (f: number, id: number): number => {
      const memo = marked.get(id) ?? new Map<number, number>();
      marked.set(id, memo);
      const rec = (n: number): number => {
        const found = memo.get(n);
        if (found !== undefined) return found;
        let r: number;
        if (!b.isTerminal(n)) r = b.mk(b.variable(n), rec(b.low(n)), rec(b.high(n)));
        else if (n === this.#infeasible) r = n;
        else {
          r = this.#leaf([...(this.#leafSig.get(n) ?? []), id]);
          moved?.set(n, r);
        }
        memo.set(n, r);
        return r;
      };
      return rec(f);
    };
    const memo = new Map<number, number>();
    const rec = (f: number, g: number): number => {
      if (b.isTerminal(g)) {
        const id = ids.get(g);
        return id === undefined ? f : mark(f, id);
      }
      const key = f * ID + g;
      const found = memo.get(key);
      if (found !== undefined) return found;
      const v = Math.min(b.variable(f), b.variable(g));
      const [f0, f1] = b.cofactors(f, v);
      const [g0, g1] = b.cofactors(g, v);
      const r = b.mk(v, rec(f0, g0), rec(f1, g1));
      if (memo.size >= 3 * this.#budget.maxNodes)
        throw this.#budget.reached("nodes", `adding a table to the ${this.design.name} classes took too long`);
      memo.set(key, r);
      return r;
    };
    return rec(root, table);
  }

  /** Predicates registered after build (`add` puts them in a diagram): the classes they cut split, and the listeners
   * hear of it. */
  #addLive(add: (root: number, moved: Map<number, number>) => number): void {
    this.#budget.stage(`adding a row's patterns to the ${this.design.name} header classes`, 1, "row patterns");
    const moved = new Map<number, number>();
    this.#root = add(this.#root, moved);
    if (moved.size === 0) return;
    // One walk of the diagram for every class the predicate cut (a search per class made a reload that cuts 10^4
    // classes take minutes).
    const left = this.#leaves();
    for (const [oldLeaf, newLeaf] of moved) {
      const from = this.#leafAtom.get(oldLeaf);
      if (from === undefined) continue; // a leaf no class has any more
      const born = this.#newAtom(newLeaf);
      const alive = left.has(oldLeaf);
      // A witness that went with the new class is no longer this one's.
      const w = this.#witness.get(from);
      if (w !== undefined && this.#walk(w) !== oldLeaf) this.#witness.delete(from);
      for (const l of this.#listeners) l.split(from, born);
      if (!alive) {
        this.#dead[from] = true;
        this.#leafAtom.delete(oldLeaf);
        for (const l of this.#listeners) l.died(from);
      }
    }
  }

  #leaves(): Set<number> {
    return this.leavesUnder(this.#root);
  }

  /** The leaves some header reaches from `root` (the infeasible one aside): every path of a reduced diagram is a
   * header. */
  leavesUnder(root: number): Set<number> {
    const b = this.bdd;
    const out = new Set<number>();
    const seen = new Uint8Array(b.size);
    const stack = [root];
    for (let n = stack.pop(); n !== undefined; n = stack.pop()) {
      if (seen[n] === 1) continue;
      seen[n] = 1;
      if (b.isTerminal(n)) {
        if (n !== this.#infeasible) out.add(n);
      } else stack.push(b.low(n), b.high(n));
    }
    return out;
  }

  #walk(values: ReadonlyMap<string, bigint>): number {
    return this.evaluate(this.#root, values);
  }
}

/** One header space per design, shared by every network of that design (bridged and subducted networks have one). */
export class HeaderSpaces {
  readonly #spaces = new Map<string, HeaderSpace>();
  readonly budget: Budget;

  /** `budget`: shared by every design's space (its class bound is per design). */
  readonly cut: ClassCut;

  constructor(budget = new Budget(), cut: ClassCut = "behaviour") {
    this.budget = budget;
    this.cut = cut;
  }

  of(design: DesignDef): HeaderSpace {
    let s = this.#spaces.get(design.name);
    if (s === undefined) {
      s = new HeaderSpace(design, this.budget, this.cut);
      this.#spaces.set(design.name, s);
    }
    return s;
  }

  build(): void {
    for (const s of this.#spaces.values()) s.build();
  }

  all(): HeaderSpace[] {
    return [...this.#spaces.values()];
  }
}
