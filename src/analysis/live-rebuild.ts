// When a running analysis (./live.ts) is made afresh. Its writes only ever
// cut classes (./header-space.ts: nothing merges, so that a class is a stable
// number), and each write's diagram nodes stay in the store: after thousands
// of writes a 100k-prefix FIB had 8,131 classes where an analysis afresh of
// the same rows has a handful, and with a 2,000-row ACL the store passed its
// 4,194,304 nodes after some 2,300 writes, which stopped the analysis. Made
// afresh (the description, with the rows out, retold and beyond it that the
// tables hold now applied to it), its classes are those behaviours make again
// and its store is new. It is done when the classes are more than twice the
// last fresh analysis's and the writes since have done at least the work one
// analysis afresh does (rows read and classes walked: amortised, every write
// costs at most twice its own), or when the store has grown by half and past
// half its bound (before the bound stops it).

import type { CompiledSpec } from "../control/compiled.js";
import { type Analysis, HEADER_ROLES, type RowChange } from "./analysis.js";
import { actionKey } from "./behaviours.js";

/** Classes a fresh analysis may have more than twice of before one is made afresh (a few writes' worth). */
const SLACK = 16;

/** What a running analysis measures of itself to know when to be made afresh. */
export interface Freshness {
  /** Live classes of the analysis made last afresh, and what it did: rows read and classes walked. */
  readonly classes: number;
  readonly work: number;
  /** Nodes of the diagram store at that time. */
  readonly nodes: number;
}

export function freshness(a: Analysis): Freshness {
  const classes = liveClasses(a);
  const rows = a.members.reduce(
    (n, v) =>
      n +
      Object.values(v.tables).reduce((k, t) => k + t.rows.length, 0) +
      (v.transmit?.spec.rows.length ?? 0) +
      (v.send?.spec.rows.length ?? 0),
    0,
  );
  return { classes, work: rows + classes, nodes: nodes(a) };
}

export const liveClasses = (a: Analysis): number => a.spaces.all().reduce((n, s) => n + s.atoms().length, 0);
const nodes = (a: Analysis): number => a.spaces.all().reduce((n, s) => n + s.nodes, 0);

/** Whether to make the analysis afresh, `work` done by the writes since it was last. */
export function stale(a: Analysis, last: Freshness, work: number): boolean {
  const n = nodes(a);
  if (n > a.budget.maxNodes / 2 && n > 1.5 * last.nodes) return true;
  return work >= last.work && liveClasses(a) > 2 * last.classes + SLACK;
}

/** The changes that bring an analysis afresh of `compiled` to the rows `a` holds: rows out, and rows whose action a
 * write changed (the entries beyond the description's rows are set apart, Analysis.setOthers). */
export function rowsHeld(a: Analysis, compiled: CompiledSpec): RowChange[] {
  const out: RowChange[] = [];
  for (const v of a.members) {
    const member = v.member.qualified;
    const spec = compiled.members[v.index]?.tables;
    for (const role of HEADER_ROLES) {
      const t = v.tables[role];
      const written = spec?.[role]?.spec?.rows;
      if (t === undefined || written === undefined) continue;
      written.forEach((w, row) => {
        const now = t.rows[row]?.row.action ?? w.action;
        const installed = t.isActive(row);
        const retold = actionKey(now) !== actionKey(w.action);
        if (!installed || retold) out.push({ member, role, row, installed, ...(retold ? { action: now } : {}) });
      });
    }
    for (const role of ["transmit", "send"] as const) {
      const t = role === "transmit" ? v.transmit : v.send;
      const written = spec?.[role]?.spec?.rows;
      if (t === undefined || written === undefined) continue;
      written.forEach((w, row) => {
        const now = t.spec.rows[row]?.action ?? w.action;
        const installed = t.active[row] === true;
        const retold = actionKey(now) !== actionKey(w.action);
        if (!installed || retold) out.push({ member, role, row, installed, ...(retold ? { action: now } : {}) });
      });
    }
  }
  return out;
}
