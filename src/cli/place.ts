// `strata place SPEC --targets FLEET [--json]`: place the machines of a description
// on a fleet of P4 targets (src/p4/place.ts, docs/targets.md). Exit 0 when every
// machine is placed, 1 when some cannot be, 2 for bad input.

import { compile } from "../control/compile.js";
import { describeUsage } from "../p4/fit.js";
import { type Fleet, loadFleet } from "../p4/fleet.js";
import { type Placement, place } from "../p4/place.js";
import { machineRequirements } from "../p4/requirements.js";
import { loadSpec } from "../description/load.js";
import { TextTable } from "./format.js";
import type { Io } from "./io.js";
import { EXIT_OK, EXIT_PROBLEM } from "./exit-codes.js";

export interface PlaceReport extends Placement {
  readonly file: string;
  readonly fleet: string;
  readonly ok: boolean;
}

export function runPlace(file: string, fleetFile: string, json: boolean, io: Io): number {
  const compiled = compile(loadSpec(file));
  const fleet = loadFleet(fleetFile);
  const placement = place(machineRequirements(compiled), fleet);
  const report: PlaceReport = { file, fleet: fleetFile, ok: placement.unplaceable.length === 0, ...placement };
  // Unlimited is Infinity in memory and "unlimited" in JSON (which has no Infinity).
  io.stdout.write(
    json
      ? `${JSON.stringify(report, (_k, v: unknown) => (v === Number.POSITIVE_INFINITY ? "unlimited" : v))}\n`
      : formatPlacement(report, fleet),
  );
  return report.ok ? EXIT_OK : EXIT_PROBLEM;
}

export function formatPlacement(report: PlaceReport, fleet: Fleet): string {
  const total = report.placed.length + report.unplaceable.length;
  let out =
    `${report.file} on ${report.fleet}: ${report.placed.length} of ${total} machine` +
    `${total === 1 ? "" : "s"} placed\n`;
  if (report.placed.length > 0) {
    const rows = report.placed.map((p) => {
      const moved = p.placedOn !== undefined && p.placedOn !== p.target ? ` (was on ${p.placedOn})` : "";
      return [p.machine, String(p.priority), String(p.score), `${p.target}${moved}`];
    });
    // Every row is known: widths from all of them, so the columns line up.
    const width = (i: number): number => Math.max(...rows.map((r) => (r[i] ?? "").length));
    const table = new TextTable(
      [
        { title: "machine", align: "left", width: width(0) },
        { title: "priority", width: width(1) },
        { title: "score", width: width(2) },
        { title: "target", align: "left", width: width(3) },
      ],
      "  ",
    );
    out += table.header();
    for (const r of rows) out += table.row(r);
  }
  if (report.displaced.length > 0) {
    out += "displaced:\n";
    const now = new Map(report.placed.map((p) => [p.machine, p.target]));
    for (const d of report.displaced) {
      const then = now.get(d.machine);
      out +=
        `  ${d.machine} (priority ${d.priority}) ` +
        `from ${d.target} by ${d.by} (priority ${d.byPriority}); ` +
        `${then === undefined ? "unplaceable" : `now on ${then}`}\n`;
    }
  }
  if (report.unplaceable.length > 0) {
    out += "unplaceable:\n";
    for (const u of report.unplaceable) {
      out += `  ${u.machine} (priority ${u.priority}):\n`;
      for (const r of u.reasons) out += `    ${r.target}: ${r.reason}\n`;
    }
  }
  out += "targets:\n";
  for (const t of report.targets) {
    const profile = fleet.targets.find((f) => f.name === t.name)?.profile;
    const load =
      t.machines.length === 0 || profile === undefined
        ? "empty"
        : `${t.machines.join(", ")}; ${describeUsage(t.used, profile)}`;
    out += `  ${t.name} (${t.profile}): ${load}\n`;
  }
  return out;
}
