// What the updates of a replay took down (docs/updates.md: `down: { link | member
// | machine }`), as the analysis reads it: a link that is down carries nothing,
// and a member that is down drops what reaches it and what it forwards or sends
// (assembly/pipeline/steps.ts, DROP_LINK_DOWN and DROP_MEMBER_DOWN). The
// reconciler keeps them by name (src/control/reconcile.ts); the walks ask by
// index.

import type { CompiledSpec } from "../control/compiled.js";

/** Links and members down, by qualified name ("lanB.r.1-h2.1", "ip.r"): both directions of a link go down together. */
export interface DownNames {
  readonly links: ReadonlySet<string>;
  readonly members: ReadonlySet<string>;
}

/** The same by index in a compiled description. */
export interface Down {
  readonly links: ReadonlySet<number>;
  readonly members: ReadonlySet<number>;
}

export const NOTHING_DOWN: Down = { links: new Set(), members: new Set() };

/** `names` as indices of `compiled`'s links and members (names it lacks are left out). */
export function downIn(compiled: CompiledSpec, names: DownNames): Down {
  if (names.links.size === 0 && names.members.size === 0) return NOTHING_DOWN;
  const links = new Set(compiled.links.filter((l) => names.links.has(l.qualified)).map((l) => l.index));
  const members = new Set(compiled.members.filter((m) => names.members.has(m.qualified)).map((m) => m.index));
  return { links, members };
}

/** What is in one set and not the other. */
export function changed(a: ReadonlySet<number>, b: ReadonlySet<number>): number[] {
  return [...[...a].filter((x) => !b.has(x)), ...[...b].filter((x) => !a.has(x))];
}
