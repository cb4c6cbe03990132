// `strata check --rows`: every compiled row, table by table, with where it came
// from (../intents/provenance.ts).

import type { CompiledSpec } from "../control/compiled.js";
import { originText, type RowOrigin, rowOrigin } from "../intents/provenance.js";
import { TABLE_ROLES, type TableRole } from "../wasm/abi.js";

export interface ListedRow {
  /** "network.member". */
  readonly member: string;
  readonly table: TableRole;
  /** The row's text as the compiler writes it ("dst 10.0.1.8/30 → out 1"). */
  readonly text: string;
  readonly from: RowOrigin;
}

export function listRows(compiled: CompiledSpec): ListedRow[] {
  const out: ListedRow[] = [];
  for (const m of compiled.members)
    for (const role of TABLE_ROLES) {
      const t = m.tables[role];
      if (t !== undefined)
        for (const r of t.rows) out.push({ member: m.qualified, table: role, text: r.text, from: rowOrigin(t, r.row) });
    }
  return out;
}

export function formatRows(rows: readonly ListedRow[]): string {
  const lines = ["rows (each with where it came from):"];
  let table = "";
  for (const r of rows) {
    const here = `${r.member} ${r.table}`;
    if (here !== table) lines.push(`  ${(table = here)}`);
    lines.push(`    ${r.text.padEnd(36)}  ${originText(r.from)}`);
  }
  return `${lines.join("\n")}\n`;
}
