// Exact LPM aggregation: two sibling prefixes (they differ in their last bit
// only) with the same next hop become their parent, when the parent is not a
// destination of its own. Only siblings, so nothing else falls in the shorter
// prefix: the table forwards exactly the addresses it forwarded before, each the
// same way, and drops the same others (a looser aggregation would send addresses
// no route leads to somewhere). Repeated up the lengths, a block of destinations
// with one next hop is one row.

export interface Route {
  readonly value: bigint;
  readonly len: number;
  /** The next hop (an out-link identifier). */
  readonly out: number;
  /** The destinations it covers: the first and last (in address order) and how many. */
  readonly first: string;
  readonly last: string;
  readonly count: number;
}

/** The routes aggregated, longest prefixes first (then by address): in that order first match is longest match. */
export function aggregate(routes: readonly Route[], width: number): Route[] {
  const byLen: Map<bigint, Route>[] = Array.from({ length: width + 1 }, () => new Map());
  for (const r of routes) byLen[r.len]?.set(r.value, r);
  for (let len = width; len > 0; len--) {
    const here = byLen[len];
    const up = byLen[len - 1];
    if (here === undefined || up === undefined) continue;
    const bit = 1n << BigInt(width - len);
    for (const [value, r] of [...here]) {
      if ((value & bit) !== 0n || !here.has(value)) continue;
      const sib = here.get(value | bit);
      if (sib === undefined || sib.out !== r.out || up.has(value)) continue;
      here.delete(value);
      here.delete(value | bit);
      up.set(value, { value, len: len - 1, out: r.out, first: r.first, last: sib.last, count: r.count + sib.count });
    }
  }
  const out: Route[] = [];
  for (let len = width; len >= 0; len--) {
    const here = [...(byLen[len]?.values() ?? [])];
    here.sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
    out.push(...here);
  }
  return out;
}
