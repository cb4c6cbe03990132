// What Walker's walk from one origin (./walk.ts) has walked from each state
// (link, TTL decrements so far): the hop values, and the walks the hop limit
// cut, which a path with fewer crossings walks again.

/** Hop values walked from a state with `crossings` links behind them, where the hop limit cut the walk below. */
interface CutVisit {
  readonly crossings: number;
  hops: bigint;
}

export class WalkVisits {
  /** Per state: the hop values already walked from it, for this origin. */
  readonly #visited = new Map<number, bigint>();
  /** Per state: the walks from it that the hop limit cut (walked again from fewer crossings). */
  readonly #cut = new Map<number, CutVisit[]>();
  /** Crossings the hop limit refused so far: a walk below which this grew was cut. */
  cuts = 0;

  /** A new origin. Clearing a map makes it a new table: reach()'s walk never fills them. */
  clear(): void {
    if (this.#visited.size > 0) this.#visited.clear();
    if (this.#cut.size > 0) this.#cut.clear();
  }

  /** Some walk was cut. */
  get anyCut(): boolean {
    return this.#cut.size > 0;
  }

  /**
   * The hop values of `hops` still to walk from state `key` with `crossings` links behind: those never walked from it,
   * and those walked from it with more crossings where the hop limit cut the walk. Values left out because a walk
   * from them was cut count as a cut here too.
   */
  fresh(key: number, hops: bigint, crossings: number): bigint {
    const seen = this.#visited.get(key) ?? 0n;
    let covered = seen;
    const cut = this.#cut.get(key);
    if (cut !== undefined) {
      for (const v of cut) {
        if (v.crossings > crossings) covered &= ~v.hops;
        else if ((v.hops & hops) !== 0n) this.cuts++;
      }
    }
    const fresh = hops & ~covered;
    if (fresh !== 0n) this.#visited.set(key, seen | fresh);
    return fresh;
  }

  /** `hops` were walked from `key` with `crossings` behind: a cut walk is kept (fewer crossings may go further), and
   * cut walks with as many crossings or more are superseded. */
  walked(key: number, hops: bigint, crossings: number, cut: boolean): void {
    const list = this.#cut.get(key);
    if (list !== undefined) for (const v of list) if (v.crossings >= crossings) v.hops &= ~hops;
    if (!cut) return;
    if (list === undefined) this.#cut.set(key, [{ crossings, hops }]);
    else list.push({ crossings, hops });
  }
}
