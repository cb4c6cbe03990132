// `strata pcap …`: capture utilities. The inspection itself is ../pcap.ts, loaded when it runs.

import type { Command } from "commander";
import { InputError } from "../../errors.js";
import type { CommandContext } from "../command.js";
import { EXIT_BAD_INPUT } from "../exit-codes.js";

export function registerPcap(program: Command, ctx: CommandContext): void {
  const pcap = program.command("pcap").description("capture utilities (pcap and pcapng)");
  pcap
    .command("inspect")
    .description("list the packets of pcap and pcapng files")
    .argument("<file...>", "capture files (pcap or pcapng, either byte order)")
    .option("--json", "one JSON object per packet per line instead of a table")
    .addHelpText(
      "after",
      "\nEvery good packet is listed before any damage is reported; a damaged or missing file\n" +
        "is reported on stderr as one line, the other files are still inspected, and the exit\n" +
        "code is 2. All exit codes: strata --help.\n",
    )
    .action(async (files: string[], options: { json?: boolean }) => {
      const { inspectFile } = await import("../pcap.js");
      for (const [n, file] of files.entries()) {
        if (n > 0 && options.json !== true) ctx.io.stdout.write("\n");
        try {
          await inspectFile(file, options.json === true, ctx.io);
        } catch (err) {
          if (!(err instanceof InputError)) throw err;
          await ctx.io.stdout.flush();
          ctx.io.stderr.write(`strata: ${err.message}\n`);
          ctx.exitCode = EXIT_BAD_INPUT;
        }
      }
    });
}
