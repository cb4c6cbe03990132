// The analysis in a person's words: members and links by the names summaries
// use, header classes by their patterns, paths as the rows that make them
// ("lanA.h1 forward row 0 → lanA.h1.1-r.1 → lanA.r acquire row 0 → …").
// Words are said after the work they describe, and never end it: a class the
// budget leaves no room to put in words is said by one of its headers.

import type { Analysis } from "./analysis.js";
import { BudgetStop, isResourceError } from "./budget.js";
import { describeClass } from "./class-words.js";
import type { StartLevel } from "./explore.js";
import type { HeaderSpace } from "./header-space.js";
import { formatHops } from "./hops.js";
import type { Step } from "./walk.js";

export class Words {
  readonly #a: Analysis;

  constructor(a: Analysis) {
    this.#a = a;
  }

  /** The analysis whose names these are. */
  get analysis(): Analysis {
    return this.#a;
  }

  member(i: number): string {
    return i < 0 ? "(outside)" : (this.#a.compiled.members[i]?.qualified ?? `member ${i}`);
  }

  link(i: number): string {
    return this.#a.compiled.links[i]?.qualified ?? `link ${i}`;
  }

  /** A header class with its hop-limit values: "dst=10.0.2.0/24 except dst=10.0.2.2 ttl=2..255". */
  header(space: HeaderSpace, atom: number, hops?: bigint): string {
    const h = hops === undefined ? "" : formatHops(hops, space.hopField?.name);
    const d = this.#describe(space, atom);
    return h === "" ? d : `${d} ${h}`;
  }

  /**
   * The class in words (./class-words.ts), whose diagram work cannot stop half-way: past the budget (a stop the
   * analysis then reports), said by one of its headers instead, which takes no diagram work.
   */
  #describe(space: HeaderSpace, atom: number): string {
    try {
      return describeClass(space, atom);
    } catch (err) {
      if (!(err instanceof BudgetStop) && !isResourceError(err)) throw err;
      if (!(err instanceof BudgetStop)) this.#a.budget.stopFor("depth");
      const values = [...space.witness(atom)].map(([name, value]) => [name, { kind: "exact", value }] as const);
      return `like ${space.formatMatch(new Map(values))}`;
    }
  }

  /** A path's start: the header classes of the packet that enters, outermost first (then "any payload"). */
  start(levels: readonly (StartLevel | undefined)[]): string {
    if (levels.length === 0) return "any payload";
    return levels
      .map((l) => (l === undefined ? "any header" : `${l.space.design.name} ${this.header(l.space, l.atom, l.hops)}`))
      .join(" | inside: ");
  }

  step(s: Step): string {
    if (s.kind === "link") return this.link(s.link);
    if (s.kind === "miss") return `${this.member(s.member)} ${s.role} miss`;
    return `${this.member(s.member)} ${s.role} row ${s.row}`;
  }

  path(steps: readonly Step[]): string {
    return steps.map((s) => this.step(s)).join(" → ");
  }
}
