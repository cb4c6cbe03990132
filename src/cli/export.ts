// `strata export p4 SPEC --out DIR [--target PROFILE] [--json]`: one P4 device
// per machine (src/p4/export.ts). What v1model cannot express is an error
// naming the table or link and why (exit 2), never silently left out.

import type { Command } from "commander";
import { UsageError } from "../errors.js";
import { compile } from "../control/compile.js";
import { loadSpec } from "../spec/load.js";
import { exportP4, writeExport } from "../p4/export.js";
import { type MachineRequirements, machineRequirements } from "../p4/requirements.js";
import type { CommandContext } from "./main.js";
import { EXIT_OK, EXIT_PROBLEM } from "./main.js";

interface ExportFlags {
  out: string;
  target?: string;
  json?: boolean;
}

/** What src/p4/fit.ts is to export: the fit check of the target profiles (issue #7). */
interface FitModule {
  checkFit(requirements: readonly MachineRequirements[], profile: string): { readonly ok: boolean; readonly problems?: readonly string[] };
}

export function registerExport(program: Command, ctx: CommandContext): void {
  const exp = program.command("export").description("export a description's tables for other tools");
  exp
    .command("p4")
    .description("write, per machine, a P4_16 program for v1model, its P4Info, the rows as a P4Runtime WriteRequest and as simple_switch_CLI commands")
    .argument("<spec>", "network description (YAML or JSON)")
    .requiredOption("--out <dir>", "directory for <machine>/main.p4, p4info.json, p4info.txtpb, entries.json, entries.bin, runtime_cli.txt, manifest.json")
    .option("--target <profile>", "check that every machine fits a target profile first (exit 1 if one does not)")
    .option("--json", "print the manifests as one JSON object")
    .addHelpText(
      "after",
      `
Exit codes: 0 written; 1 a machine does not fit the --target profile (nothing written);
2 bad description or flag, or something v1model cannot express (the table and the reason).
docs/p4-export.md explains the mapping and what is left to do by hand (compile with p4c, load).`,
    )
    .action(async (spec: string, flags: ExportFlags) => {
      ctx.exitCode = await runExport(spec, flags, ctx);
    });
}

async function loadFit(): Promise<FitModule | undefined> {
  const path = "../p4/fit.js"; // written with the target profiles; absent until then
  try {
    const mod = (await import(path)) as Partial<FitModule>;
    return typeof mod.checkFit === "function" ? (mod as FitModule) : undefined;
  } catch {
    return undefined;
  }
}

async function runExport(spec: string, flags: ExportFlags, ctx: CommandContext): Promise<number> {
  const compiled = compile(loadSpec(spec));
  if (flags.target !== undefined) {
    const fit = await loadFit();
    if (fit === undefined) throw new UsageError(`--target ${flags.target}: the target fit check is not available yet (src/p4/fit.ts, issue #7); export without --target`);
    const result = fit.checkFit(machineRequirements(compiled), flags.target);
    if (!result.ok) {
      for (const p of result.problems ?? []) ctx.io.stderr.write(`strata: ${p}\n`);
      return EXIT_PROBLEM;
    }
  }
  const exports = exportP4(compiled, spec);
  writeExport(flags.out, exports);
  const manifests = exports.map((e) => e.manifest);
  if (flags.json === true) {
    ctx.io.stdout.write(`${JSON.stringify({ source: spec, out: flags.out, machines: manifests })}\n`);
  } else {
    for (const m of manifests) {
      const tables = m.members.reduce((n, x) => n + x.tables.length, 0);
      ctx.io.stdout.write(`${flags.out}/${m.machine}: ${m.members.length} member${m.members.length === 1 ? "" : "s"}, ${tables} tables, ${m.ports.length} ports, ${m.updates} updates\n`);
    }
  }
  return EXIT_OK;
}

