// `strata export p4 SPEC --out DIR [--target PROFILE] [--json]`: one P4 device
// per machine (src/p4/export.ts). What v1model cannot express is an error
// naming the table or link and why (exit 2), never silently left out.

import type { Command } from "commander";
import { compile } from "../control/compile.js";
import { loadSpec } from "../description/load.js";
import { OutDir } from "../out-dir.js";
import { exportFiles, exportP4, writeExport } from "../p4/export.js";
import { checkFit } from "../p4/fit.js";
import { machineRequirements } from "../p4/requirements.js";
import { isProfilePath, loadProfile } from "../p4/targets.js";
import type { CommandContext } from "./command.js";
import { EXIT_BAD_INPUT, EXIT_OK } from "./exit-codes.js";

interface ExportFlags {
  out: string;
  force?: boolean;
  target?: string;
  json?: boolean;
}

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
    .action((spec: string, flags: ExportFlags) => {
      ctx.exitCode = runExport(spec, flags, ctx);
    });
}

function runExport(spec: string, flags: ExportFlags, ctx: CommandContext): number {
  const compiled = compile(loadSpec(spec));
  if (flags.target !== undefined) {
    // Before anything is written: every machine must fit (src/p4/fit.ts).
    const profile = loadProfile(flags.target);
    const violations = machineRequirements(compiled).flatMap((r) =>
      checkFit(r, profile).map((v) => `${spec}: machine ${r.machine} does not fit ${profile.name}: ${v.text}`),
    );
    if (violations.length > 0) {
      for (const v of violations) ctx.io.stderr.write(`strata: ${v}\n`);
      return EXIT_BAD_INPUT;
    }
  }
  const exports = exportP4(compiled, spec);
  // The same rules as strata run's --out: nothing written through a link, over an input or over a file strata did not
  // write.
  const out = OutDir.claim(flags.out, {
    command: "export p4",
    inputs: [spec, ...(flags.target !== undefined && isProfilePath(flags.target) ? [flags.target] : [])],
    force: flags.force === true,
    files: exportFiles(exports),
  });
  writeExport(out, exports);
  out.seal();
  const manifests = exports.map((e) => e.manifest);
  if (flags.json === true) {
    ctx.io.stdout.write(`${JSON.stringify({ source: spec, out: flags.out, machines: manifests })}\n`);
  } else {
    for (const m of manifests) {
      const tables = m.members.reduce((n, x) => n + x.tables.length, 0);
      ctx.io.stdout.write(
        `${flags.out}/${m.machine}: ${m.members.length} member${m.members.length === 1 ? "" : "s"}, ${tables}` +
          ` tables, ${m.ports.length} ports, ${m.updates} updates\n`,
      );
    }
  }
  return EXIT_OK;
}
