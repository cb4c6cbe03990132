// `strata worker`'s name, flags and help; the worker (../worker.ts) is loaded when it runs.

import { type Command, Option } from "commander";
import type { CommandContext } from "../command.js";
import { limit } from "../options.js";
import type { WorkerFlags } from "../worker.js";

/** The most chunks a worker takes at once per run. */
const CONCURRENCY_MAX = 64;
/** The longest --lock-ms: BullMQ's default lock is 30 s. */
const LOCK_MS_MAX = 600_000;

const WORKER_HELP = `
A worker takes the chunks of every replay started with strata run --queue on the same
Redis (docs/scale-out.md), runs each with the engine strata run uses, and returns its
outputs through Redis (with the run's --shared, above 1 MiB, through a file there).
A run with --shared DIR has its capture read by the workers from DIR (byte ranges of it):
a worker mounts DIR at the same path, or says where with --shared.
A job from another strata version, or whose description does not match its digest, is
refused with the reason, which the coordinator prints. A worker that dies holding a chunk
gives it up when its lock runs out (30 s; --lock-ms for tests): another worker runs it.
Ctrl-C or SIGTERM stops it once the chunks it holds are done, and it says what it did.

Exit codes: 0 stopped; 2 bad flag, --queue address, or Redis does not answer.
All exit codes: strata --help.`;

export function registerWorker(program: Command, ctx: CommandContext): void {
  program
    .command("worker")
    .description("run the chunks of replays queued with strata run --queue")
    .requiredOption("--queue <url>", "the Redis of the runs: redis://HOST:PORT[/DB], or rediss:// for TLS")
    .addOption(
      new Option("--concurrency <n>", `chunks taken at once per run (1 to ${CONCURRENCY_MAX})`)
        .default(1)
        .argParser(limit("--concurrency", CONCURRENCY_MAX)),
    )
    .addOption(
      new Option(
        "--lock-ms <ms>",
        "test tuning: ms a chunk's lock lasts, a quarter of it between looks for stalled chunks (default 30000)",
      ).argParser(limit("--lock-ms", LOCK_MS_MAX)),
    )
    .option("--shared <dir>", "where this machine mounts the coordinators' --shared directory (default: the same path)")
    .option("--verbose", "say each chunk run or refused on stderr")
    .addHelpText("after", WORKER_HELP)
    .action(async (flags: WorkerFlags) => {
      const { runWorker } = await import("../worker.js");
      ctx.exitCode = await runWorker(flags, ctx.io);
    });
}
