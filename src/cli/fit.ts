// `strata fit SPEC --target PROFILE [--json]`: does each machine of a description
// fit a P4 target? One line per violated limit and exit 2 when one does not (the
// export could not be loaded there); a short report and exit 0 when all fit.

import { compile } from "../control/compile.js";
import { checkFit, describeUsage, type FitViolation, usage } from "../p4/fit.js";
import { machineRequirements } from "../p4/requirements.js";
import { loadProfile, type TargetProfile } from "../p4/targets.js";
import { loadSpec } from "../description/load.js";
import type { Io } from "./io.js";
import { EXIT_BAD_INPUT, EXIT_OK } from "./exit-codes.js";

export interface FitReport {
  readonly file: string;
  readonly target: { readonly name: string; readonly file: string };
  readonly fits: boolean;
  readonly machines: readonly {
    readonly machine: string;
    readonly fits: boolean;
    readonly violations: readonly FitViolation[];
  }[];
}

export function runFit(file: string, target: string, json: boolean, io: Io): number {
  const compiled = compile(loadSpec(file));
  const profile = loadProfile(target);
  const reqs = machineRequirements(compiled);
  const machines = reqs.map((r) => {
    const violations = checkFit(r, profile);
    return { machine: r.machine, fits: violations.length === 0, violations };
  });
  const fits = machines.every((m) => m.fits);
  const report: FitReport = { file, target: { name: profile.name, file: profile.file }, fits, machines };
  if (json) io.stdout.write(`${JSON.stringify(report)}\n`);
  if (!fits) {
    for (const m of machines)
      for (const v of m.violations)
        io.stderr.write(`strata: ${file}: machine ${m.machine} does not fit ${profile.name}: ${v.text}\n`);
    return EXIT_BAD_INPUT;
  }
  if (!json)
    io.stdout.write(
      formatFit(
        file,
        profile,
        reqs.map((r) => ({ machine: r.machine, text: describeUsage(usage(r), profile) })),
      ),
    );
  return EXIT_OK;
}

function formatFit(
  file: string,
  profile: TargetProfile,
  machines: readonly { machine: string; text: string }[],
): string {
  const count = machines.length === 1 ? "1 machine" : `${machines.length} machines`;
  const lines = [
    `${file}: ${count} fit ${profile.name} (${profile.file})`,
    ...machines.map((m) => `  ${m.machine}: ${m.text}`),
  ];
  return `${lines.join("\n")}\n`;
}
