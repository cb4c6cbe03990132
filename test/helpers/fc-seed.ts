// vitest's setup file: every fast-check property without a seed of its own draws the same cases on every run, since a
// suite that must pass on every CI run cannot also be a search. STRATA_FC_SEED=N draws another run's cases, `random` a
// new search (fast-check prints the seed and path of what it finds, to be replayed as a case of its own).

import fc from "fast-check";

const asked = process.env["STRATA_FC_SEED"] ?? "20261129";
if (asked !== "random") {
  const seed = Number(asked);
  if (!Number.isInteger(seed)) throw new Error(`STRATA_FC_SEED=${asked}: give an integer, or random`);
  fc.configureGlobal({ ...fc.readConfigureGlobal(), seed });
}
