// `strata run`'s name, flags and help; the replay (../run.ts) is loaded when it runs.

import { type Command, Option } from "commander";
import { ENDPOINT_FORMS } from "../../control/endpoints.js";
import { parsePacketRanges, TRACE_PACKETS_HELP } from "../../run/trace-packets.js";
import { WORKERS_MAX } from "../../run/workers-max.js";
import { COPY_LIMIT_MAX, HOP_LIMIT_MAX } from "../../wasm/runner.js";
import { ANALYZE_LIMITS, MAX_CLASSES_MAX, TIME_LIMIT_MAX } from "../../analysis/budget.js";
import type { CommandContext } from "../command.js";
import type { RunFlags } from "../run.js";
import { bound, collect, limit, seconds } from "../options.js";
import { UsageError } from "../../errors.js";

/** What `strata run --help` says after the flags: endpoints, workers, --out, updates, analysis, exit codes. */
const RUN_HELP = `
Endpoints:
  lan:h1.1     packets transmitted by member h1 of network lan on its link 1
  lan:h1       packets sent by h1 itself (its forward table, in-link self)
  lan:h1@7     packets sent by h1 in session 7 (its send table attaches the header)
  lan:uplink   packets arriving from outside on the external link uplink
The network may be left out when the description has only one. Several inputs are
merged in timestamp order.

With --workers N the packets run on N data planes (this thread's and N − 1 worker
threads), each chunk of packets on one; every output is the same, byte for byte, as
with one.

strata deletes or replaces only files it wrote (DIR/.strata-output lists them). It
refuses an --out that holds an input (the description or a capture), and one with other
files in it unless --force is given; it never replaces a file it did not write.

--updates FILE is a YAML or JSON list of changes at capture times (docs/updates.md):
  - { at: 1700000000.25, description: fixed.yaml }   # tables change
  - { at: "2023-11-14T22:13:21Z", down: { link: lanA:h1.1 } }
  - { at: 1700000002, up: { member: lanA:r } }
Every update is checked before the first packet; a packet at or after an update's
time is processed after it. summary.json lists the updates and the packet each came before.

--analyze analyses the description (docs/analysis.md) and, after each update, only the header
classes its rows, links and members touch: summary.json's analysis and each update's analysis
say which properties hold and fail, which the update changed, and what it cost. The recordings
are the same with and without it.

Exit codes: 0 done; 2 bad description, endpoint, flag, updates, capture or --out (a damaged capture
is replayed up to the damage, outputs are written, then the error is reported).
All exit codes: strata --help.`;

export function registerRun(program: Command, ctx: CommandContext): void {
  program
    .command("run")
    .description("replay captures through the networks of a description")
    .argument("<spec>", "network description (YAML or JSON)")
    .requiredOption(
      "--in <endpoint=file>",
      `inject a capture at an endpoint (${ENDPOINT_FORMS}); repeatable`,
      collect,
      [],
    )
    .requiredOption(
      "--out <dir>",
      "directory for links/, delivered/, summary.json (and trace.jsonl): new, empty, or written by strata before",
    )
    .option("--force", "write into a non-empty directory strata did not write (never replacing a file there)")
    .option("--trace", "also write trace.jsonl: every step of every packet")
    .addOption(
      new Option("--trace-packets <ranges>", TRACE_PACKETS_HELP).argParser((v: string) => parsePacketRanges(v)),
    )
    .option("--json", "print summary.json on stdout instead of a short report")
    .option(
      "--updates <file>",
      "apply timed changes at capture times: new descriptions, links and members down and up (docs/updates.md)",
    )
    .option(
      "--analyze",
      "analyse the description as strata analyze does and, at each update, bring the relations up to date from what " +
        "it changed (in a thread of its own: packets never wait for it); summary.json and the report say which " +
        "properties hold after each update",
    )
    .addOption(
      new Option(
        "--max-classes <n>",
        `with --analyze: header classes a design may be cut into before the analysis stops (0: no bound; default ` +
          `${ANALYZE_LIMITS.maxClasses})`,
      ).argParser(bound("--max-classes", MAX_CLASSES_MAX)),
    )
    .addOption(
      new Option(
        "--time-limit <seconds>",
        `with --analyze: seconds the first analysis, and each update's, may take (0: no limit; default ` +
          `${ANALYZE_LIMITS.timeLimit})`,
      ).argParser(seconds("--time-limit", TIME_LIMIT_MAX)),
    )
    .addOption(hopLimitOption())
    .addOption(copyLimitOption())
    .addOption(
      new Option(
        "--workers <n>",
        `data planes to run packets on, in chunks: this thread's and n − 1 worker threads (1 to ${WORKERS_MAX}; ` +
          `default: one per core, one per 64 MiB of captures at most)`,
      ).argParser(limit("--workers", WORKERS_MAX)),
    )
    .option(
      "--queue <url>",
      "run the chunks on strata workers through this Redis: redis://HOST:PORT[/DB], or rediss:// (docs/scale-out.md)",
    )
    .option(
      "--shared <dir>",
      "with --queue: a directory every worker mounts: the capture is read there by byte ranges when under it, and " +
        "chunk outputs above 1 MiB are written there",
    )
    .addHelpText("after", RUN_HELP)
    .action(async (spec: string, flags: RunFlags) => {
      if (flags.queue !== undefined) {
        const { runQueuedReplay } = await import("../run-queue.js");
        ctx.exitCode = await runQueuedReplay(spec, flags, ctx.io);
        return;
      }
      if (flags.shared !== undefined) throw new UsageError("--shared is taken only with --queue (give --queue URL)");
      const { runReplay } = await import("../run.js");
      ctx.exitCode = runReplay(spec, flags, ctx.io);
    });
}

/** --hop-limit, as strata run and strata serve take it. */
export function hopLimitOption(): Option {
  return new Option(
    "--hop-limit <n>",
    `links a packet may cross before it is dropped as a loop (1 to ${HOP_LIMIT_MAX})`,
  )
    .default(64)
    .argParser(limit("--hop-limit", HOP_LIMIT_MAX));
}

/** --copy-limit, as strata run and strata serve take it. */
export function copyLimitOption(): Option {
  return new Option("--copy-limit <n>", `copies replication may make of one input packet (1 to ${COPY_LIMIT_MAX})`)
    .default(4096)
    .argParser(limit("--copy-limit", COPY_LIMIT_MAX));
}
