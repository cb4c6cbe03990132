// `strata bench [--json] [--only NAME]...`: the benchmarks of bench/ (also `npm run bench`). The bench
// stands above the code it measures: its command is added to strata's by the bin (bin/strata.ts), not
// by src/cli.

import type { Command } from "commander";
import type { CommandContext } from "../src/cli/command.js";

interface BenchFlags {
  json?: boolean;
  only?: string[];
  list?: boolean;
  maxTime?: string;
}

export function registerBench(program: Command, ctx: CommandContext): void {
  program
    .command("bench")
    .description(
      "measure throughput in packets per second (medians), against the TypeScript reference where there is one",
    )
    .option("--json", "print only a JSON array of {scenario, mpps, nsPerPacket, vsReference?}")
    .option("--only <name>", "run this scenario (repeatable)", (v: string, prev: string[] = []) => [...prev, v])
    .option("--list", "list the scenarios")
    .option("--max-time <seconds>", "time to spend on each scenario", "3")
    .action(async (flags: BenchFlags) => {
      // Loaded on demand: the scenarios pull in the reference interpreter and write temporary captures.
      const { runBench } = await import("./main.js");
      const argv = [
        ...(flags.json === true ? ["--json"] : []),
        ...(flags.list === true ? ["--list"] : []),
        ...(flags.only ?? []).flatMap((o) => ["--only", o]),
        "--max-time",
        flags.maxTime ?? "3",
      ];
      ctx.exitCode = await runBench(argv, {
        stdout: (t) => ctx.io.stdout.write(t),
        stderr: (t) => ctx.io.stderr.write(t),
      });
    });
}
