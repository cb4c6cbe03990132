// `strata analyze`'s name, flags and help; the analysis itself (../analyze.ts) is loaded when it runs.

import type { Command } from "commander";
import { ANALYZE_LIMITS, MAX_CLASSES_MAX, TIME_LIMIT_MAX } from "../../analysis/budget.js";
import { HOP_LIMIT_MAX } from "../../wasm/runner.js";
import type { AnalyzeFlags } from "../analyze.js";
import type { CommandContext } from "../command.js";
import { bound, limit, seconds } from "../options.js";

export function registerAnalyze(program: Command, ctx: CommandContext): void {
  program
    .command("analyze")
    .description("compute the model's reachability relations over header classes and check its properties")
    .argument("<spec>", "network description (YAML or JSON)")
    .option("--json", "print the report (or the answers) as one JSON object")
    .option(
      "--from <endpoint>",
      "where packets enter, as --in says it: NETWORK:MEMBER, " +
        "NETWORK:MEMBER.LINK, NETWORK:MEMBER@SESSION or NETWORK:EXTERNAL",
    )
    .option("--to <member>", "the member they should reach: NETWORK:MEMBER")
    .option(
      "--header <patterns>",
      "only headers matching these patterns of the --from network's design: 'dst=10.0.2.0/24 proto=17'",
    )
    .option("--loops", "list the header classes that loop, and where")
    .option("--black-holes", "list the header classes that enter a member and are dropped by a miss")
    .option("--unreachable", "list the members no header reaches")
    .option("--equivalent <spec>", "whether another description has the same reachable relation (seed §2.8)")
    .option(
      "--hop-limit <n>",
      "links a packet may cross before it is dropped as a loop, as strata run's: in the relations and on a " +
        "--from path (the underlay's crossings that carry a virtual link count)",
      limit("--hop-limit", HOP_LIMIT_MAX),
      64,
    )
    .option(
      "--max-steps <n>",
      "steps (a link crossed, a row taken) the --from search may take before it stops and reports what it found",
      limit("--max-steps", MAX_STEPS_MAX),
      MAX_STEPS,
    )
    .option(
      "--max-classes <n>",
      "header classes a design may be cut into before the analysis stops and reports what it found (0: no bound)",
      bound("--max-classes", MAX_CLASSES_MAX),
      ANALYZE_LIMITS.maxClasses,
    )
    .option(
      "--time-limit <seconds>",
      "seconds the analysis may take before it stops and reports what it found (0: no limit)",
      seconds("--time-limit", TIME_LIMIT_MAX),
      ANALYZE_LIMITS.timeLimit,
    )
    .addHelpText(
      "after",
      "\nExit codes: 0 every property holds (a query: the answer is the good " +
        "one — some class reaches --to, no loop, no black hole, none " +
        "unreachable, equivalent); 1 otherwise; 2 a bad description or flag; " +
        "3 cut short by --max-classes or --time-limit before it could tell (its last line says what it found). " +
        "All exit codes: strata --help.",
    )
    .action(async (file: string, flags: AnalyzeFlags) => {
      const { runAnalyze } = await import("../analyze.js");
      ctx.exitCode = runAnalyze(file, flags, ctx.io);
    });
}

/** --max-steps' default: a search of about this many steps takes some seconds. */
const MAX_STEPS = 1_000_000;
/** The most --max-steps takes: a thousand times the default, hours of search. */
const MAX_STEPS_MAX = 1_000_000_000;
