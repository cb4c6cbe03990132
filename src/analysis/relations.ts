// The relations of the model over a component (./analysis.ts), kept per header
// class so that a table write walks again only the classes it touches (as
// APKeep and NetPlumber do): for each class, the (origin, member) pairs it
// contributes to `reachable` (seed §2.6.2; with bridging §5.1, with subduction
// §5.3), the black holes and the loops it meets. Across classes: how many
// classes reach each pair, so that "fully reachable" and "members no header
// reaches" are counts, not walks.
//
// The traffic model's relation, `effectivelyReachable` (seed §3.3), starts
// only from the headers members' send rows attach and ends only where a
// member receives: it is small, and walked whole (./traffic.ts).
//
// A class is walked when the analysis's budget allows it (./budget.ts): past
// the budget the relation holds the classes walked so far (`complete` false),
// whose tuples, loops and black holes are real, and says nothing of the rest.

import type { Analysis, Component } from "./analysis.js";
import { isResourceError } from "./budget.js";
import { componentName } from "./members.js";
import { type OriginGroups, originGroups } from "./origin-groups.js";
import { PairRows, PendingTells } from "./pair-rows.js";
import type { Affected } from "./tables.js";
import { type Hole, type Origin, type Step, Walker, type WalkEvents } from "./walk.js";

/** A black hole met by one class: where, and one path that leads there. */
export interface HoleAt {
  readonly atom: number;
  readonly hole: Hole;
  readonly origin: number;
  readonly path: readonly Step[];
}

/** A loop met by one class. */
export interface LoopAt {
  readonly atom: number;
  readonly link: number;
  readonly hops: bigint;
  /** The TTL ends it: the class comes back with lower hop limits. */
  readonly bounded: boolean;
  readonly origin: number;
  readonly path: readonly Step[];
}

/** A class the hop limit stopped (the data plane's `loop` drop): the first such crossing met from an origin. */
export interface LimitAt {
  readonly atom: number;
  readonly origin: number;
  readonly link: number;
  /** Links it would have crossed with this one (the layers' below counted). */
  readonly crossings: number;
  readonly path: readonly Step[];
}

interface AtomState {
  /** Local pair indices (origin × n + member), distinct. */
  readonly pairs: Int32Array;
  /** Tuples it made (its pairs, which a large component does not keep). */
  readonly tuples: number;
  /** Local indices of members reached from outside (an inbound external link). */
  readonly outside: Int32Array;
  readonly holes: readonly HoleAt[];
  readonly loop: LoopAt | undefined;
  readonly limits: readonly LimitAt[];
}

/** What one class meets: its pairs (local indices, distinct), the members reached from outside, holes, a loop. */
interface Found {
  readonly list: Int32Array;
  /** A large component's pairs (held as rows), instead of `list`. */
  readonly told?: PendingTells;
  readonly out: Int32Array;
  readonly holes: readonly HoleAt[];
  readonly loop: LoopAt | undefined;
  readonly limits: readonly LimitAt[];
}

/** The black holes a class meets, by member, table and link: the first path to each, and every hop value. */
function holeEvent(atom: number, holes: Map<string, HoleAt>): NonNullable<WalkEvents["hole"]> {
  return (origin, hole, path) => {
    const key = `${hole.member}/${hole.table}/${String(hole.link)}`;
    const was = holes.get(key);
    if (was === undefined) holes.set(key, { atom, hole, origin, path: path() });
    else if ((was.hole.hops | hole.hops) !== was.hole.hops)
      holes.set(key, { ...was, hole: { ...was.hole, hops: was.hole.hops | hole.hops } });
  };
}

/** The most members a component may have for per-pair counts (n² of them); larger ones keep one bit a pair and are not
 * updated in place. */
const COUNTED_MEMBERS = 4096;

