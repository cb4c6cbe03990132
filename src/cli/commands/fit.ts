// `strata fit`'s name, flags and help; the fit itself (../fit.ts) is loaded when it runs.

import type { Command } from "commander";
import type { CommandContext } from "../command.js";

export function registerFit(program: Command, ctx: CommandContext): void {
  program
    .command("fit")
    .description("check that every machine of a description fits a P4 target profile")
    .argument("<spec>", "network description (YAML or JSON)")
    .requiredOption("--target <profile>", "a bundled profile's name (bmv2, asic-example) or a profile file")
    .option("--json", "print the report as one JSON object")
    .action(async (file: string, opts: { target: string; json?: boolean }) => {
      const { runFit } = await import("../fit.js");
      ctx.exitCode = runFit(file, opts.target, opts.json === true, ctx.io);
    });
}
