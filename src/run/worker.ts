// One worker thread of a replay (./workers.ts has the model): a ChunkRunner
// on a data plane of its own. On "start" it reads the inputs and runs its
// chunks to the end in one call, sending each chunk's records; after each
// message it sends, it bumps the shared counter the main thread waits on.

import { isMainThread, parentPort, workerData } from "node:worker_threads";
import { ChunkRunner } from "./chunk-runner.js";
import { awaitWritten, chunkMessage, type FromWorker, noteSent, type ToWorker, type WorkerSetup } from "./workers.js";

if (!isMainThread && parentPort !== null) {
  const setup = workerData as WorkerSetup;
  const signal = new Int32Array(setup.signal);
  const send = (message: FromWorker): void => {
    setup.port.postMessage(message);
    noteSent(signal);
  };
  const failed = (err: unknown): FromWorker => ({
    kind: "error",
    message: err instanceof Error ? (err.stack ?? err.message) : String(err),
  });
  let runner: ChunkRunner | undefined;
  let failure: FromWorker | undefined;
  try {
    runner = new ChunkRunner(setup, true);
  } catch (err) {
    failure = failed(err);
  }
  parentPort.on("message", (message: ToWorker) => {
    if (runner === undefined) {
      send(failure ?? failed("the worker did not start"));
      return;
    }
    if (message.kind !== "start") return;
    try {
      const inputs = runner.openInputs();
      try {
        const { ran } = runner.replay(
          inputs,
          (previous) => awaitWritten(signal, previous),
          (chunk) => send(chunkMessage(chunk)),
        );
        send({ kind: "done", counters: runner.counters(), ran });
      } finally {
        inputs.close();
      }
    } catch (err) {
      send(failed(err));
    }
  });
}
