// A header class (./header-space.ts) in words: the row patterns every header of
// it matches, then those it is carved out of ("dst=02:00:00:00:00:03", "any
// header except dst=…, dst=… (+1021 more)"). A class cut by behaviour (./
// behaviours.ts) may join headers no such words tell apart from others: it is
// then said by one of its headers' ("like dst=02:00:00:00:00:03").

import type { Pattern } from "../description/types.js";
import { FALSE, TRUE } from "./bdd.js";
import type { HeaderSpace } from "./header-space.js";

/** Class `atom` of `space` in words, with at most `maxExcept` patterns after "except". */
export function describeClass(space: HeaderSpace, atom: number, maxExcept = 3): string {
  const region = space.headersOf([atom]);
  const inside = space.patterns.flatMap((p, q) => (space.bdd.minus(region, p.node) === FALSE ? [q] : []));
  const said = words(space, inside, maxExcept);
  if (said.exact === region) return said.text;
  const w = space.witness(atom);
  const around = space.patterns.flatMap((p, q) => (space.evaluate(p.node, w) === TRUE ? [q] : []));
  return `like ${words(space, around, maxExcept).text}`;
}

/** The headers matching every pattern of `inside` (indices into space.patterns) and no other, in words, and as a
 * diagram. */
function words(space: HeaderSpace, inside: readonly number[], maxExcept: number): { text: string; exact: number } {
  const { bdd, patterns } = space;
  const held = new Map<string, Pattern[]>();
  let node = space.domain;
  for (const q of inside) {
    const p = patterns[q];
    if (p === undefined) continue;
    node = bdd.and(node, p.node);
    for (const [name, pattern] of p.match)
      if (space.hasField(name)) held.set(name, [...(held.get(name) ?? []), pattern]);
  }
  // On one field, an exact value says it all, and the longest of nested prefixes.
  const parts = space.fields.flatMap((f) => {
    const ps = held.get(f.def.name) ?? [];
    const exact = ps.find((p) => p.kind === "exact");
    const prefixes = ps
      .filter((p) => p.kind === "prefix")
      .sort((x, y) => (y.kind === "prefix" && x.kind === "prefix" ? y.len - x.len : 0));
    const keep =
      exact !== undefined
        ? [exact]
        : [...(prefixes[0] === undefined ? [] : [prefixes[0]]), ...ps.filter((p) => p.kind !== "prefix")];
    return [...new Set(keep.map((p) => space.formatMatch(new Map([[f.def.name, p]]))))];
  });
  const set = new Set(inside);
  const except: string[] = [];
  let more = 0;
  let exact = node;
  patterns.forEach((p, q) => {
    if (set.has(q) || bdd.and(node, p.node) === FALSE) return;
    exact = bdd.minus(exact, p.node);
    if (except.length < maxExcept) except.push(space.formatMatch(p.match));
    else more++;
  });
  const base = parts.length === 0 ? "any header" : parts.join(" ");
  if (except.length === 0) return { text: base, exact };
  return { text: `${base} except ${except.join(", ")}${more > 0 ? ` (+${more} more)` : ""}`, exact };
}
