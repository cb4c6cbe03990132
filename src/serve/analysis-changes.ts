// The description rows a serve's table writes changed, from the ledger's
// journal of writes (src/control/ledger.ts, writtenSince): what `serve
// --analyze` sends its analysis thread after a write, instead of every
// installed row for the thread to compare (./analysis.ts). A write's entry is
// a description row while it has that row's match and action (the ledger's
// rule): each row with a written entry's key is in or out as the ledger holds
// that key now.

import type { RowChange } from "../analysis/analysis.js";
import type { CompiledSpec, CompiledTable } from "../control/compiled.js";
import { entryKey, type Ledger, sameAction, type Written } from "../control/ledger.js";

/** Per table, its rows' positions by entry key (a table's rows are read once per description). */
const byKey = new WeakMap<CompiledTable, Map<string, number[]>>();

function rowsByKey(t: CompiledTable): Map<string, number[]> {
  let map = byKey.get(t);
  if (map === undefined) {
    map = new Map();
    for (const [k, r] of t.rows.entries()) {
      const key = entryKey(t, r.match);
      const list = map.get(key);
      if (list === undefined) map.set(key, [k]);
      else list.push(k);
    }
    byKey.set(t, map);
  }
  return map;
}

/** Per description, its tables by id. */
const tablesOf = new WeakMap<CompiledSpec, Map<number, CompiledTable>>();

/** The description rows of `compiled` the writes `written` reached, each in or out as `ledger` holds them now (rows
 * that did not change too: the analysis passes over those). */
export function rowChanges(compiled: CompiledSpec, ledger: Ledger, written: readonly Written[]): RowChange[] {
  let tables = tablesOf.get(compiled);
  if (tables === undefined) {
    tables = new Map(compiled.tables.map((t) => [t.id, t]));
    tablesOf.set(compiled, tables);
  }
  const out: RowChange[] = [];
  const seen = new Set<string>();
  for (const w of written) {
    const t = tables.get(w.table);
    const member = t === undefined ? undefined : compiled.members[t.member]?.qualified;
    if (t === undefined || member === undefined || seen.has(`${w.table} ${w.key}`)) continue;
    seen.add(`${w.table} ${w.key}`);
    const held = ledger.entries(t.id).get(w.key);
    for (const k of rowsByKey(t).get(w.key) ?? []) {
      const r = t.rows[k];
      // A row the compiler added: no description row stands for it.
      if (r === undefined || r.row < 0) continue;
      const installed = held !== undefined && sameAction(held.action, r.action);
      out.push({ member, role: t.role, row: r.row, installed });
    }
  }
  return out;
}
