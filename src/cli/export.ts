// `strata export p4 SPEC --out DIR [--target PROFILE] [--json]`: one P4 device
// per machine (src/p4/export.ts). What v1model cannot express is an error
// naming the table or link and why (exit 2), never silently left out.

import { compile } from "../control/compile.js";
import { loadSpec } from "../description/load.js";
import { OutDir } from "../out-dir.js";
import { exportFiles, exportP4, writeExport } from "../p4/export.js";
import { checkFit } from "../p4/fit.js";
import { machineRequirements } from "../p4/requirements.js";
import { isProfilePath, loadProfile } from "../p4/targets.js";
import type { CommandContext } from "./command.js";
import { EXIT_BAD_INPUT, EXIT_OK } from "./exit-codes.js";

export interface ExportFlags {
  out: string;
  force?: boolean;
  target?: string;
  json?: boolean;
}

/** Writes the export into --out and prints what it wrote; returns the exit code. */
export function runExport(spec: string, flags: ExportFlags, ctx: CommandContext): number {
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
  try {
    writeExport(out, exports);
    out.seal();
  } finally {
    out.release();
  }
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
