// A header table's behaviours (APKeep's predicates per action, NSDI'20): a
// multi-terminal decision diagram over the header bits whose leaves are what
// the table does with a header — per in-link slot, the actions that take it in
// priority order with the hop-limit values each takes, and the values no row
// takes — with the rule the description gives (docs/spec.md, "Order and
// meaning": a row wins where no row before it took the header). Rows that
// differ only in their number make one behaviour, so that a table of a
// thousand rows that say `out: 2` or `drop` has a few behaviours, not 2^k
// intersections of patterns; the header space (./header-space.ts) is cut by
// the behaviours, and which row won is found per class afterwards (./
// tables.ts).
//
// The diagram is built in the space's store, whose class diagram it then cuts
// without a copy (its leaves are terminals of their own there): each row alone,
// then pairs of neighbours composed (the earlier wins where it takes the
// header), pairs of pairs, and so on, so that each row is composed log2(rows)
// times, not once per row before it. Headers the design's parser cannot produce
// are left to the space (HeaderSpace.infeasible), not cut out here: that would
// be one more walk of the whole diagram. A table write redoes only the headers
// the row's patterns hold for, from the rows that meet them.
//
// A diagram that passes its share of the budget (random masks: rows that
// overlap every which way, a diagram of millions of nodes) is given up, and the
// table's rows cut the classes instead (./tables.ts): they make classes one
// pattern at a time, so a budget that stops them keeps those.

import type { RowSpec } from "../description/types.js";
import type { Bdd } from "./bdd.js";
import { type FateOwner, fateOwner } from "./fate-owner.js";
import type { HeaderSpace } from "./header-space.js";

const ID = 2 ** 22;

/** A header table's row as the analysis reads it (./tables.ts). */
export interface IndexedRow {
  /** The row's index in the description's table. */
  readonly index: number;
  readonly row: RowSpec;
  /** The predicate of its patterns when they cut the classes (cut `rows`); −1 when they do not, or it has none. */
  readonly pred: number;
  /** Its patterns (the hop limit's aside) as a boolean diagram in the space's store: TRUE when it has none. */
  readonly node: number;
  /** The hop-limit values its pattern allows (./hops.ts). */
  readonly hops: bigint;
  /** Lower wins. */
  readonly prio: number;
}

/** How rows become a behaviour diagram's terminals (./prefix-trie.ts builds an LPM table's from them). */
export interface RowLeaves {
  /** What these rows (one prefix's, by priority) do where they all hold, as a terminal. */
  own(rows: readonly IndexedRow[]): number;
  /** Terminal `own`, then `inherited` where it leaves values untaken. */
  then(own: number, inherited: number): number;
  /** What no row does. */
  readonly miss: number;
}

/** What a table does with a set of headers: per in-link slot, the values no row takes, and the rows that take the
 * others, in priority order. */
export interface Fate {
  readonly rest: readonly bigint[];
  readonly hits: readonly { readonly row: IndexedRow; readonly slot: number; readonly hops: bigint }[];
}

/** A fate with row `r` taking what it wins in the slots `slots` (all when undefined); undefined when it wins none. */
export function take(f: Fate, r: IndexedRow, slot: number | undefined): Fate | undefined {
  let rest: bigint[] | undefined;
  const hits = [...f.hits];
  f.rest.forEach((left, s) => {
    if (slot !== undefined && s !== slot) return;
    const t = left & r.hops;
    if (t === 0n) return;
    rest ??= [...f.rest];
    rest[s] = left ^ t;
    hits.push({ row: r, slot: s, hops: t });
  });
  return rest === undefined ? undefined : { rest, hits };
}

export class Behaviours {
  readonly #s: HeaderSpace;
  readonly #b: Bdd;
  readonly #slotOf: (r: IndexedRow) => number | undefined;
  readonly #leafByKey = new Map<string, number>();
  readonly #fates = new Map<number, Fate>();
  /** Leaves that leave nothing to later rows (`none` too). */
  readonly #full = new Set<number>();
  /** What each row alone does (#alone). */
  readonly #aloneOf = new Map<IndexedRow, number>();
  /** Composed leaves, by pair. */
  readonly #combined = new Map<number, number>();
  /** Headers a table write leaves as they were (update). */
  readonly #none: number;
  readonly #miss: number;
  /** Its fates' predicates in the space (HeaderSpace.cutBy): each write moves headers between them. */
  readonly owner: FateOwner = fateOwner();

