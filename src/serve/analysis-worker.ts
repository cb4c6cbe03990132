// The thread of `strata serve --analyze` (./analysis.ts has the model): it holds
// the analysis of the emulation's tables (src/analysis/live.ts) and, for each
// message, brings it to the tables the message gives and answers with the line
// `counts` shows. An analysis that fails (a limit of the header-class diagram)
// is dropped, and the next message is analysed afresh.

import { isMainThread, parentPort, workerData } from "node:worker_threads";
import { ANALYZE_LIMITS, Budget, BudgetStop, isResourceError, NODES_HINT } from "../analysis/budget.js";
import { LiveAnalysis } from "../analysis/live.js";
import type { CompiledSpec } from "../control/compiled.js";
import type { FromAnalysis, ToAnalysis } from "./analysis.js";

if (!isMainThread && parentPort !== null) {
  const port = parentPort;
  // strata analyze's limits, and the emulation's hop limit (the data plane drops a packet past it as a loop).
  const { hopLimit } = workerData as { hopLimit: number };
  let compiled: CompiledSpec | undefined;
  let live: LiveAnalysis | undefined;
  port.on("message", (m: ToAnalysis) => {
    if (m.compiled !== undefined) compiled = m.compiled;
    let answer: FromAnalysis;
    try {
      if (compiled === undefined) throw new Error("the first message to the analysis thread had no description");
      if (m.changes !== undefined) {
        // The rows the writes reached, to an analysis of the tables before them (the main thread sends every row
        // after a failure).
        if (live === undefined) throw new Error("the analysis thread was sent changes without the tables before them");
        live.change({ changes: m.changes, others: m.others });
      } else {
        if (m.entries === undefined) throw new Error("the analysis thread was sent neither rows nor changes");
        live ??= new LiveAnalysis(compiled, { budget: new Budget(ANALYZE_LIMITS), hopLimit });
        live.update({ compiled, entries: m.entries }, undefined, m.others);
      }
      answer = { ok: true, line: live.line() };
    } catch (err) {
      live = undefined;
      // Work that cannot stop half-way passed the budget: the line says what was cut short (not an internal error).
      const problem =
        err instanceof BudgetStop || isResourceError(err)
          ? `the analysis was cut short by its ${err instanceof BudgetStop ? err.limit : "depth"} limit ` +
            `(${err instanceof Error ? err.message : String(err)}` +
            `${err instanceof BudgetStop && err.limit === "nodes" ? `; ${NODES_HINT}` : ""})`
          : err instanceof Error
            ? err.message
            : String(err);
      answer = { ok: false, problem };
    }
    port.postMessage(answer);
  });
}
