// The thread of `strata run --analyze` (./analysis.ts has the model): it
// analyses the replay's description and each of its updates, answers once on
// the port it is given and raises the flag the main thread waits on. Its
// module imports nothing else up front, so that whatever fails (a module, the
// analysis) is an answer, never a thread gone silent.

import { isMainThread, type MessagePort, workerData } from "node:worker_threads";
import type { AnalysisJob, FromAnalysisThread } from "./analysis.js";

interface Data {
  readonly job: AnalysisJob;
  readonly port: MessagePort;
  readonly done: Int32Array;
}

async function main(d: Data): Promise<void> {
  let answer: FromAnalysisThread;
  try {
    const { analyseReplay } = await import("./analysis.js");
    answer = { ok: true, result: analyseReplay(d.job) };
  } catch (err) {
    answer = { ok: false, problem: err instanceof Error ? err.message : String(err) };
  }
  d.port.postMessage(answer);
  Atomics.store(d.done, 0, 1);
  Atomics.notify(d.done, 0);
}

if (!isMainThread) void main(workerData as Data);
