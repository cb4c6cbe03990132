// The tests over random descriptions analyse each one with a bound on its
// header classes: a few dozen random rows with ranges and masks can cut a
// design into tens of thousands of classes, which costs the suite time and
// tells nothing new. Such a description is skipped, and counted.
// STRATA_ANALYZE_MAX_CLASSES raises the bound.

import { Analysis } from "../../../src/analysis/analysis.js";
import { Budget } from "../../../src/analysis/budget.js";
import type { CompiledSpec } from "../../../src/control/compiled.js";

export const MAX_CLASSES = Number(process.env["STRATA_ANALYZE_MAX_CLASSES"] ?? 4000);

/** The analysis of `c`, or undefined when its rows make more than MAX_CLASSES classes of a design. */
export function boundedAnalysis(c: CompiledSpec): Analysis | undefined {
  const a = new Analysis(c, { budget: new Budget({ maxClasses: MAX_CLASSES }) });
  return a.built ? a : undefined;
}
