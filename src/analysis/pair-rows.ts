// Which (origin, member) pairs some header class reaches, in a component too
// large for a count a pair (./relations.ts): a row of bits an origin, the
// members it reaches, and origins that reach the same members hold one row
// (the hosts under a leaf of a fabric: ./origin-groups.ts tells them
// together). A row is copied when some of its holders reach more than the
// others; the degrees are counted from the rows when asked for. At 20,000
// members a bit a pair was 50 MB set pair by pair; a few hundred rows are a
// few MB, set a group at a time.

/** The bits set in a 32-bit word. */
function popcount(w: number): number {
  let x = w - ((w >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

export class PairRows {
  readonly #n: number;
  readonly #words: number;
  /** Per origin, its row (−1: it reaches no one yet). */
  readonly #rowOf: Int32Array;
  readonly #rows: Uint32Array[] = [];
  /** Per row, the origins that hold it. */
  readonly #holders: number[] = [];
  /** Per origin, the other members it reaches; per member, the others that reach it; pairs, an origin's own too. */
  #out: Int32Array | undefined;
  #in: Int32Array | undefined;
  #pairs = 0;

  constructor(n: number) {
    this.#n = n;
    this.#words = Math.ceil(n / 32);
    this.#rowOf = new Int32Array(n).fill(-1);
  }

  has(origin: number, member: number): boolean {
    const row = this.#rows[this.#rowOf[origin] ?? -1];
    return row !== undefined && (((row[member >>> 5] ?? 0) >>> (member & 31)) & 1) === 1;
  }

  /** Origins `origins[from..to)` (local indices) each reach `members` (local, distinct). */
  tell(origins: ArrayLike<number>, from: number, to: number, members: Int32Array): void {
    if (members.length === 0 || to <= from) return;
    this.#out = this.#in = undefined;
    // The origins by the row they hold: most often one.
    const byRow = new Map<number, number[]>();
    for (let k = from; k < to; k++) {
      const o = origins[k] ?? 0;
      const r = this.#rowOf[o] ?? -1;
      const list = byRow.get(r);
      if (list === undefined) byRow.set(r, [o]);
      else list.push(o);
    }
    for (const [r, os] of byRow) this.#add(r, os, members);
  }

  /** Origins `os`, all holding row `r`, reach `members`: the row is set in place when they are all its holders, or
   * copied for them when it lacks some member. */
  #add(r: number, os: readonly number[], members: Int32Array): void {
    const row = this.#rows[r];
    if (row !== undefined && this.#holders[r] === os.length) {
      for (const j of members) row[j >>> 5] = (row[j >>> 5] ?? 0) | (1 << (j & 31));
      return;
    }
    if (row !== undefined && members.every((j) => (((row[j >>> 5] ?? 0) >>> (j & 31)) & 1) === 1)) return;
    const copy = row === undefined ? new Uint32Array(this.#words) : row.slice();
    for (const j of members) copy[j >>> 5] = (copy[j >>> 5] ?? 0) | (1 << (j & 31));
    const id = this.#rows.length;
    this.#rows.push(copy);
    this.#holders.push(os.length);
    if (row !== undefined) this.#holders[r] = (this.#holders[r] ?? 0) - os.length;
    for (const o of os) this.#rowOf[o] = id;
  }

  /** Pairs reached, an origin and itself counted. */
  get pairs(): number {
    this.#count();
    return this.#pairs;
  }

  /** The other members `origin` reaches. */
  outDegree(origin: number): number {
    return this.#count().out[origin] ?? 0;
  }

  /** The other members that reach `member`. */
  inDegree(member: number): number {
    return this.#count().in[member] ?? 0;
  }

  #count(): { out: Int32Array; in: Int32Array } {
    if (this.#out !== undefined && this.#in !== undefined) return { out: this.#out, in: this.#in };
    const n = this.#n;
    const out = new Int32Array(n);
    const into = new Int32Array(n);
    const sizes = this.#rows.map((row) => row.reduce((s, w) => s + popcount(w), 0));
    this.#rows.forEach((row, r) => {
      const holders = this.#holders[r] ?? 0;
      if (holders === 0) return;
      for (let w = 0; w < row.length; w++) {
        let word = row[w] ?? 0;
        while (word !== 0) {
          const bit = 31 - Math.clz32(word);
          word &= ~(1 << bit);
          const j = w * 32 + bit;
          into[j] = (into[j] ?? 0) + holders;
        }
      }
    });
    let pairs = 0;
    for (let o = 0; o < n; o++) {
      const r = this.#rowOf[o] ?? -1;
      if (r < 0) continue;
      const self = this.has(o, o) ? 1 : 0;
      pairs += sizes[r] ?? 0;
      out[o] = (sizes[r] ?? 0) - self;
      into[o] = (into[o] ?? 0) - self;
    }
    this.#pairs = pairs;
    this.#out = out;
    this.#in = into;
    return { out, in: into };
  }
}

/** Whether two lists hold the same members in the same order. */
function sameMembers(x: Int32Array, y: Int32Array): boolean {
  if (x.length !== y.length) return false;
  for (let k = 0; k < x.length; k++) if (x[k] !== y[k]) return false;
  return true;
}

/** One told: origins[from..to) reach members. */
interface Told {
  readonly origins: ArrayLike<number>;
  readonly from: number;
  readonly to: number;
  readonly members: Int32Array;
}

/**
 * What Walker.reach tells of one class in a component held as PairRows, in local indices, each member once: kept until
 * the walk is done (it may give up, and the class be walked from each origin apart), then told to the rows.
 */
export class PendingTells {
  readonly #localOf: Int32Array;
  /** Per local member, the last #stamp that kept it. */
  readonly #seen: Int32Array;
  #stamp = 0;
  /** A group's members in local indices, found once for the groups' array. */
  readonly #local = new WeakMap<Int32Array, Int32Array>();
  #told: Told[] = [];
  /** #add's members, each once, before they are copied. */
  #distinct = new Int32Array(64);
  /** The (origin, member) pairs told, each origin's members once. */
  tuples = 0;

  constructor(localOf: Int32Array, n: number) {
    this.#localOf = localOf;
    this.#seen = new Int32Array(n);
  }

  clear(): void {
    this.#told = [];
    this.tuples = 0;
  }

  /** `origin` (a member index) reaches `members[0..count)` (member indices, some more than once). */
  one(origin: number, members: Int32Array, count: number): void {
    this.#add([this.#localOf[origin] ?? 0], 0, 1, members, count);
  }

  /** Members `origins[from..)` each reach `members[0..count)`. */
  alike(origins: Int32Array, from: number, members: Int32Array, count: number): void {
    let local = this.#local.get(origins);
    if (local === undefined) this.#local.set(origins, (local = origins.map((o) => this.#localOf[o] ?? 0)));
    this.#add(local, from, origins.length, members, count);
  }

  #add(origins: ArrayLike<number>, from: number, to: number, members: Int32Array, count: number): void {
    const stamp = ++this.#stamp;
    if (this.#distinct.length < count) this.#distinct = new Int32Array(Math.max(count, 2 * this.#distinct.length));
    const distinct = this.#distinct;
    let n = 0;
    for (let k = 0; k < count; k++) {
      const j = this.#localOf[members[k] ?? 0] ?? 0;
      if (this.#seen[j] === stamp) continue;
      this.#seen[j] = stamp;
      distinct[n++] = j;
    }
    this.#told.push({ origins, from, to, members: distinct.slice(0, n) });
    this.tuples += (to - from) * n;
  }

  /** Tells the rows, the origins that reach the same members together: a row each would be copied for them (a class
   * the hosts under a leaf reach each apart, as a black hole at the leaf, made a row a host, 20,000 of them). */
  into(rows: PairRows): void {
    // By a hash of the members, then the members themselves: a string a told was most of the time it took at 20,000.
    const same = new Map<number, { origins: number[]; members: Int32Array }[]>();
    for (const t of this.#told) {
      let hash = t.members.length;
      for (const j of t.members) hash = (Math.imul(hash, 31) + j) | 0;
      let list = same.get(hash);
      if (list === undefined) same.set(hash, (list = []));
      let s = list.find((x) => sameMembers(x.members, t.members));
      if (s === undefined) list.push((s = { origins: [], members: t.members }));
      for (let k = t.from; k < t.to; k++) s.origins.push(t.origins[k] ?? 0);
    }
    for (const list of same.values())
      for (const { origins, members } of list) rows.tell(origins, 0, origins.length, members);
  }
}
