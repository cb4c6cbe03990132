// What `strata analyze` and `strata check` share of the analysis's budget
// (src/analysis/budget.ts): the budget their flags make, a progress bar on
// stderr while a long analysis runs (as `strata run` shows one, only on a
// terminal), and the words for where a budget stopped it.

import cliProgress from "cli-progress";
import { Budget, NODES_HINT, type Progress, type Stop } from "../analysis/budget.js";
import type { HeaderSpaces } from "../analysis/header-spaces.js";
import type { Io } from "./io.js";

/** The flags: 0 lifts a bound. */
export interface BudgetFlags {
  readonly maxClasses: number;
  /** Seconds. */
  readonly timeLimit: number;
}

/** Work shorter than this shows no bar. */
const QUIET_MS = 500;

/** The budget `flags` give, with a progress bar on stderr when it is a terminal; `done()` takes the bar away. */
export function analysisBudget(
  flags: BudgetFlags,
  io: Io,
  stream: NodeJS.WritableStream = process.stderr,
): { readonly budget: Budget; done(): void } {
  const progress = io.stderrIsTTY ? progressBar(stream) : undefined;
  const budget = new Budget({
    ...(flags.maxClasses > 0 ? { maxClasses: flags.maxClasses } : {}),
    ...(flags.timeLimit > 0 ? { timeLimit: flags.timeLimit } : {}),
    ...(progress === undefined ? {} : { progress: progress.show }),
  });
  return { budget, done: () => progress?.stop() };
}

/** A bar that appears once the work has gone on for QUIET_MS, and names the stage it is in. */
export function progressBar(
  stream: NodeJS.WritableStream,
  now: () => number = () => performance.now(),
): { show(p: Progress): void; stop(): void } {
  const start = now();
  let bar: cliProgress.SingleBar | undefined;
  let stage = "";
  return {
    show: (p) => {
      if (bar === undefined) {
        if (now() - start < QUIET_MS) return;
        bar = new cliProgress.SingleBar(
          { format: "{stage} [{bar}] {value}/{total} {unit}", stream, hideCursor: true },
          cliProgress.Presets.shades_classic,
        );
        bar.start(Math.max(p.total, 1), p.done, { stage: p.stage, unit: p.unit });
        stage = p.stage;
        return;
      }
      if (p.stage !== stage) {
        stage = p.stage;
        bar.setTotal(Math.max(p.total, 1));
      }
      bar.update(p.done, { stage: p.stage, unit: p.unit });
    },
    stop: () => bar?.stop(),
  };
}

const count = (n: number): string => n.toLocaleString("en-US");

/** Why a budget stopped the analysis and where, and the flag that lifts that bound (none for strata's own bounds). */
export function stopReason(stop: Stop, flags: BudgetFlags): { readonly why: string; readonly lift: string } {
  const far = stop.total > 0 ? ` (${count(stop.done)} of ${count(stop.total)} ${stop.unit})` : "";
  const at = `while ${stop.stage}${far}`;
  switch (stop.limit) {
    case "classes":
      return {
        why: `${stop.message ?? "too many header classes"} (--max-classes ${flags.maxClasses}), ${at}`,
        lift: "--max-classes 0",
      };
    case "time":
      return { why: `--time-limit ${flags.timeLimit} s ran out ${at}`, lift: "--time-limit 0" };
    case "nodes":
      return {
        why: `${stop.message ?? "the header-class diagram reached its memory bound"} ${at} ` + `(${NODES_HINT})`,
        lift: "",
      };
    case "depth":
      return { why: `the stack or a table of the analysis ran out ${at}`, lift: "" };
  }
}

/** The classes a stopped analysis made, by design ("ipv4 10,990"), and, when the rows of some tables cut them (their
 * behaviours outgrew their share of the budget: src/analysis/tables.ts), a note that says so. */
export function classesMade(spaces: HeaderSpaces): { readonly made: string; readonly note: string } {
  const made = spaces
    .all()
    .map((s) => `${s.design.name} ${count(s.built ? s.atoms().length : s.made)}`)
    .join(", ");
  const byRows = spaces.all().reduce((n, s) => n + s.tablesByRows, 0);
  const [tables, its] = byRows === 1 ? ["1 table", "its"] : [`${count(byRows)} tables`, "their"];
  return {
    made,
    note: byRows === 0 ? "" : `${tables} cut by ${its} rows, ${its} behaviours past their share of the budget`,
  };
}
