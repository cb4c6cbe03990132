// The analysis in a person's words: members and links by the names summaries
// use, header classes by their patterns, paths as the rows that make them
// ("lanA.h1 forward row 0 → lanA.h1.1-r.1 → lanA.r acquire row 0 → …").

import type { Analysis } from "./analysis.js";
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
    const d = describeClass(space, atom);
    return h === "" ? d : `${d} ${h}`;
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
