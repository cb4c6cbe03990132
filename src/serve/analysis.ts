// `strata serve --analyze`: the emulation's analysis (src/analysis/live.ts),
// updated after every table write and shown by the `counts` command.

import { LiveAnalysis } from "../analysis/live.js";
import type { Engine } from "../engine/engine.js";

const analyses = new WeakMap<Engine, LiveAnalysis>();

/** The analysis attached to `em`, brought up to its tables (a P4Runtime write tells no listener), if any. */
export function analysisOf(em: Engine): LiveAnalysis | undefined {
  const live = analyses.get(em);
  live?.update(em.installed);
  return live;
}

/** Analyses `em`'s description as installed and keeps the analysis current as its tables are written. */
export function attachAnalysis(em: Engine): LiveAnalysis {
  const live = new LiveAnalysis(em.installed.compiled);
  live.update(em.installed);
  em.onTablesWritten((installed) => live.update(installed));
  analyses.set(em, live);
  return live;
}
