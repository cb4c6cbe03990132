// The header spaces of a description: one per design (./header-space.ts).

import { Budget } from "./budget.js";
import { type ClassCut, HeaderSpace } from "./header-space.js";
import type { DesignDef } from "../wire/designs.js";

/** One header space per design, shared by every network of that design (bridged and subducted networks have one). */
export class HeaderSpaces {
  readonly #spaces = new Map<string, HeaderSpace>();
  readonly budget: Budget;

  /** `budget`: shared by every design's space (its class bound is per design). */
  readonly cut: ClassCut;

  constructor(budget = new Budget(), cut: ClassCut = "behaviour") {
    this.budget = budget;
    this.cut = cut;
  }

  of(design: DesignDef): HeaderSpace {
    let s = this.#spaces.get(design.name);
    if (s === undefined) {
      s = new HeaderSpace(design, this.budget, this.cut);
      this.#spaces.set(design.name, s);
    }
    return s;
  }

  build(): void {
    for (const s of this.#spaces.values()) s.build();
  }

  all(): HeaderSpace[] {
    return [...this.#spaces.values()];
  }
}
