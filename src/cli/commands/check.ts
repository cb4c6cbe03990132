// `strata check`'s name, flags and help; the check itself (../check.ts) is loaded when it runs.

import type { Command } from "commander";
import { CHECK_LIMITS, MAX_CLASSES_MAX, TIME_LIMIT_MAX } from "../../analysis/budget.js";
import type { CommandContext } from "../command.js";
import { bound, seconds } from "../options.js";

export function registerCheck(program: Command, ctx: CommandContext): void {
  program
    .command("check")
    .description("validate a network description and print a summary")
    .argument("<spec>", "network description (YAML or JSON)")
    .option("--json", "print the summary (or the errors) as one JSON object")
    .option("--rows", "list every compiled row with where it came from: the intent that made it, or its place by hand")
    .option(
      "--previous <spec>",
      "an earlier version of the description, as if installed: identifiers " +
        "SPEC leaves out keep the values they had there",
    )
    .option(
      "--no-analyze",
      "skip the warnings of the analysis (header classes that loop, sessions that fall into black holes)",
    )
    .option(
      "--max-classes <n>",
      "header classes a design may be cut into before the analysis stops, the check done (0: no bound)",
      bound("--max-classes", MAX_CLASSES_MAX),
      CHECK_LIMITS.maxClasses,
    )
    .option(
      "--time-limit <seconds>",
      "seconds the analysis may take before it stops, the check done (0: no limit)",
      seconds("--time-limit", TIME_LIMIT_MAX),
      CHECK_LIMITS.timeLimit,
    )
    .addHelpText(
      "after",
      "\nExit codes: 0 valid (with or without warnings, and when the analysis was cut short: a line says so); " +
        "2 a bad description (every error, one line each) or flag. All exit codes: strata --help.",
    )
    .action(
      async (
        file: string,
        opts: {
          json?: boolean;
          rows?: boolean;
          previous?: string;
          analyze: boolean;
          maxClasses: number;
          timeLimit: number;
        },
      ) => {
        const { runCheck } = await import("../check.js");
        const analysis = opts.analyze ? opts : false;
        ctx.exitCode = runCheck(file, opts.json === true, ctx.io, opts.previous, analysis, opts.rows === true);
      },
    );
}
