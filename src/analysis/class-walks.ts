// Walks of a header space's class diagram (./header-space.ts) that find classes: those of headers with some field
// values given, and those some header of a boolean diagram is in. Each follows the diagram one variable a level, so
// its depth is bounded by the design's bits.

import { type Bdd, FALSE } from "./bdd.js";
import type { FieldBits } from "./pattern-nodes.js";

const ID = 2 ** 22;

/** The classes (`atomOf` a leaf) of the headers with these field values and any value in the fields left out. */
export function classesWhere(
  b: Bdd,
  bits: FieldBits,
  root: number,
  atomOf: (leaf: number) => number | undefined,
  values: ReadonlyMap<string, bigint>,
): number[] {
  const out = new Set<number>();
  const seen = new Set<number>();
  const walk = (n: number): void => {
    if (b.isTerminal(n)) {
      const a = atomOf(n);
      if (a !== undefined) out.add(a);
      return;
    }
    const bit = bits.bit(values, b.variable(n));
    if (bit === undefined) {
      // A free bit: both ways (a node met again below a free bit leads to the same leaves).
      if (seen.has(n)) return;
      seen.add(n);
      walk(b.low(n));
      walk(b.high(n));
      return;
    }
    walk(bit ? b.high(n) : b.low(n));
  };
  walk(root);
  return [...out].sort((x, y) => x - y);
}

/**
 * The live classes (`live` a leaf, of `all` there are) some header of the boolean diagram `q` is in, ascending;
 * undefined when finding them would take more than `maxSteps` steps of the walk.
 */
export function atomsMeeting(
  b: Bdd,
  root: number,
  q: number,
  live: (leaf: number) => number | undefined,
  all: number,
  maxSteps: number,
): number[] | undefined {
  const out = new Set<number>();
  const seen = new Set<number>();
  const rec = (n: number, p: number): boolean => {
    // Every live class met: the rest of the walk can find no other (a row of a few wide patterns meets them all).
    if (p === FALSE || out.size === all) return true;
    if (b.isTerminal(n)) {
      const a = live(n);
      if (a !== undefined) out.add(a);
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
  return rec(root, q) ? [...out].sort((x, y) => x - y) : undefined;
}
