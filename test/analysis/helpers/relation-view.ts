// What a component's relation says, in a form two analyses' can be compared by
// (toEqual): an updated one against one computed afresh.

import type { Analysis } from "../../../src/analysis/analysis.js";
import type { ComponentRelation } from "../../../src/analysis/relations.js";

export function relationView(a: Analysis, rel: ComponentRelation): object {
  const ms = rel.component.members;
  const reaches = ms.flatMap((m0) => ms.filter((m1) => rel.reaches(m0, m1)).map((m1) => `${m0}>${m1}`));
  // How many classes go between each pair: a next hop changed moves classes between pairs some class still reaches.
  const between = ms.flatMap((m0) => ms.map((m1) => rel.classesBetween(m0, m1)));
  const holes = [
    ...new Set(rel.holes().map((h) => `${h.atom}:${h.hole.member}/${h.hole.table}/${String(h.hole.link)}`)),
  ].sort();
  const loops = rel
    .loops()
    .map((l) => l.atom)
    .sort((x, y) => x - y);
  const live = rel.component.space.atoms().filter((x) => !rel.component.space.isDead(x)).length;
  return {
    component: rel.component.name,
    tuples: rel.tuples,
    pairs: rel.pairs,
    reaches,
    between,
    holes,
    loops,
    unreachable: rel.unreachable(),
    classes: live,
    members: a.members.length,
  };
}
