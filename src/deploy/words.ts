// A deploy's outcome in words and as JSON: a line per machine, a plan's changes per table with
// the row each comes from, and each update a device refused with the row it came from.

import { codeName } from "../p4runtime/client.js";
import type { Failure, Outcome } from "./machine.js";
import { type Change, counts } from "./plan.js";

/** What was written of each op: the changes less those the device refused. */
function written(o: Outcome): ReturnType<typeof counts> {
  const refused = new Set(o.failed.map((f) => f.change));
  return counts(o.changes.filter((c) => !refused.has(c)));
}

const head = (o: Pick<Outcome, "machine" | "address" | "deviceId">): string =>
  `${o.machine} (${o.address} device ${o.deviceId})`;

/** The machine's line: what was (or, for a plan, would be) done. */
export function outcomeLine(o: Outcome, plan: boolean): string {
  return `${head(o)}: ${outcomeWords(o, plan)}`;
}

/** What was (or, for a plan, would be) done on a machine's device. */
export function outcomeWords(o: Outcome, plan: boolean): string {
  const n = counts(o.changes);
  if (plan) {
    const pipeline = o.pipeline.set ? `pipeline to set (${o.pipeline.why}); ` : "";
    if (!o.pipeline.set && o.changes.length === 0) return `converged, nothing to write`;
    return `${pipeline}${n.insert} to insert, ${n.modify} to modify, ${n.delete} to delete`;
  }
  if (!o.pipeline.set && o.changes.length === 0) return `converged, nothing to write`;
  const w = written(o);
  const pipeline = o.pipeline.set ? `pipeline set (${o.pipeline.why}); ` : "";
  const failed = o.failed.length === 0 ? "" : `; ${o.failed.length} refused by the device (above)`;
  const writes = `${o.writes} write${o.writes === 1 ? "" : "s"}`;
  return `${pipeline}${w.insert} inserted, ${w.modify} modified, ${w.delete} deleted in ${writes}${failed}`;
}

const SIGN = { insert: "+", modify: "~", delete: "-" } as const;

/** A plan's changes, per table (or selector, or replication entries), each with where it comes from. */
export function planLines(o: Outcome): string[] {
  const byWhere = new Map<string, Change[]>();
  for (const c of o.changes) {
    const list = byWhere.get(c.where);
    if (list === undefined) byWhere.set(c.where, [c]);
    else list.push(c);
  }
  return [...byWhere].flatMap(([where, changes]) => [
    `  ${where}:`,
    ...changes.map((c) => `    ${SIGN[c.op]} ${c.op === "delete" ? `${c.key} (${c.origin})` : c.origin}`),
  ]);
}

/** An update the device refused, in strata's words, with the row it came from. */
export function failureLine(machine: string, f: Failure): string {
  const what = f.change.op === "delete" ? `${f.change.key} (${f.change.origin})` : f.change.origin;
  const why = `${codeName(f.code)}: ${f.message}`;
  return `${machine}: ${f.change.where}: the device refused to ${f.change.op} ${what}: ${why}`;
}

const changeJson = (c: Change): object => ({ op: c.op, kind: c.kind, where: c.where, key: c.key, origin: c.origin });

/** The outcome as JSON (a plan with its changes). */
export function outcomeJson(o: Outcome, plan: boolean): object {
  const n = plan ? counts(o.changes) : written(o);
  return {
    machine: o.machine,
    address: o.address,
    deviceId: String(o.deviceId),
    pipeline: o.pipeline,
    ...(plan
      ? { toInsert: n.insert, toModify: n.modify, toDelete: n.delete, changes: o.changes.map(changeJson) }
      : {
          inserted: n.insert,
          modified: n.modify,
          deleted: n.delete,
          writes: o.writes,
          failed: o.failed.map((f) => ({ ...changeJson(f.change), code: codeName(f.code), message: f.message })),
        }),
  };
}
