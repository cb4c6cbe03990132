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
  readonly match: ReadonlyMap<string, Pattern>;
  /** The predicate as a boolean diagram. */
  readonly node: number;
}

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
  constructor(design: DesignDef, budget = new Budget()) {
    this.design = design;
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
    const parts = this.fields.flatMap((f) => {
      const p = match.get(f.def.name);
      return p === undefined ? [] : [`${f.def.name}:${patternKey(p)}`];
    });
    if (parts.length === 0) return -1;
    const key = parts.join(" ");
    const found = this.#predByKey.get(key);
    if (found !== undefined) return found;
    const id = this.#preds.length;
    this.#preds.push({ match, node: matchNode(this.bdd, this.fields, match) });
    this.#predByKey.set(key, id);
    this.#predAtoms.push([]);
    if (this.built) this.#addLive(id);
    return id;
  }

  /** Computes the classes of every predicate registered so far; later ones split them as they come. */
  build(): void {
    if (this.built) return;
    const empty = this.#leaf([]);
    let root = this.#mapBoolean(this.#domain, empty);
    this.#budget.stage(`building the ${this.design.name} header classes`, this.#preds.length, "row patterns");
    for (let id = 0; id < this.#preds.length; id++) {
      this.#budget.need();
      root = this.#addPred(root, id, undefined);
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

  /** A registered predicate's patterns. */
  predicateMatch(pred: number): ReadonlyMap<string, Pattern> {
    const p = this.#preds[pred];
    if (p === undefined) throw new Error(`no predicate ${pred}`);
    return p.match;
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
    const cached = this.#witness.get(atom);
    if (cached !== undefined) return cached;
    const leaf = this.#atomLeaf[atom];
    const path = leaf === undefined ? undefined : this.#pathTo(leaf);
    if (path === undefined) throw new Error(`class ${atom} of ${this.design.name} is empty`);
    const values = new Map(this.fields.map((f) => [f.def.name, 0n]));
    for (const [v, bit] of path) {
      if (bit === 0) continue;
      const f = this.fields[this.#varField[v] ?? 0];
      if (f !== undefined)
        values.set(f.def.name, (values.get(f.def.name) ?? 0n) | (1n << BigInt(this.#varShift[v] ?? 0)));
    }
    this.#witness.set(atom, values);
    return values;
  }

  /**
   * The class in words: the patterns every header of it matches, then those it is carved out
   * of ("dst=02:00:00:00:00:03", "any header except dst=…, dst=… (+1021 more)").
   */
  describe(atom: number, maxExcept = 3): string {
    const sig = this.signature(atom);
    const inside = new Set(sig);
    let node = this.#domain;
    const held = new Map<string, Pattern[]>();
    for (const p of sig) {
      const pred = this.#preds[p];
      if (pred === undefined) continue;
      node = this.bdd.and(node, pred.node);
      for (const [name, pattern] of pred.match)
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
    const except: string[] = [];
    let more = 0;
    this.#preds.forEach((pred, q) => {
      if (inside.has(q) || this.bdd.and(node, pred.node) === FALSE) return;
      if (except.length < maxExcept) except.push(this.formatMatch(pred.match));
      else more++;
    });
    const base = parts.length === 0 ? "any header" : parts.join(" ");
    if (except.length === 0) return base;
    return `${base} except ${except.join(", ")}${more > 0 ? ` (+${more} more)` : ""}`;
  }

  /** Patterns as a row writes them: "dst=10.0.2.0/24 proto=17". */
  formatMatch(match: ReadonlyMap<string, Pattern>): string {
    return formatPatterns(this.design, match);
  }

  /** Nodes in the diagram (a measure of its memory). */
  get nodes(): number {
    return this.bdd.size;
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
    const b = this.bdd;
    const p = this.#preds[id];
    if (p === undefined) throw new Error(`no predicate ${id}`);
    const marked = new Map<number, number>();
    const mark = (f: number): number => {
      const found = marked.get(f);
      if (found !== undefined) return found;
      let r: number;
      if (b.isTerminal(f)) {
        r = f === this.#infeasible ? f : this.#leaf([...(this.#leafSig.get(f) ?? []), id]);
        if (r !== f) moved?.set(f, r);
      } else {
        r = b.mk(b.variable(f), mark(b.low(f)), mark(b.high(f)));
      }
      marked.set(f, r);
      return r;
    };
    const memo = new Map<number, number>();
    const rec = (f: number, q: number): number => {
      if (q === FALSE) return f;
      if (q === TRUE) return mark(f);
      const key = f * ID + q;
      const found = memo.get(key);
      if (found !== undefined) return found;
      const v = Math.min(b.variable(f), b.variable(q));
      const [f0, f1] = b.cofactors(f, v);
      const [q0, q1] = b.cofactors(q, v);
      const r = b.mk(v, rec(f0, q0), rec(f1, q1));
      // A Map has a largest size: work past a few times the diagram's budget is a stop, not a crash.
      if (memo.size >= 3 * this.#budget.maxNodes)
        throw this.#budget.reached(
          "nodes",
          `adding a row's predicate to the ${this.design.name} classes took too long`,
        );
      memo.set(key, r);
      return r;
    };
    return rec(root, p.node);
  }

  #newAtom(leaf: number): number {
    const a = this.#atomLeaf.push(leaf) - 1;
    this.#leafAtom.set(leaf, a);
    for (const q of this.#leafSig.get(leaf) ?? []) this.#predAtoms[q]?.push(a);
    return a;
  }

  /** A predicate registered after build(): the classes it cuts split, and the listeners hear of it. */
  #addLive(id: number): void {
    this.#budget.stage(`adding a row's patterns to the ${this.design.name} header classes`, 1, "row patterns");
    const moved = new Map<number, number>();
    this.#root = this.#addPred(this.#root, id, moved);
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

  /** The leaves some header reaches: every path of a reduced diagram is a header. */
  #leaves(): Set<number> {
    const b = this.bdd;
    const out = new Set<number>();
    const seen = new Uint8Array(b.size);
    const stack = [this.#root];
    for (let n = stack.pop(); n !== undefined; n = stack.pop()) {
      if (seen[n] === 1) continue;
      seen[n] = 1;
      if (b.isTerminal(n)) out.add(n);
      else stack.push(b.low(n), b.high(n));
    }
    return out;
  }

  #walk(values: ReadonlyMap<string, bigint>): number {
    let n = this.#root;
    const b = this.bdd;
    while (!b.isTerminal(n)) {
      const v = b.variable(n);
      const f = this.fields[this.#varField[v] ?? 0];
      const value = f === undefined ? 0n : (values.get(f.def.name) ?? 0n);
      n = (value >> BigInt(this.#varShift[v] ?? 0)) & 1n ? b.high(n) : b.low(n);
    }
    return n;
  }

  /** The variables set on some path from the root to `leaf`, or undefined when no path leads there. */
  #pathTo(leaf: number): [number, number][] | undefined {
    const b = this.bdd;
    const dead = new Set<number>();
    const path: [number, number][] = [];
    const rec = (n: number): boolean => {
      if (n === leaf) return true;
      if (b.isTerminal(n) || dead.has(n)) return false;
      const v = b.variable(n);
      path.push([v, 0]);
      if (rec(b.low(n))) return true;
      path.pop();
      path.push([v, 1]);
      if (rec(b.high(n))) return true;
      path.pop();
      dead.add(n);
      return false;
    };
    return rec(this.#root) ? path : undefined;
  }
}

/** One header space per design, shared by every network of that design (bridged and subducted networks have one). */
export class HeaderSpaces {
  readonly #spaces = new Map<string, HeaderSpace>();
  readonly budget: Budget;

  /** `budget`: shared by every design's space (its class bound is per design). */
  constructor(budget = new Budget()) {
    this.budget = budget;
  }

  of(design: DesignDef): HeaderSpace {
    let s = this.#spaces.get(design.name);
    if (s === undefined) {
      s = new HeaderSpace(design, this.budget);
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