export class ComponentRelation {
  readonly component: Component;
  readonly #a: Analysis;
  readonly #walker: Walker;
  /** Member index → local index. */
  readonly #local = new Map<number, number>();
  /** The same as an array (−1: not in the component), for the walk's members. */
  readonly #localOf: Int32Array;
  /** Per local member, the last origin (+1) that counted it: an origin's members each once. */
  readonly #mark: Int32Array;
  /** #reach's pairs of a large component (held as #rows) as it finds them. */
  readonly #told: PendingTells | undefined;
  /** #reach's pairs as it finds them, kept from class to class (a class of a fabric has thousands). */
  #pairs = new Int32Array(1024);
  readonly #n: number;
  /** Per pair: classes that reach it (small components), or one bit (large ones). */
  readonly #counts: Uint32Array | undefined;
  readonly #rows: PairRows | undefined;
  readonly #outside: Uint32Array;
  #pairsReached = 0;
  /** Per local member, the other members it reaches, and those that reach it (pairs of distinct members): who reaches
   * no one and whom no one reaches, without a look at n² pairs. */
  readonly #outDegree: Int32Array;
  readonly #inDegree: Int32Array;
  readonly #state = new Map<number, AtomState>();
  #tuples = 0;
  /** The classes walked (all of them, unless the budget ran out). */
  readonly #walked = new Set<number>();

  /** `loopsOnly`: the loops and nothing else (`strata check`'s warnings), found at a fraction of the cost.
   * `countedMembers`: the most members for per-pair counts (tests: the rows of a large component on a small one). */
  readonly #loopsOnly: boolean;
  /** Where loopsOnly's walks start: the same for every class ("all": the full relation's walk). */
  #loopOrigins: readonly Origin[] | "all" | undefined;

