// `strata check SPEC [--json]`: load and compile a description, and summarise it.
// The report is a value (CheckReport) so that later checks add sections to it
// without changing how it is printed or exit codes are set. The cheap properties
// of the analysis (docs/analysis.md) are warnings: header classes that loop, and
// black holes of the traffic model's sessions, each with a path of rows. The
// analysis has a budget (--max-classes, --time-limit) that keeps a check quick:
// past it the description is valid all the same, and a line says how far the
// analysis got and which flag runs it in full.

import { Analysis } from "../analysis/analysis.js";
import { CHECK_LIMITS, orCut } from "../analysis/budget.js";
import { cheapFindings, type Finding } from "../analysis/queries.js";
import { compile } from "../control/compile.js";
import type { CompiledSpec } from "../control/compiled.js";
import { recoverAllocation } from "../control/allocation.js";
import { type Allocation, EMPTY_ALLOCATION } from "../description/types.js";
import { SpecError } from "../description/problems.js";
import { loadSpec } from "../description/load.js";
import type { Spec } from "../description/types.js";
import { TABLE_ROLES, type TableRole } from "../wasm/abi.js";
import type { Io } from "./io.js";
import { analysisBudget, type BudgetFlags, classesMade, stopReason } from "./analysis-budget.js";
import { EXIT_BAD_INPUT, EXIT_OK } from "./exit-codes.js";
import { formatRows, type ListedRow, listRows } from "./check-rows.js";

export interface NetworkSummary {
  readonly name: string;
  readonly header: string;
  readonly decrementTtl: boolean;
  readonly members: number;
  readonly links: number;
  /** Rows per table, by member key; only the tables written. */
  readonly tables: Record<string, Partial<Record<TableRole, number>>>;
}

export interface CheckReport {
  readonly file: string;
  readonly ok: boolean;
  readonly networks: readonly NetworkSummary[];
  /** Every link end's identifier and named send row's session, with `allocated: true` where strata chose it. */
  readonly allocation: Allocation;
  /** The cheap properties that fail (none with --no-analyze). */
  readonly warnings: readonly Warning[];
  /** The analysis was cut short by its budget: how far it got, and the flag that runs it in full. */
  readonly analysisCut?: string;
  /** --rows: every compiled row with where it came from. */
  readonly rows?: readonly ListedRow[];
}

/** A property of the analysis that fails: a warning, not an error (the description is valid). */
export interface Warning extends Finding {
  readonly property: "No_routing_loops" | "session black hole";
}

/** Warnings printed as text; --json and `strata analyze` have them all. */
const WARNED = 5;

/** Runs the check, prints, and returns the exit code; `analysis`: its budget, or false for none (--no-analyze). */
export function runCheck(
  file: string,
  json: boolean,
  io: Io,
  previousFile?: string,
  analysis: BudgetFlags | false = CHECK_LIMITS,
  rows = false,
): number {
  let spec: Spec;
  let compiled: CompiledSpec;
  let at = file;
  try {
    // The earlier version is compiled as it would be installed, and its allocation recovered from that.
    const previous = previousFile === undefined ? undefined : recoverAllocation(compile(loadSpec((at = previousFile))));
    at = file;
    spec = loadSpec(file, previous === undefined ? {} : { previous });
    // The compiler's own checks (match kinds against rows) belong to a complete check.
    compiled = compile(spec);
  } catch (err) {
    if (!(err instanceof SpecError)) throw err;
    printSpecError(err, io);
    if (json) io.stdout.write(`${JSON.stringify(errorReport(at, err))}\n`);
    return EXIT_BAD_INPUT;
  }
  const report = {
    ...summarize(spec),
    ...(analysis === false ? {} : warningsOf(compiled, analysis, io)),
    ...(rows ? { rows: listRows(compiled) } : {}),
  };
  io.stdout.write(json ? `${JSON.stringify(report)}\n` : formatReport(report));
  if (!json && report.rows !== undefined) io.stdout.write(formatRows(report.rows));
  return EXIT_OK;
}

/** Every error of a description on its own line, as main() prints a single InputError. */
export function printSpecError(err: SpecError, io: Io): void {
  for (const line of err.lines()) io.stderr.write(`strata: ${line}\n`);
}

