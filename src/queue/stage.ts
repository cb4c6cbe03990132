// Where a queued run writes its outputs before they are whole: a directory beside --out (same file system, so a
// rename moves a file), written by Outputs as --out would be; at the end each file is renamed into --out, the summary
// last but for the marker, and the stage removed. --out itself is claimed (its checks, its lock, the last run's files
// removed) before anything is queued, and holds no file of this run until the run is done.

import { mkdtempSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { SUMMARY_FILE } from "../engine/outputs.js";
import { MARKER_FILE } from "../out-dir.js";
import { readMarker } from "../out-dir/marker.js";

/** A new directory beside `out` for its outputs. */
export function makeStage(out: string): string {
  const full = resolve(out);
  return mkdtempSync(join(dirname(full), `.${basename(full)}.strata-stage-`));
}

/** Moves what `stage`'s marker lists into `out`, then the summary, then the marker; removes the stage. */
export function moveInto(stage: string, out: string): void {
  const files = (readMarker(join(stage, MARKER_FILE)) ?? []).filter((f) => f !== SUMMARY_FILE);
  for (const f of [...files, SUMMARY_FILE, MARKER_FILE]) renameSync(join(stage, f), join(out, f));
  rmSync(stage, { recursive: true, force: true });
}
