// `strata trace`'s name, flags and help; the reading of the trace (../trace.ts) is loaded when it runs.

import { type Command, InvalidArgumentError } from "commander";
import type { CommandContext } from "../command.js";
import type { TraceFlags } from "../trace.js";

export function registerTrace(program: Command, ctx: CommandContext): void {
  program
    .command("trace")
    .description("show the paths packets took in a replay made with --trace")
    .argument("<dir>", "output directory of `strata run --trace`")
    .option("--packet <n>", "show every step of packet N (numbered from 0)", (v: string) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError("it must be a packet number, 0 or more.");
      return n;
    })
    .option("--json", "print the trace lines themselves")
    .addHelpText(
      "after",
      "\nExit codes: 0 done; 2 no trace in DIR, no such packet, a bad trace " +
        "line or a bad flag.\nAll exit codes: strata --help.",
    )
    .action(async (dir: string, flags: TraceFlags) => {
      const { showTrace } = await import("../trace.js");
      await showTrace(dir, flags, ctx.io);
    });
}
