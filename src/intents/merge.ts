// Hand rows beside an intent's (docs/spec.md, Intents: which wins). In each
// member's table the rows written by hand come first, so for what they match they
// win, as the first matching row always does; an intent row a hand row shadows
// entirely (the same `in` and match) is left out, and the table says so once, as
// a note. A hand table whose written kind or capacity cannot hold the intent's
// rows too is an error: nothing the intent could do would make them fit.

import type { Path, Problems } from "../description/problems.js";
import type { MemberTables, Pattern, RowSpec, TableSpec } from "../description/types.js";
import type { TableRole } from "../wasm/abi.js";
import type { IntentTables } from "./routes.js";

/** The roles an intent writes (transmit and send: the overlays intent's sessions). */
const ROLES = ["acquire", "forward", "receive", "transmit", "send"] as const satisfies readonly TableRole[];

/** Where merge reports: the table path of a member's role, for notes and errors (none: say nothing). */
export interface MergeReport {
  readonly problems: Problems;
  readonly tablesPath: Path;
}

/** The hand tables with the intent's rows after them, member by member. */
export function mergeTables(
  hand: ReadonlyMap<string, MemberTables>,
  intent: IntentTables,
  width: number,
  report?: MergeReport,
): Map<string, MemberTables> {
  const out = new Map(hand);
  for (const [key, tables] of intent) {
    const mine = hand.get(key);
    if (mine === undefined) {
      out.set(key, tables);
      continue;
    }
    const merged: MemberTables = { ...mine };
    for (const role of ROLES) {
      const t = tables[role];
      if (t !== undefined) merged[role] = mergeTable(mine[role], t, width, report && { ...report, member: key, role });
    }
    out.set(key, merged);
  }
  return out;
}

function mergeTable(
  hand: TableSpec | undefined,
  intent: TableSpec,
  width: number,
  report: (MergeReport & { member: string; role: TableRole }) | undefined,
): TableSpec {
  if (hand === undefined) return intent;
  const written = new Set(hand.rows.map((r) => rowKey(r, width)));
  const rows = intent.rows.filter((r) => !written.has(rowKey(r, width)));
  const shadowed = intent.rows.length - rows.length;
  const name = intent.rows[0]?.intent?.intent ?? "routes";
  const path = report === undefined ? [] : [...report.tablesPath, report.member];
  if (report !== undefined && shadowed > 0)
    report.problems.note(
      path,
      report.role,
      `${shadowed} row${shadowed === 1 ? "" : "s"} of the ${name} intent for ${report.member}'s ${report.role} ` +
        `table ${shadowed === 1 ? "is" : "are"} written by hand here, and the hand row${shadowed === 1 ? "" : "s"} win`,
      "hand rows come first in a table; strata check --rows lists every row with where it came from",
    );
  const total = hand.rows.length + rows.length;
  if (report !== undefined && hand.capacity !== undefined && hand.capacity < total)
    report.problems.add(
      [...path, report.role, "capacity"],
      `capacity ${hand.capacity} cannot hold ${hand.rows.length} hand rows and the ${name} intent's ${rows.length}`,
      `write capacity: ${total} or more, or leave capacity out`,
    );
  if (report !== undefined && hand.kind !== undefined && needsPrefixes(rows) && !holdsPrefixes(hand.kind))
    report.problems.add(
      [...path, report.role, "kind"],
      `kind ${hand.kind} cannot hold the ${name} intent's prefix rows`,
      "write kind: lpm or ternary, or leave kind out",
    );
  return { ...hand, rows: [...hand.rows, ...rows] };
}

function needsPrefixes(rows: readonly RowSpec[]): boolean {
  return rows.some((r) => [...r.match.values()].some((p) => p.kind === "prefix"));
}

function holdsPrefixes(kind: string): boolean {
  return kind === "lpm" || kind === "ternary" || kind === "range";
}

/**
 * A row's key: its in-link and its match, field by field (an exact value the same as its full-width prefix); a
 * transmit row's out-link, a send row's session.
 */
export function rowKey(r: RowSpec, width: number): string {
  const fields = [...r.match].sort(([a], [b]) => (a < b ? -1 : 1)).map(([f, p]) => `${f}=${patternKey(p, width)}`);
  const slot = r.out !== undefined ? `>${r.out}` : r.session !== undefined ? `#${r.session}` : "";
  return `${String(r.in ?? "*")}${slot}|${fields.join(",")}`;
}

function patternKey(p: Pattern, width: number): string {
  switch (p.kind) {
    case "exact":
      return `${p.value}/${width}`;
    case "prefix":
      return `${p.value}/${p.len}`;
    case "ternary":
      return `${p.value}&${p.mask}`;
    case "range":
      return `${p.lo}..${p.hi}`;
  }
}