/** The cheap properties that fail, within the budget; what the budget cut short, and how to run it in full. */
function warningsOf(
  compiled: CompiledSpec,
  flags: BudgetFlags,
  io: Io,
): { readonly warnings: Warning[]; readonly analysisCut?: string } {
  const { budget, done } = analysisBudget(flags, io);
  let found: ReturnType<typeof cheapFindings>;
  let a: Analysis;
  try {
    a = new Analysis(compiled, { budget });
    // Work that cannot stop half-way past the budget: the warnings found are lost, and the line says it was cut short.
    found = orCut(
      budget,
      () => cheapFindings(a),
      () => ({ loops: [], sessionHoles: [], walked: { classes: 0, of: 0 } }),
    );
  } finally {
    done();
  }
  const warnings = [
    ...found.loops.map((f): Warning => ({ property: "No_routing_loops", ...f })),
    ...found.sessionHoles.map((f): Warning => ({ property: "session black hole", ...f })),
  ];
  const stop = budget.stopped;
  if (stop === undefined) return { warnings };
  const { why, lift } = stopReason(stop, flags);
  const checked =
    found.walked.of === 0
      ? `no warning was looked for (header classes: ${madeText(classesMade(a.spaces))})`
      : `loops looked for in ${found.walked.classes.toLocaleString("en-US")} of ` +
        `${found.walked.of.toLocaleString("en-US")} header classes`;
  const full = lift === "" ? "" : ` (strata check ${lift} runs it in full)`;
  return { warnings, analysisCut: `analysis cut short: ${why}; ${checked}${full}` };
}

function madeText({ made, note }: ReturnType<typeof classesMade>): string {
  return `${made} made${note === "" ? "" : `; ${note}`}`;
}

export function summarize(spec: Spec): CheckReport {
  return {
    file: spec.file,
    ok: true,
    networks: spec.networks.map((n) => {
      const tables: Record<string, Partial<Record<TableRole, number>>> = {};
      for (const [member, t] of n.tables) {
        const counts: Partial<Record<TableRole, number>> = {};
        for (const role of TABLE_ROLES) {
          const table = t[role];
          if (table !== undefined) counts[role] = table.rows.length;
        }
        tables[member] = counts;
      }
      return {
        name: n.name,
        header: n.design.name,
        decrementTtl: n.decrementTtl,
        members: n.members.length,
        links: n.links.length,
        tables,
      };
    }),
    allocation: spec.allocation ?? EMPTY_ALLOCATION,
    warnings: [],
  };
}

export function formatReport(report: CheckReport): string {
  const count = (n: number, what: string): string => `${n} ${what}${n === 1 ? "" : "s"}`;
  const lines = [`${report.file}: valid, ${count(report.networks.length, "network")}`];
  for (const n of report.networks) {
    const ttl = n.decrementTtl ? ", ttl decrement" : "";
    lines.push(`network ${n.name}: header ${n.header}${ttl}, ${count(n.members, "member")}, ${count(n.links, "link")}`);
    for (const [member, counts] of Object.entries(n.tables)) {
      const rows = Object.entries(counts).map(([role, rowCount]) => `${role} ${rowCount}`);
      lines.push(`  ${member}: ${rows.length === 0 ? "no tables" : rows.join(", ")}`);
    }
    // Only what strata chose: a description that writes every identifier prints as before.
    const links = report.allocation.links
      .filter((l) => l.allocated && l.network === n.name)
      .map((l) => `${l.member}.${l.ident} (${l.link})`);
    const sessions = report.allocation.sessions
      .filter((s) => s.allocated && s.network === n.name)
      .map((s) => `${s.member}@${s.session} (${s.name})`);
    if (links.length > 0) lines.push(`  allocated link identifiers: ${links.join(", ")}`);
    if (sessions.length > 0) lines.push(`  allocated sessions: ${sessions.join(", ")}`);
    const overlays = (report.allocation.overlays ?? [])
      .filter((o) => o.network === n.name)
      .map((o) => `${o.link} ${o.field} ${o.id}`);
    if (overlays.length > 0) lines.push(`  overlay identifiers: ${overlays.join(", ")}`);
  }
  for (const property of ["No_routing_loops", "session black hole"] as const) {
    const list = report.warnings.filter((w) => w.property === property);
    for (const w of list.slice(0, WARNED)) {
      const what = property === "No_routing_loops" ? `${w.header} comes back to ${w.at}` : `${w.header} → ${w.at}`;
      lines.push(`warning: ${property}: ${w.component}: ${what}`, `  ${w.path}`);
    }
    if (list.length > WARNED)
      lines.push(
        `warning: ${property}: ${list.length - WARNED} more (strata ` +
          `analyze ${report.file} ${property === "No_routing_loops" ? "--loops" : "--black-holes"})`,
      );
  }
  if (report.analysisCut !== undefined) lines.push(report.analysisCut);
  return `${lines.join("\n")}\n`;
}

function errorReport(file: string, err: SpecError): object {
  return {
    file,
    ok: false,
    errors: err.errors.map((e) => ({
      file: e.file,
      line: e.line,
      column: e.column,
      path: e.path,
      problem: e.problem,
      fix: e.fix,
    })),
    omitted: err.omitted,
  };
}
