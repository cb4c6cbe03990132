// `strata check`'s name, flags and help; the check itself (../check.ts) is loaded when it runs.

import type { Command } from "commander";
import type { CommandContext } from "../command.js";

export function registerCheck(program: Command, ctx: CommandContext): void {
  program
    .command("check")
    .description("validate a network description and print a summary")
    .argument("<spec>", "network description (YAML or JSON)")
    .option("--json", "print the summary (or the errors) as one JSON object")
    .option(
      "--previous <spec>",
      "an earlier version of the description, as if installed: identifiers " +
        "SPEC leaves out keep the values they had there",
    )
    .option(
      "--no-analyze",
      "skip the warnings of the analysis (header classes that loop, sessions that fall into black holes)",
    )
    .addHelpText(
      "after",
      "\nExit codes: 0 valid (with or without warnings); 2 a bad description " +
        "(every error, one line each) or flag. All exit codes: strata --help.",
    )
    .action(async (file: string, opts: { json?: boolean; previous?: string; analyze: boolean }) => {
      const { runCheck } = await import("../check.js");
      ctx.exitCode = runCheck(file, opts.json === true, ctx.io, opts.previous, opts.analyze);
    });
}