  constructor(
    a: Analysis,
    c: Component,
    options: { readonly loopsOnly?: boolean; readonly countedMembers?: number } = {},
  ) {
    this.#loopsOnly = options.loopsOnly === true;
    this.#a = a;
    this.component = c;
    this.#walker = new Walker(a);
    c.members.forEach((m, i) => this.#local.set(m, i));
    this.#localOf = new Int32Array(c.has.length).fill(-1);
    c.members.forEach((m, i) => (this.#localOf[m] = i));
    const n = (this.#n = c.members.length);
    this.#mark = new Int32Array(n);
    if (n <= (options.countedMembers ?? COUNTED_MEMBERS) && !this.#loopsOnly) this.#counts = new Uint32Array(n * n);
    else this.#rows = new PairRows(this.#loopsOnly ? 0 : n);
    if (this.#rows !== undefined && !this.#loopsOnly) this.#told = new PendingTells(this.#localOf, n);
    this.#outside = new Uint32Array(n);
    this.#outDegree = new Int32Array(n);
    this.#inDegree = new Int32Array(n);
    c.space.listen({ split: (from, born) => this.#copy(from, born), died: (atom) => this.#forget(atom) });
    const atoms = c.space.atoms();
    a.budget.stage(`walking reachable in ${componentName(c)}`, atoms.length, "header classes");
    this.#walk(atoms);
  }

  /** Header classes walked, and how many there are. */
  get walked(): { readonly classes: number; readonly of: number } {
    return { classes: this.#walked.size, of: this.component.space.atoms().length };
  }

  /** Every class was walked (the budget allowed it). */
  get complete(): boolean {
    const { classes, of } = this.walked;
    return classes === of;
  }

  /** Walks each class while the budget allows; a stack or a collection that runs out is a stop too. */
  #walk(atoms: readonly number[]): void {
    const budget = this.#a.budget;
    // The tables do not change while these classes are walked: the origins' groups are found once for them.
    const groups =
      this.#loopsOnly || atoms.length === 0
        ? undefined
        : originGroups(this.#a, (m, out) => this.#walker.linkOut(m, out), this.component);
    for (const atom of atoms) {
      if (!budget.take()) return;
      try {
        this.#add(atom, groups);
      } catch (err) {
        if (!isResourceError(err)) throw err;
        budget.stopFor("depth");
        return;
      }
    }
  }

  /** Whether update() can follow a change (a component small enough for per-pair counts); otherwise compute it afresh.
   * */
  get updatable(): boolean {
    return this.#counts !== undefined;
  }

  /** Walks again the classes a change may have changed (after Analysis.apply or replaceTables). */
  update(affected: Affected): void {
    if (this.#counts === undefined)
      throw new Error(`component ${this.component.name} has ${this.#n} members: it is analysed once, not updated`);
    const atoms = (affected === "all" ? this.component.space.atoms() : affected).filter(
      (atom) => !this.component.space.isDead(atom),
    );
    for (const atom of atoms) this.#forget(atom);
    this.#a.budget.stage(`walking reachable in ${componentName(this.component)}`, atoms.length, "header classes");
    this.#walk(atoms);
  }

  /** Header classes walked, tuples (class, origin, member) found. */
  get tuples(): number {
    return this.#tuples;
  }

  /** Pairs (origin, member) of distinct members that some class reaches, and how many pairs there are. */
  get pairs(): { readonly reached: number; readonly all: number } {
    let self = 0;
    for (let i = 0; i < this.#n; i++) if (this.#has(i * this.#n + i)) self++;
    const reached = this.#rows?.pairs ?? this.#pairsReached;
    return { reached: reached - self, all: this.#n * (this.#n - 1) };
  }

  /** Whether some class goes from `m0` to `m1` (member indices). */
  reaches(m0: number, m1: number): boolean {
    const i = this.#local.get(m0);
    const j = this.#local.get(m1);
    return i !== undefined && j !== undefined && this.#has(i * this.#n + j);
  }

  /** How many header classes go from `m0` to `m1` (member indices); a large component keeps one bit a pair: 1 or 0. */
  classesBetween(m0: number, m1: number): number {
    const i = this.#local.get(m0);
    const j = this.#local.get(m1);
    if (i === undefined || j === undefined) return 0;
    const k = i * this.#n + j;
    return this.#counts !== undefined ? (this.#counts[k] ?? 0) : this.#has(k) ? 1 : 0;
  }

  /** The pairs of distinct members no class goes between (origins `skip` says to leave out aside): the first `max`, and
   * how many. */
  missingPairs(
    max: number,
    skip: (origin: number) => boolean = () => false,
  ): { readonly pairs: [number, number][]; readonly count: number } {
    const pairs: [number, number][] = [];
    let count = 0;
    const ms = this.component.members;
    const n = this.#n;
    for (let i = 0; i < n; i++) {
      if (skip(ms[i] ?? -1)) continue;
      const missing = n - 1 - this.#outOf(i);
      count += missing;
      for (let j = 0; j < n && missing > 0 && pairs.length < max; j++)
        if (i !== j && !this.#has(i * n + j)) pairs.push([ms[i] ?? -1, ms[j] ?? -1]);
    }
    return { pairs, count };
  }

  /** Members that no other member and nothing from outside reaches. */
  unreachable(): number[] {
    const ms = this.component.members;
    return ms.filter((_, j) => (this.#outside[j] ?? 0) === 0 && this.#inOf(j) === 0);
  }

  /** Members that reach no other member (they transmit nothing that is acquired). */
  silent(): number[] {
    // A member alone has no other to reach: every member reaching every other holds there (the seed's predicate,
    // vacuously).
    if (this.#n < 2) return [];
    return this.component.members.filter((_, i) => this.#outOf(i) === 0);
  }

  holes(): HoleAt[] {
    return [...this.#state.values()].flatMap((s) => s.holes);
  }

  loops(): LoopAt[] {
    return [...this.#state.values()].flatMap((s) => (s.loop === undefined ? [] : [s.loop]));
  }

  /** The classes the hop limit stopped, one crossing each per origin. */
  limits(): LimitAt[] {
    return [...this.#state.values()].flatMap((s) => s.limits);
  }

  /** The other members local member `i` reaches, and those that reach it. */
  #outOf(i: number): number {
    return this.#rows?.outDegree(i) ?? this.#outDegree[i] ?? 0;
  }

  #inOf(j: number): number {
    return this.#rows?.inDegree(j) ?? this.#inDegree[j] ?? 0;
  }

  #has(k: number): boolean {
    if (this.#counts !== undefined) return (this.#counts[k] ?? 0) > 0;
    const i = Math.floor(k / this.#n);
    return this.#rows?.has(i, k - i * this.#n) === true;
  }

  #add(atom: number, groups: OriginGroups | undefined): void {
    if (this.#loopsOnly || groups === undefined) return this.#addLoop(atom);
    const found = this.#reach(atom, groups) ?? this.#walkEach(atom);
    this.#walked.add(atom);
    const { list, out } = found;
    this.#countAll(list);
    if (this.#rows !== undefined) found.told?.into(this.#rows);
    for (const j of out) this.#outside[j] = (this.#outside[j] ?? 0) + 1;
    const tuples = list.length + (found.told?.tuples ?? 0);
    this.#tuples += tuples;
    this.#state.set(atom, {
      pairs: this.#counts === undefined ? new Int32Array(0) : list,
      tuples,
      outside: out,
      holes: found.holes,
      loop: found.loop,
      limits: found.limits,
    });
  }

  /** What a class meets, each state walked once whatever origin meets it (Walker.reach); undefined when it comes back
   * to a link or meets the hop limit, where only the walk from each origin apart says. */
  #reach(atom: number, groups: OriginGroups): Found | undefined {
    const n = this.#n;
    let pairs = this.#pairs;
    let count = 0;
    const outside = new Set<number>();
    const holes = new Map<string, HoleAt>();
    const mark = this.#mark;
    mark.fill(0);
    const told = this.#told;
    told?.clear();
    const reached = (origin: number, members: Int32Array, m: number): void => {
      if (origin < 0) {
        for (let k = 0; k < m; k++) outside.add(this.#localOf[members[k] ?? 0] ?? -1);
        return;
      }
      if (told !== undefined) return told.one(origin, members, m);
      const o = this.#localOf[origin] ?? 0;
      if (pairs.length < count + m) {
        const grown = new Int32Array(Math.max(2 * pairs.length, count + m));
        grown.set(pairs.subarray(0, count));
        this.#pairs = pairs = grown;
      }
      for (let k = 0; k < m; k++) {
        const j = this.#localOf[members[k] ?? 0] ?? -1;
        if (mark[j] === o + 1) continue;
        mark[j] = o + 1;
        pairs[count++] = o * n + j;
      }
    };
    const alike = (origins: Int32Array, from: number, members: Int32Array, m: number): void => {
      if (told !== undefined) return told.alike(origins, from, members, m);
      for (let k = from; k < origins.length; k++) reached(origins[k] ?? 0, members, m);
    };
    const ok = this.#walker.reach(this.component, atom, { hole: holeEvent(atom, holes) }, reached, { groups, alike });
    if (!ok) return undefined;
    const list = pairs.slice(0, count);
    const out = Int32Array.from(outside).sort();
    return {
      list,
      ...(told === undefined ? {} : { told }),
      out,
      holes: [...holes.values()],
      loop: undefined,
      limits: [],
    };
  }

  /** What a class meets, walked from each origin apart. */
  #walkEach(atom: number): Found {
    const n = this.#n;
    const pairs = new Set<number>();
    const outside = new Set<number>();
    const holes = new Map<string, HoleAt>();
    let loop: LoopAt | undefined;
    const limits = new Map<number, LimitAt>();
    this.#walker.relation(this.component, atom, {
      acquired: (origin, member) => {
        const j = this.#local.get(member) ?? -1;
        if (origin < 0) outside.add(j);
        else pairs.add((this.#local.get(origin) ?? 0) * n + j);
      },
      hole: holeEvent(atom, holes),
      loop: (origin, link, hops, bounded, path) => {
        if (loop === undefined) loop = { atom, link, hops, bounded, origin, path: path() };
      },
      drop: (origin, drop, path) => {
        if (drop.reason === "loop" && !limits.has(origin))
          limits.set(origin, { atom, origin, link: drop.link ?? -1, crossings: drop.crossings ?? 0, path: path() });
      },
    });
    return {
      list: Int32Array.from(pairs).sort(),
      out: Int32Array.from(outside).sort(),
      holes: [...holes.values()],
      loop,
      limits: [...limits.values()],
    };
  }

  /**
   * Whether the class loops, walked from what members pass on (each state once for the class); when it does, walked
   * again as the full relation walks it, for the same first loop and path.
   */
  #addLoop(atom: number): void {
    this.#walked.add(atom);
    let loops = false;
    this.#loopOrigins ??= this.#walker.loopOrigins(this.component);
    const origins = this.#loopOrigins;
    this.#walker.relation(
      this.component,
      atom,
      { loop: () => (loops = true) },
      // "all": walked as the full relation walks it, each origin apart (a state one origin walked may go round only on
      // another's path, with the values that origin has).
      origins === "all" ? {} : { pairs: false, origins },
    );
    if (!loops) return;
    let loop: LoopAt | undefined;
    this.#walker.relation(this.component, atom, {
      loop: (origin, link, hops, bounded, path) => {
        loop ??= { atom, link, hops, bounded, origin, path: path() };
      },
    });
    this.#state.set(atom, {
      pairs: new Int32Array(0),
      tuples: 0,
      outside: new Int32Array(0),
      holes: [],
      loop,
      limits: [],
    });
  }

  #forget(atom: number): void {
    this.#walked.delete(atom);
    const s = this.#state.get(atom);
    if (s === undefined) return;
    for (const k of s.pairs) this.#count(k, -1);
    for (const j of s.outside) this.#outside[j] = (this.#outside[j] ?? 0) - 1;
    this.#tuples -= s.tuples;
    this.#state.delete(atom);
  }

  /**
   * The header space cut class `born` out of `from`: where this component's tables did not change, its headers do what
   * `from`'s did (a change to them walks it again: Analysis.apply's classes).
   */
  #copy(from: number, born: number): void {
    if (!this.#walked.has(from)) return;
    this.#walked.add(born);
    const s = this.#state.get(from);
    if (s === undefined) return;
    for (const k of s.pairs) this.#count(k, 1);
    for (const j of s.outside) this.#outside[j] = (this.#outside[j] ?? 0) + 1;
    this.#tuples += s.tuples;
    const at = <T extends { readonly atom: number }>(x: T): T => ({ ...x, atom: born });
    this.#state.set(born, {
      ...s,
      holes: s.holes.map(at),
      loop: s.loop === undefined ? undefined : at(s.loop),
      limits: s.limits.map(at),
    });
  }

  /** One class more reaches each pair of `list` (#count for each, in one loop: a class of a fabric has thousands). */
  #countAll(list: Int32Array): void {
    const counts = this.#counts;
    if (counts === undefined) {
      for (const k of list) this.#count(k, 1);
      return;
    }
    for (const k of list) {
      const was = counts[k] ?? 0;
      counts[k] = was + 1;
      if (was === 0) this.#joined(k, 1);
    }
  }

  /** Pair `k` is reached now (1), or no more (−1). */
  #joined(k: number, by: 1 | -1): void {
    this.#pairsReached += by;
    const i = Math.floor(k / this.#n);
    const j = k - i * this.#n;
    if (i === j) return;
    this.#outDegree[i] = (this.#outDegree[i] ?? 0) + by;
    this.#inDegree[j] = (this.#inDegree[j] ?? 0) + by;
  }

  #count(k: number, by: 1 | -1): void {
    if (this.#counts !== undefined) {
      const was = this.#counts[k] ?? 0;
      this.#counts[k] = was + by;
      if (was === 0 && by === 1) this.#joined(k, 1);
      if (was === 1 && by === -1) this.#joined(k, -1);
      return;
    }
    if (by === 1) this.#rows?.tell([Math.floor(k / this.#n)], 0, 1, Int32Array.of(k % this.#n));
  }
}
