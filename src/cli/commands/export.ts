// `strata export`'s names, flags and help; the export itself (../export.ts) is loaded when it runs.

import type { Command } from "commander";
import type { CommandContext } from "../command.js";
import type { ExportFlags } from "../export.js";

export function registerExport(program: Command, ctx: CommandContext): void {
  const exp = program.command("export").description("export a description's tables for other tools");
  exp
    .command("p4")
    .description(
      "write, per machine, a P4_16 program for v1model, its P4Info, the rows " +
        "as a P4Runtime WriteRequest and as simple_switch_CLI commands",
    )
    .argument("<spec>", "network description (YAML or JSON)")
    .requiredOption(
      "--out <dir>",
      "directory for <machine>/main.p4, p4info.json, p4info.txtpb, " +
        "entries.json, entries.bin, runtime_cli.txt, manifest.json",
    )
    .option("--force", "write into a non-empty --out directory strata did not write (never replacing a file there)")
    .option(
      "--target <profile>",
      "check first that every machine fits a target profile (bmv2, asic-example or a profile file; docs/targets.md)",
    )
    .option("--json", "print the manifests as one JSON object")
    .addHelpText(
      "after",
      `
Exit codes: 0 written; 2 bad description, profile or flag, a machine that does not fit the
--target profile (one line per violated limit, nothing written), or something v1model cannot
express (the table and the reason).
docs/p4-export.md explains the mapping and what is left to do by hand (compile with p4c, load).`,
    )
    .action(async (spec: string, flags: ExportFlags) => {
      const { runExport } = await import("../export.js");
      ctx.exitCode = runExport(spec, flags, ctx);
    });
}
