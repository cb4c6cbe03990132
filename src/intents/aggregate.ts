// Exact LPM aggregation: two sibling prefixes (they differ in their last bit
// only) with the same next hop become their parent, when the parent is not a
// destination of its own. Only siblings, so nothing else falls in the shorter
// prefix: the table forwards exactly the addresses it forwarded before, each the
// same way, and drops the same others (a looser aggregation would send addresses
// no route leads to somewhere). Repeated up the lengths, a block of destinations
// with one next hop is one row.
//
// Addresses are numbers where the field fits in one (IPv4: 1,169 members' routes
// are 1.4 million of them), bigints where it does not (IPv6); the merge is the same.

export interface Route<V extends number | bigint = bigint> {
  readonly value: V;
  readonly len: number;
  /** The next hop (an out-link identifier). */
  readonly out: number;
  /** The destinations it covers: the first and last (in address order, by the caller's numbering) and how many. */
  readonly first: number;
  readonly last: number;
  readonly count: number;
}

/** A field's values as numbers or bigints: the bit at a prefix length, set or cleared. */
interface Bits<V> {
  /** Whether `v`'s last bit of a /len prefix is set. */
  has(v: V, len: number): boolean;
  set(v: V, len: number): V;
  less(a: V, b: V): boolean;
}

const numberBits = (width: number): Bits<number> => {
  const bit = Array.from({ length: width + 1 }, (_, len) => 2 ** (width - len));
  const has = (v: number, len: number): boolean => Math.floor(v / (bit[len] ?? 1)) % 2 === 1;
  return {
    has,
    set: (v, len) => (has(v, len) ? v : v + (bit[len] ?? 1)),
    less: (a, b) => a < b,
  };
};

const bigBits = (width: number): Bits<bigint> => {
  const bit = (len: number): bigint => 1n << BigInt(width - len);
  return {
    has: (v, len) => (v & bit(len)) !== 0n,
    set: (v, len) => v | bit(len),
    less: (a, b) => a < b,
  };
};

/** Whether a field of `width` bits is held as numbers. */
export const asNumbers = (width: number): boolean => width <= 48;

/** The routes aggregated, longest prefixes first (then by address): in that order first match is longest match. */
export function aggregate<V extends number | bigint>(routes: readonly Route<V>[], width: number): Route<V>[] {
  const bits = (asNumbers(width) ? numberBits(width) : bigBits(width)) as Bits<V>;
  const merged = inOrder(routes, bits) ? stacked(routes, bits) : byLength(routes, width, bits);
  return merged.sort(
    (a, b) => b.len - a.len || (bits.less(a.value, b.value) ? -1 : bits.less(b.value, a.value) ? 1 : 0),
  );
}

/** Whether the routes are full-width addresses in increasing order (each member's name: the usual case). */
function inOrder<V extends number | bigint>(routes: readonly Route<V>[], bits: Bits<V>): boolean {
  const len = routes[0]?.len;
  return routes.every((r, i) => r.len === len && (i === 0 || bits.less(routes[i - 1]?.value ?? r.value, r.value)));
}

/**
 * Addresses in order merged in one pass: each joins a stack, and while the top two are siblings with one next hop they
 * become their parent (no destination can be that parent: it would hold the two).
 */
function stacked<V extends number | bigint>(routes: readonly Route<V>[], bits: Bits<V>): Route<V>[] {
  const stack: Route<V>[] = [];
  for (const r of routes) {
    let top: Route<V> = r;
    for (;;) {
      const below = stack[stack.length - 1];
      if (
        below === undefined ||
        below.len !== top.len ||
        below.out !== top.out ||
        bits.has(below.value, top.len) ||
        bits.set(below.value, top.len) !== top.value
      )
        break;
      stack.pop();
      const { value, out, first } = below;
      top = { value, len: below.len - 1, out, first, last: top.last, count: below.count + top.count };
    }
    stack.push(top);
  }
  return stack;
}

/** Any routes (prefixes of several lengths, nested or not) merged a length at a time, longest first. */
function byLength<V extends number | bigint>(routes: readonly Route<V>[], width: number, bits: Bits<V>): Route<V>[] {
  const byLen: Map<V, Route<V>>[] = Array.from({ length: width + 1 }, () => new Map());
  for (const r of routes) byLen[r.len]?.set(r.value, r);
  for (let len = width; len > 0; len--) {
    const here = byLen[len];
    const up = byLen[len - 1];
    if (here === undefined || up === undefined || here.size < 2) continue;
    for (const [value, r] of [...here]) {
      if (bits.has(value, len) || !here.has(value)) continue;
      const sibValue = bits.set(value, len);
      const sib = here.get(sibValue);
      if (sib === undefined || sib.out !== r.out || up.has(value)) continue;
      here.delete(value);
      here.delete(sibValue);
      up.set(value, { value, len: len - 1, out: r.out, first: r.first, last: sib.last, count: r.count + sib.count });
    }
  }
  return byLen.flatMap((m) => [...m.values()]);
}
