// One worker thread of a replay (./workers.ts has the model): a ChunkRunner
// on a data plane of its own, fed by the main thread's messages. After each
// message it sends, it bumps the shared counter the main thread waits on.

import { isMainThread, parentPort, workerData } from "node:worker_threads";
import { ChunkRunner } from "./chunk-runner.js";
import type { FromWorker, ToWorker, WorkerSetup } from "./workers.js";

if (!isMainThread && parentPort !== null) {
  const setup = workerData as WorkerSetup;
  const signal = new Int32Array(setup.signal);
  const send = (message: FromWorker): void => {
    setup.port.postMessage(message);
    Atomics.add(signal, 0, 1);
    Atomics.notify(signal, 0);
  };
  const failed = (err: unknown): FromWorker => ({ kind: "error", message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  let runner: ChunkRunner | undefined;
  let failure: FromWorker | undefined;
  try {
    runner = new ChunkRunner(setup);
  } catch (err) {
    failure = failed(err);
  }
  parentPort.on("message", (message: ToWorker) => {
    if (runner === undefined) {
      send(failure ?? failed("the worker did not start"));
      return;
    }
    try {
      switch (message.kind) {
        case "start":
          runner.start();
          break;
        case "chunk":
          send(runner.chunk(message));
          break;
        case "finish":
          send({ kind: "counters", counters: runner.counters() });
          break;
      }
    } catch (err) {
      send(failed(err));
    }
  });
}