  /** `slots`: in-link slots (./tables.ts); `slotOf`: the one a row's in-link names, undefined when it names none. */
  constructor(space: HeaderSpace, slots: number, slotOf: (r: IndexedRow) => number | undefined) {
    this.#s = space;
    // The space's store: a table's diagram is cut into the classes there without a copy.
    this.#b = space.bdd;
    this.#slotOf = slotOf;
    this.#none = this.#b.terminal();
    this.#full.add(this.#none);
    this.#miss = this.#leaf({ rest: Array.from({ length: slots }, () => space.allHops), hits: [] });
  }

  /**
   * The diagram of `rows` (active, by priority), and the space cut by its behaviours (all but one, which the others
   * leave); false, with nothing cut, when the diagram passes its share of the budget (Bdd.attempt).
   */
  build(rows: readonly IndexedRow[]): boolean {
    this.#s.budget.stage(`building the ${this.#s.design.name} header classes`, rows.length, "rows of a table");
    // Headers the design's parser cannot produce are in no class: the space leaves them out (HeaderSpace.infeasible).
    const diagram = this.#b.attempt(() => this.#fold(rows, 0, rows.length));
    if (diagram === undefined) return false;
    const fates = this.#fatesUnder(diagram);
    this.owner.omitted = fates[0];
    this.#s.cutBy(diagram, fates.slice(1), this.owner);
    return true;
  }

  /**
   * The headers of space node `node` done again from `rows` (the active rows that meet it, by priority), and the space
   * cut by the behaviours there (a table write).
   */
  update(node: number, rows: readonly IndexedRow[]): void {
    const diagram = this.#b.ite(node, this.#fold(rows, 0, rows.length), this.#none);
    this.#s.cutBy(diagram, this.#fatesUnder(diagram), this.owner);
  }

  /** The table's diagram made by `diagram` from what its rows do (an LPM table's prefix trie: ./prefix-trie.ts), and
   * the space cut by its behaviours as build() does. */
  buildFrom(diagram: (b: Bdd, leaves: RowLeaves) => number): void {
    this.#s.budget.stage(`building the ${this.#s.design.name} header classes`, 1, "tables");
    // Per fate, the prefixes whose rows lead to it: the fate most lead to is the one left out (a leaf's route up for
    // every other leaf's prefix, a FIB's most common next hop), as its headers are in most classes and marking them
    // would make the class diagram again nearly whole.
    const leaves = this.#rowLeaves();
    const uses = new Map<number, number>();
    const counted: RowLeaves = {
      ...leaves,
      then: (own, inherited) => {
        const t = leaves.then(own, inherited);
        uses.set(t, (uses.get(t) ?? 0) + 1);
        return t;
      },
    };
    const d = diagram(this.#b, counted);
    const fates = this.#fatesUnder(d);
    let most = 0;
    fates.forEach((t, k) => {
      if ((uses.get(t) ?? 0) > (uses.get(fates[most] ?? -1) ?? 0)) most = k;
    });
    this.owner.omitted = fates[most];
    this.#s.cutBy(
      d,
      fates.filter((_, k) => k !== most),
      this.owner,
    );
  }

  /** The headers `region` makes a diagram of (`none` elsewhere) done again, as update() does: the classes there now
   * (every one new: each header of the region is cut out of the class it was in). */
  updateFrom(region: (b: Bdd, leaves: RowLeaves, none: number) => number): readonly number[] {
    const d = region(this.#b, this.#rowLeaves(), this.#none);
    return this.#s.cutBy(d, this.#fatesUnder(d), this.owner);
  }

  #rowLeaves(): RowLeaves {
    return {
      own: (rows) => {
        this.#s.budget.need();
        let t = this.#miss;
        for (const r of rows) t = this.#after(t, this.#alone(r));
        return t;
      },
      then: (own, inherited) => this.#after(own, inherited),
      miss: this.#miss,
    };
  }

