// `strata place`'s name, flags and help; the placement itself (../place.ts) is loaded when it runs.

import type { Command } from "commander";
import type { CommandContext } from "../command.js";

export function registerPlace(program: Command, ctx: CommandContext): void {
  program
    .command("place")
    .description("place the machines of a description on a fleet of P4 targets")
    .argument("<spec>", "network description (YAML or JSON)")
    .requiredOption(
      "--targets <fleet>",
      "fleet file: the targets, their profiles and labels, and the machines' priorities",
    )
    .option("--json", "print the placement as one JSON object")
    .action(async (file: string, opts: { targets: string; json?: boolean }) => {
      const { runPlace } = await import("../place.js");
      ctx.exitCode = runPlace(file, opts.targets, opts.json === true, ctx.io);
    });
}
