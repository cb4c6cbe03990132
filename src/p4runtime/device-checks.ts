// What a Write's table entries must be, checked against the P4Info (P4Runtime §9.1): each
// field match canonical and of its field's kind and width, each action call one the table names
// for its scope with every parameter once. A failed check throws a Refusal (./device-entities.ts).

import { bytestringValue } from "../p4/import.js";
import { ones } from "../p4/bytes.js";
import type { Encodable, p4 } from "./messages.js";
import {
  type Call,
  type FieldMatch,
  field,
  type InfoAction,
  type InfoTable,
  invalid,
  lowBitsClear,
  num,
  refuse,
  type TableEntry,
  type WriteType,
} from "./device-entities.js";
import { Code } from "./proto.js";

/**
 * An action call checked against the P4Info (§9.1.2): an action the table does not name is
 * INVALID_ARGUMENT; one it names for the other scope (an @defaultonly action in an entry, a
 * @tableonly one as the default) is PERMISSION_DENIED.
 */
export function checkCall(
  actions: ReadonlyMap<number, InfoAction>,
  a: p4.v1.Action | undefined,
  t: { readonly actions: ReadonlySet<number>; readonly allowed: ReadonlySet<number> },
  scope: "entry" | "default",
  where: string,
): Call {
  if (a === undefined) return invalid(`${where}: no action`);
  const id = num(a.actionId);
  const info = actions.get(id);
  if (info === undefined) return invalid(`${where}: unknown action id ${id}`);
  if (!t.actions.has(id)) return invalid(`${where}: action ${info.name} is not one this table names`);
  if (!t.allowed.has(id)) {
    return refuse(
      Code.PERMISSION_DENIED,
      scope === "entry"
        ? `${where}: action ${info.name} is the table's default action only (@defaultonly)`
        : `${where}: action ${info.name} is for entries only (@tableonly), not the default entry`,
    );
  }
  const params: { paramId: number; value: Uint8Array }[] = [];
  for (const p of a.params ?? []) {
    const pid = num(p.paramId);
    const spec = info.params.get(pid);
    if (spec === undefined) return invalid(`${where}: action ${info.name} has no parameter id ${pid}`);
    if (params.some((x) => x.paramId === pid))
      return invalid(`${where}: action ${info.name} parameter ${spec.name} given twice`);
    params.push({ paramId: pid, value: field(p.value, spec.bits, `${where}: ${info.name}(${spec.name})`) });
  }
  // Each id is the action's and none twice: as many as it has means all of them.
  if (params.length < info.params.size) {
    const missing = [...info.params]
      .filter(([pid]) => !params.some((x) => x.paramId === pid))
      .map(([, spec]) => spec.name);
    return invalid(`${where}: action ${info.name} needs parameter ${missing.join(", ")}`);
  }
  return { actionId: id, params: params.length < 2 ? params : params.sort((x, y) => x.paramId - y.paramId) };
}

/** Whether two calls are the same action with the same (canonical) parameters. */
export function sameCall(a: Call, b: Call): boolean {
  if (a.actionId !== b.actionId || a.params.length !== b.params.length) return false;
  return a.params.every((p, i) => {
    const q = b.params[i];
    return q !== undefined && p.paramId === q.paramId && Buffer.compare(p.value, q.value) === 0;
  });
}

/**
 * What no table entry may carry on a write (§9.1, §9.1.7, §9.1.8): the server's own flag, and
 * (but for a DELETE, which reads only the key) idle timeouts and meters the tables lack.
 */
export function checkWritable(t: InfoTable, type: WriteType, te: TableEntry): void {
  if (te.isConst === true) invalid(`${t.name}: is_const is the server's to set on a read, never a write's (§9.1)`);
  if (type === "DELETE") return;
  if (num(te.idleTimeoutNs) !== 0 || te.timeSinceLastHit !== undefined)
    invalid(`${t.name}: the table has no idle timeout (P4Info idle_timeout_behavior NO_TIMEOUT)`);
  if (te.meterConfig !== undefined || te.meterCounterData !== undefined)
    invalid(`${t.name}: the table has no direct meter`);
  if (te.counterData !== undefined && !t.hasCounter) invalid(`${t.name}: the table has no direct counter`);
}

/** A field match checked: its bytestrings canonical. */
type Checked = p4.v1.FieldMatch<Encodable>;

/** An entry's field matches checked (§9.1.1) and made canonical, sorted by field id: what the importer takes. */
export function checkMatch(t: InfoTable, given: readonly FieldMatch[]): Checked[] {
  const out: Checked[] = [];
  for (const m of given) {
    const id = num(m.fieldId);
    const f = t.fields.get(id);
    if (f === undefined) return invalid(`${t.name}: no match field with id ${id}`);
    if (out.some((x) => x.fieldId === id)) return invalid(`${t.name}: match field ${f.name} given twice`);
    if (m.fieldMatchType !== f.kind)
      return invalid(`${t.name}: field ${f.name} is matched ${f.matchType}, not ${m.fieldMatchType ?? "with nothing"}`);
    out.push(checkField(m, f, `${t.name}: field ${f.name}`));
  }
  for (const f of t.fields.values())
    if (f.matchType === "EXACT" && !out.some((x) => x.fieldId === f.id))
      return invalid(`${t.name}: exact field ${f.name} is missing`);
  return out.length < 2 ? out : out.sort((a, b) => num(a.fieldId) - num(b.fieldId));
}

function checkField(m: FieldMatch, f: { readonly id: number; readonly bits: number }, w: string): Checked {
  const fieldId = f.id;
  switch (m.fieldMatchType) {
    case "exact":
      return { fieldId, fieldMatchType: "exact", exact: { value: field(m.exact.value, f.bits, w) } };
    case "optional":
      return { fieldId, fieldMatchType: "optional", optional: { value: field(m.optional.value, f.bits, w) } };
    case "ternary": {
      const value = field(m.ternary.value, f.bits, w);
      const mask = field(m.ternary.mask, f.bits, `${w} mask`);
      const v = bytestringValue(value);
      const k = bytestringValue(mask);
      if (k === 0n) return invalid(`${w}: a ternary mask of 0 matches anything; leave the field out`);
      if ((v & ~k) !== 0n) return invalid(`${w}: value 0x${v.toString(16)} has bits outside mask 0x${k.toString(16)}`);
      return { fieldId, fieldMatchType: "ternary", ternary: { value, mask } };
    }
    case "lpm": {
      const value = field(m.lpm.value, f.bits, w);
      const len = num(m.lpm.prefixLen);
      if (len <= 0 || len > f.bits)
        return invalid(`${w}: prefix length ${len} (1 to ${f.bits}; a prefix of 0 is left out)`);
      if (!lowBitsClear(value, f.bits - len)) return invalid(`${w}: value has bits set beyond its /${len} prefix`);
      return { fieldId, fieldMatchType: "lpm", lpm: { value, prefixLen: len } };
    }
    case "range": {
      const low = field(m.range.low, f.bits, `${w} low`);
      const high = field(m.range.high, f.bits, `${w} high`);
      const lo = bytestringValue(low);
      const hi = bytestringValue(high);
      if (lo > hi) return invalid(`${w}: range low 0x${lo.toString(16)} is above high 0x${hi.toString(16)}`);
      if (lo === 0n && hi === ones(f.bits))
        return invalid(`${w}: a range over every value matches anything; leave the field out`);
      return { fieldId, fieldMatchType: "range", range: { low, high } };
    }
    default:
      return invalid(`${w}: a field match with no kind`);
  }
}