  /** The fates some header reaches in `d` (`none` aside). */
  #fatesUnder(d: number): number[] {
    return [...this.#b.terminalsUnder(d)].filter((t) => t !== this.#none);
  }

  /** Rows i..j composed, halves first. */
  #fold(rows: readonly IndexedRow[], i: number, j: number): number {
    if (j - i === 0) return this.#miss;
    if (j - i === 1) {
      const r = rows[i];
      if (r === undefined) return this.#miss;
      this.#s.budget.need();
      const t = this.#alone(r);
      return t === this.#miss ? t : this.#b.ite(r.node, t, this.#miss);
    }
    const m = (i + j) >> 1;
    return this.#compose(this.#fold(rows, i, m), this.#fold(rows, m, j));
  }

  /** What row `r` alone does, where its patterns hold: a terminal (found once a row: a write redoes its region). */
  #alone(r: IndexedRow): number {
    let t = this.#aloneOf.get(r);
    if (t === undefined) {
      const f = this.#fates.get(this.#miss);
      const after = f === undefined ? undefined : take(f, r, this.#slotOf(r));
      t = after === undefined ? this.#miss : this.#leaf(after);
      this.#aloneOf.set(r, t);
    }
    return t;
  }

  /** `x` then `y`: where `x` leaves values untaken, `y`'s rows take them. */
  #compose(x: number, y: number): number {
    const b = this.#b;
    const settled = (a: number, c: number): number | undefined => {
      if (c === this.#miss || this.#full.has(a)) return a;
      if (a === this.#miss) return c;
      return b.isTerminal(a) && b.isTerminal(c) ? this.#combine(a, c) : undefined;
    };
    return b.pairwise(x, y, settled, `composing a table's rows over ${this.#s.design.name} headers`);
  }

  /** Terminal `a` then terminal `c`, as #compose settles a pair of terminals. */
  #after(a: number, c: number): number {
    if (c === this.#miss || this.#full.has(a)) return a;
    if (a === this.#miss) return c;
    return this.#combine(a, c);
  }

  #combine(a: number, c: number): number {
    const key = a * ID + c;
    const found = this.#combined.get(key);
    if (found !== undefined) return found;
    const fa = this.#fates.get(a);
    const fc = this.#fates.get(c);
    let r = a;
    if (c === this.#none) r = c;
    else if (fa !== undefined && fc !== undefined && fa.rest.some((x) => x !== 0n)) {
      const hits = [...fa.hits];
      for (const h of fc.hits) {
        const t = h.hops & (fa.rest[h.slot] ?? 0n);
        if (t !== 0n) hits.push({ ...h, hops: t });
      }
      r = this.#leaf({ rest: fa.rest.map((x, s) => x & (fc.rest[s] ?? 0n)), hits });
    }
    this.#combined.set(key, r);
    return r;
  }

  #leaf(f: Fate): number {
    const key = fateKey(f);
    let t = this.#leafByKey.get(key);
    if (t === undefined) {
      t = this.#b.terminal();
      this.#leafByKey.set(key, t);
      this.#fates.set(t, f);
      if (f.rest.every((x) => x === 0n)) this.#full.add(t);
    }
    return t;
  }
}

/** A fate's identity: per slot, the values left and the actions that take the others (not which rows). */
function fateKey(f: Fate): string {
  return f.rest
    .map((left, s) => {
      const hits = f.hits.filter((h) => h.slot === s).map((h) => `${actionKey(h.row.row.action)}@${h.hops}`);
      return `${left}:${hits.join(";")}`;
    })
    .join("|");
}

/** What a header table's row does, without where it is written. */
export function actionKey(a: RowSpec["action"]): string {
  switch (a.kind) {
    case "out":
      return `out ${a.outLinks.join(",")}`;
    case "link":
      return `link ${a.network}.${a.ident}`;
    case "session":
      return `session ${a.network}.${a.session}`;
    case "push":
      return `push ${[...a.header].map(([k, v]) => `${k}=${v}`).join(",")}`;
    default:
      return a.kind;
  }
}
