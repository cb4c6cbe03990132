// `strata run SPEC --in … --out DIR --queue URL`: the coordinator of a replay whose chunks run on `strata worker`s
// (src/queue/coordinator.ts). The flags are checked as `strata run` checks them, and those a queued run cannot take
// are refused before anything is read; the report is strata run's.

import { UsageError } from "../errors.js";
import { QueueRunError, runQueued } from "../queue/coordinator.js";
import { parseQueueUrl } from "../queue/redis.js";
import type { Io } from "./io.js";
import { checkedInputs, printResult, progressBar, replayBase, type RunFlags } from "./run.js";
import { StopSignals } from "./stop-signals.js";

/** Flags of strata run that a queued run does not take: why, for the refusal. */
const NOT_QUEUED: readonly [keyof RunFlags, string, string][] = [
  ["workers", "--workers", "threads on this machine: with --queue the chunks run on the workers"],
  ["analyze", "--analyze", "the analysis runs beside one data plane: run it without --queue"],
];

/** Replays through the workers of --queue, prints the report, and returns the exit code. */
export async function runQueuedReplay(spec: string, flags: RunFlags, io: Io): Promise<number> {
  const inputs = checkedInputs(flags);
  for (const [key, flag, why] of NOT_QUEUED)
    if (flags[key] !== undefined) throw new UsageError(`${flag} is not taken with --queue: ${why}`);
  const address = parseQueueUrl(flags.queue ?? "");
  const bar = progressBar(io);
  const signals = new StopSignals();
  try {
    const result = await runQueued({
      ...replayBase(spec, flags, inputs),
      address,
      ...(flags.updates !== undefined ? { updates: flags.updates } : {}),
      ...(flags.shared !== undefined ? { shared: flags.shared } : {}),
      stop: signals.stopped,
      ...(bar !== undefined ? { progress: bar.progress } : {}),
    });
    bar?.stop();
    return printResult(flags, io, result);
  } catch (err) {
    bar?.stop();
    if (!(err instanceof QueueRunError)) throw err;
    io.stderr.write(`strata: ${err.message}\n`);
    return err.code;
  } finally {
    signals.dispose();
  }
}
