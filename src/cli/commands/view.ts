// `strata view`'s name, flags and help; the drawing (../view.ts) is loaded when it runs.

import { type Command, Option } from "commander";
import { parsePacketRanges } from "../../run/trace-packets.js";
import type { CommandContext } from "../command.js";
import type { ViewFlags } from "../view.js";

/** The packets whose bytes a page keeps unless --bytes says otherwise. */
const BYTES_DEFAULT = "0-999";

export function registerView(program: Command, ctx: CommandContext): void {
  program
    .command("view")
    .description("draw a description (and, with --run, where a replay's packets went) as one HTML page")
    .argument("<spec>", "network description (YAML or JSON)")
    .option(
      "--run <dir>",
      "the output directory of `strata run`: counts, drops, and with --trace every packet's path and bytes",
    )
    .option(
      "--analysis",
      "add strata analyze's report: per network the reachability matrix, the properties, " +
        "loops and black holes with their paths",
    )
    .option("--out <page.html>", "write the page: one self-contained HTML file")
    .option(
      "--svg <file.svg>",
      "write the topology alone as a standalone SVG (for papers and slides), with --run's counts",
    )
    .addOption(
      new Option("--bytes <ranges>", "packets whose bytes at each hop the page keeps: N, N-M, N-, joined by commas")
        .default(parsePacketRanges(BYTES_DEFAULT, "--bytes"), BYTES_DEFAULT)
        .argParser((v: string) => parsePacketRanges(v, "--bytes")),
    )
    .addHelpText(
      "after",
      `
The page needs no network: its script, styles and data are inside it. Members of one machine
stand in one column; each network is a band, overlays above the networks they are layered on.
With --run, a link's width grows with the packets it carried, members show what they delivered
and dropped, and, when the run wrote a trace, any packet's path can be drawn step by step, with
its bytes at each hop for the packets --bytes names (default ${BYTES_DEFAULT}).

With --analysis, the page adds strata analyze's report: per network (and per bridged or
subduction composition) the reachability matrix member × member with the number of header
classes that go, the properties holding or failing, and the loops and black holes; clicking one,
or a cell of a matrix, draws its path on the drawing and lists its rows.

Give --out, --svg or both. --svg draws what the page draws, without the page's script: link
widths and member badges with --run, no packet browser.

strata view replaces only a file it wrote (never the description or a run's own files).

Exit codes: 0 done; 2 a bad description, run directory, trace, flag or output file.
All exit codes: strata --help.`,
    )
    .action(async (spec: string, flags: ViewFlags) => {
      const { view } = await import("../view.js");
      await view(spec, flags, ctx);
    });
}
