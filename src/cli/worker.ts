// `strata worker --queue URL [--concurrency N]`: runs the chunks of every queued replay on this machine
// (src/queue/worker.ts) until Ctrl-C or SIGTERM, then finishes the chunks it holds and says what it did.

import { client, parseQueueUrl, reach } from "../queue/redis.js";
import { PROTOCOL, STRATA_VERSION } from "../queue/protocol.js";
import { QueueWorker } from "../queue/worker.js";
import { EXIT_OK } from "./exit-codes.js";
import type { Io } from "./io.js";
import { StopSignals } from "./stop-signals.js";

export interface WorkerFlags {
  queue: string;
  concurrency: number;
  lockMs?: number;
  shared?: string;
  verbose?: boolean;
}

export async function runWorker(flags: WorkerFlags, io: Io): Promise<number> {
  const address = parseQueueUrl(flags.queue);
  const redis = client(address);
  const signals = new StopSignals();
  try {
    await reach(redis, address);
    const worker = new QueueWorker(address, redis, {
      concurrency: flags.concurrency,
      ...(flags.lockMs !== undefined ? { lockMs: flags.lockMs } : {}),
      ...(flags.shared !== undefined ? { shared: flags.shared } : {}),
      ...(flags.verbose === true
        ? {
            log: (line: string) => {
              io.stderr.write(`strata worker: ${line}\n`);
              void io.stderr.flush();
            },
          }
        : {}),
    });
    worker.start();
    io.stderr.write(
      `strata worker: taking chunks from ${address.shown} (strata ${STRATA_VERSION}, queue protocol ${PROTOCOL}); ` +
        "Ctrl-C stops it\n",
    );
    await io.stderr.flush();
    await signals.stopped;
    io.stderr.write("strata worker: stopping: the chunks it holds are finished first\n");
    await worker.close();
    const s = worker.stats;
    io.stderr.write(
      `strata worker: ran ${s.chunks} chunks (${s.packets.toLocaleString("en-US")} packets) of ${s.runs.size} ` +
        `runs in ${(s.cpuMs / 1000).toFixed(2)} s of CPU; refused ${s.refused}\n`,
    );
    return EXIT_OK;
  } finally {
    signals.dispose();
    redis.disconnect();
  }
}
