// The official P4Runtime definitions (test/fixtures/p4runtime), loaded with
// protobufjs, and checkExport(): everything P4Runtime asks of a P4Info and a
// WriteRequest that strata's tests hold an export to, as a list of problems
// (empty: the export passes). The deliberate-break tests feed it broken
// exports and expect a problem for each.

import { join } from "node:path";
import protobuf from "protobufjs";
import protojson from "protobufjs/ext/protojson.js";
import textformat from "protobufjs/ext/textformat.js";
import { fromBase64, isCanonical, ones, valueOf } from "../../../src/p4/bytes.js";
import { ID_PREFIX } from "../../../src/p4/ids.js";

const dir = new URL("../../fixtures/p4runtime/", import.meta.url).pathname;

function load(): protobuf.Root {
  const root = new protobuf.Root();
  // google/protobuf/*.proto are protobufjs's own copies of the well-known types.
  root.resolvePath = (_origin, target) => (target.startsWith("google/protobuf/") ? target : join(dir, target));
  root.loadSync(["p4/config/v1/p4info.proto", "p4/v1/p4runtime.proto"], { keepCase: true });
  root.resolveAll();
  return root;
}

export const OFFICIAL = load();
export const P4Info = OFFICIAL.lookupType("p4.config.v1.P4Info");
export const WriteRequest = OFFICIAL.lookupType("p4.v1.WriteRequest");

/** Parses with the protobuf JSON mapping, unknown fields and enum names rejected; returns the canonical JSON form. */
export function strictJson(type: protobuf.Type, json: unknown): unknown {
  return protojson.toJson(type, protojson.fromJson(type, json));
}

type Obj = Record<string, unknown>;
const obj = (x: unknown): Obj => (typeof x === "object" && x !== null ? (x as Obj) : {});
const arr = (x: unknown): unknown[] => (Array.isArray(x) ? x : []);
const num = (x: unknown): number => (typeof x === "number" ? x : typeof x === "string" ? Number(x) : 0);

export interface ExportFiles {
  readonly p4info: unknown;
  readonly entries: unknown;
  readonly entriesBin?: Uint8Array;
  readonly p4infoText?: string;
}

/** Every problem P4Runtime would have with these files (empty: none). */
export function checkExport(files: ExportFiles): string[] {
  const problems: string[] = [];
  const parsed = (name: string, type: protobuf.Type, json: unknown): boolean => {
    try {
      const canonical = strictJson(type, json);
      if (JSON.stringify(canonical) !== JSON.stringify(json))
        problems.push(
          `${name}: not in the canonical JSON mapping (defaults omitted, 64-bit integers as strings, ` +
            `enums by name, field order)`,
        );
      return true;
    } catch (err) {
      problems.push(`${name}: ${(err as Error).message}`);
      return false;
    }
  };
  const infoOk = parsed("p4info.json", P4Info, files.p4info);
  const entriesOk = parsed("entries.json", WriteRequest, files.entries);
  if (files.entriesBin !== undefined && entriesOk) {
    try {
      const decoded = protojson.toJson(WriteRequest, WriteRequest.decode(files.entriesBin));
      if (JSON.stringify(decoded) !== JSON.stringify(files.entries))
        problems.push("entries.bin: decodes to another message than entries.json");
    } catch (err) {
      problems.push(`entries.bin: ${(err as Error).message}`);
    }
  }
  if (files.p4infoText !== undefined && infoOk) {
    try {
      const fromText = protojson.toJson(P4Info, textformat.fromText(P4Info, files.p4infoText));
      if (JSON.stringify(fromText) !== JSON.stringify(files.p4info))
        problems.push("p4info.txtpb: another message than p4info.json");
    } catch (err) {
      problems.push(`p4info.txtpb: ${(err as Error).message}`);
    }
  }
  if (infoOk) problems.push(...checkP4Info(obj(files.p4info)));
  if (infoOk && entriesOk) problems.push(...checkEntries(obj(files.p4info), obj(files.entries)));
  return problems;
}

function checkP4Info(info: Obj): string[] {
  const problems: string[] = [];
  const seen = new Map<number, string>();
  const ids = (kind: keyof typeof ID_PREFIX, list: unknown[]): void => {
    for (const x of list) {
      const p = obj(obj(x).preamble);
      const id = num(p.id);
      if (id >>> 24 !== ID_PREFIX[kind])
        problems.push(
          `${String(p.name)}: id 0x${id.toString(16)} does not start with the ${kind} prefix ` +
            `0x${ID_PREFIX[kind].toString(16)}`,
        );
      if ((id & 0xffffff) === 0) problems.push(`${String(p.name)}: id 0x${id.toString(16)} has no low bits`);
      if (seen.has(id)) problems.push(`${String(p.name)}: id 0x${id.toString(16)} is also ${seen.get(id) ?? ""}'s`);
      seen.set(id, String(p.name));
    }
  };
  ids("table", arr(info.tables));
  ids("action", arr(info.actions));
  ids("actionProfile", arr(info.actionProfiles));
  ids("controllerHeader", arr(info.controllerPacketMetadata));
  ids("directCounter", arr(info.directCounters));
  const tableIds = new Set(arr(info.tables).map((t) => num(obj(obj(t).preamble).id)));
  const counterIds = new Set(arr(info.directCounters).map((c) => num(obj(obj(c).preamble).id)));
  for (const c of arr(info.directCounters)) {
    if (!tableIds.has(num(obj(c).directTableId)))
      problems.push(
        `direct counter ${String(obj(obj(c).preamble).name)}: table ${num(obj(c).directTableId)} does not exist`,
      );
  }
  for (const t of arr(info.tables)) {
    for (const r of arr(obj(t).directResourceIds))
      if (!counterIds.has(num(r)))
        problems.push(`table ${String(obj(obj(t).preamble).name)}: direct resource ${num(r)} does not exist`);
  }
  const actions = new Set(arr(info.actions).map((a) => num(obj(obj(a).preamble).id)));
  const profiles = new Map(arr(info.actionProfiles).map((p) => [num(obj(obj(p).preamble).id), obj(p)]));
  for (const t of arr(info.tables).map(obj)) {
    const name = String(obj(t.preamble).name);
    const fieldIds = arr(t.matchFields).map((f) => num(obj(f).id));
    if (new Set(fieldIds).size !== fieldIds.length) problems.push(`${name}: match field ids repeat`);
    if (arr(t.matchFields).filter((f) => obj(f).matchType === "LPM").length > 1)
      problems.push(`${name}: more than one LPM field`);
    const refs = arr(t.actionRefs).map((r) => num(obj(r).id));
    for (const r of refs) if (!actions.has(r)) problems.push(`${name}: action ref ${r} names no action`);
    if (t.constDefaultActionId !== undefined && !refs.includes(num(t.constDefaultActionId)))
      problems.push(`${name}: const default action is not one of its actions`);
    if (t.implementationId !== undefined) {
      const p = profiles.get(num(t.implementationId));
      if (
        p === undefined ||
        !arr(p.tableIds)
          .map(num)
          .includes(num(obj(t.preamble).id))
      )
        problems.push(`${name}: implementation is not an action profile of this table`);
    }
  }
  return problems;
}

function checkEntries(info: Obj, req: Obj): string[] {
  const problems: string[] = [];
  const tables = new Map(arr(info.tables).map((t) => [num(obj(obj(t).preamble).id), obj(t)]));
  const actions = new Map(arr(info.actions).map((a) => [num(obj(obj(a).preamble).id), obj(a)]));
  const bytes = (where: string, b64: unknown, bits: number): bigint | undefined => {
    if (typeof b64 !== "string" || b64 === "") {
      problems.push(`${where}: empty bytestring`);
      return undefined;
    }
    const b = fromBase64(b64);
    if (!isCanonical(b))
      problems.push(
        `${where}: bytestring ${Buffer.from(b).toString("hex")} is not canonical (no leading zero bytes; ` +
          `0 is one zero byte)`,
      );
    const v = valueOf(b);
    if (v > ones(bits)) problems.push(`${where}: value ${v} does not fit in ${bits} bits`);
    return v;
  };
  const checkAction = (where: string, a: Obj, refs: readonly Obj[], asDefault: boolean): void => {
    const id = num(a.actionId);
    const ref = refs.find((r) => num(r.id) === id);
    if (ref === undefined) return void problems.push(`${where}: action ${id} is not one of the table's`);
    if (!asDefault && ref.scope === "DEFAULT_ONLY") problems.push(`${where}: action ${id} is default-only`);
    const params = arr(obj(actions.get(id)).params).map(obj);
    const given = arr(a.params).map(obj);
    if (given.length !== params.length)
      problems.push(`${where}: ${given.length} parameters for an action of ${params.length}`);
    for (const p of given) {
      const def = params.find((x) => num(x.id) === num(p.paramId));
      if (def === undefined) problems.push(`${where}: no parameter ${num(p.paramId)}`);
      else bytes(`${where} param ${String(def.name)}`, p.value, num(def.bitwidth));
    }
  };
  if (req.deviceId === undefined) problems.push("entries.json: no device_id");
  if (req.electionId === undefined) problems.push("entries.json: no election_id");
  const lastPriority = new Map<number, number>();
  const profileMembers = new Set<string>();
  const profileGroups = new Set<string>();
  arr(req.updates).forEach((u, i) => {
    const update = obj(u);
    const entity = obj(update.entity);
    const where = `update ${i}`;
    const te = entity.tableEntry === undefined ? undefined : obj(entity.tableEntry);
    const isDefault = te?.isDefaultAction === true;
    if (update.type !== "INSERT" && !(update.type === "MODIFY" && isDefault))
      problems.push(
        `${where}: ${String(update.type)} (strata writes INSERTs, and a MODIFY of a keyless table's default entry)`,
      );
    const pre =
      entity.packetReplicationEngineEntry === undefined ? undefined : obj(entity.packetReplicationEngineEntry);
    if (pre !== undefined) {
      const g = obj(pre.multicastGroupEntry ?? pre.cloneSessionEntry);
      const pairs = new Set<string>();
      for (const r of arr(g.replicas).map(obj)) {
        const port = bytes(`${where} replica port`, r.port, 32);
        const key = `${port}:${num(r.instance)}`;
        if (pairs.has(key)) problems.push(`${where}: replica (port, instance) ${key} twice`);
        pairs.add(key);
      }
    }
    if (entity.actionProfileMember !== undefined) {
      const m = obj(entity.actionProfileMember);
      const refs = [...tables.values()]
        .filter((t) => num(t.implementationId) === num(m.actionProfileId))
        .flatMap((t) => arr(t.actionRefs).map(obj));
      checkAction(`${where} member`, obj(m.action), refs, false);
      profileMembers.add(`${num(m.actionProfileId)}:${num(m.memberId)}`);
    }
    if (entity.actionProfileGroup !== undefined) {
      const g = obj(entity.actionProfileGroup);
      for (const m of arr(g.members).map(obj)) {
        if (!profileMembers.has(`${num(g.actionProfileId)}:${num(m.memberId)}`))
          problems.push(`${where}: group member ${num(m.memberId)} was not written before`);
        if (num(m.weight) < 1)
          problems.push(
            `${where}: group member ${num(m.memberId)} has weight 0 (P4Runtime: invalid where weights are allowed)`,
          );
      }
      profileGroups.add(`${num(g.actionProfileId)}:${num(g.groupId)}`);
    }
    if (te === undefined) return;
    const t = tables.get(num(te.tableId));
    if (t === undefined) return void problems.push(`${where}: no table ${num(te.tableId)}`);
    const name = String(obj(t.preamble).name);
    const fields = arr(t.matchFields).map(obj);
    const refs = arr(t.actionRefs).map(obj);
    const matches = arr(te.match).map(obj);
    if (isDefault) {
      if (matches.length > 0) problems.push(`${where} ${name}: a default entry with a match`);
      if (t.constDefaultActionId !== undefined) problems.push(`${where} ${name}: the default action is const`);
    } else if (fields.length === 0) {
      problems.push(`${where} ${name}: an INSERT into a keyless table`);
    }
    const ternaryLike = fields.some(
      (f) => f.matchType === "TERNARY" || f.matchType === "RANGE" || f.matchType === "OPTIONAL",
    );
    const priority = num(te.priority);
    if (!isDefault && ternaryLike && priority <= 0)
      problems.push(`${where} ${name}: no priority in a table with a ternary, range or optional field`);
    if (!ternaryLike && priority !== 0)
      problems.push(`${where} ${name}: a priority in a table of exact and LPM fields`);
    if (ternaryLike && !isDefault) {
      // strata writes rows in their order, first match wins: the first row gets the largest priority.
      const last = lastPriority.get(num(te.tableId));
      if (last !== undefined && priority >= last)
        problems.push(
          `${where} ${name}: priority ${priority} after ${last} (rows must be written in decreasing priority)`,
        );
      lastPriority.set(num(te.tableId), priority);
    }
    const seenFields = new Set<number>();
    for (const m of matches) {
      const f = fields.find((x) => num(x.id) === num(m.fieldId));
      const at = `${where} ${name} field ${num(m.fieldId)}`;
      if (f === undefined) {
        problems.push(`${at}: no such match field`);
        continue;
      }
      if (seenFields.has(num(m.fieldId))) problems.push(`${at}: matched twice`);
      seenFields.add(num(m.fieldId));
      const bits = num(f.bitwidth);
      const kind = String(f.matchType).toLowerCase();
      if (m[kind] === undefined) {
        problems.push(`${at}: a ${Object.keys(m).find((k) => k !== "fieldId") ?? "?"} match for a ${kind} field`);
        continue;
      }
      const x = obj(m[kind]);
      if (kind === "exact" || kind === "optional") bytes(at, x.value, bits);
      if (kind === "ternary") {
        const v = bytes(`${at} value`, x.value, bits) ?? 0n;
        const mask = bytes(`${at} mask`, x.mask, bits) ?? 0n;
        if (mask === 0n) problems.push(`${at}: ternary mask 0 ("don't care" must be left out)`);
        if ((v & ~mask) !== 0n) problems.push(`${at}: value bits outside the mask`);
      }
      if (kind === "lpm") {
        const v = bytes(`${at} value`, x.value, bits) ?? 0n;
        const len = num(x.prefixLen);
        if (len <= 0 || len > bits)
          problems.push(`${at}: prefix length ${len} (1..${bits}; "don't care" must be left out)`);
        else if ((v & ones(bits - len)) !== 0n) problems.push(`${at}: value bits after the prefix`);
      }
      if (kind === "range") {
        const lo = bytes(`${at} low`, x.low, bits) ?? 0n;
        const hi = bytes(`${at} high`, x.high, bits) ?? 0n;
        if (lo > hi) problems.push(`${at}: low ${lo} above high ${hi}`);
        if (lo === 0n && hi === ones(bits))
          problems.push(`${at}: a range of every value ("don't care" must be left out)`);
      }
    }
    if (!isDefault)
      for (const f of fields)
        if (f.matchType === "EXACT" && !seenFields.has(num(f.id)))
          problems.push(`${where} ${name}: exact field ${String(f.name)} left out`);
    const action = obj(te.action);
    if (action.action !== undefined) {
      if (t.implementationId !== undefined)
        problems.push(`${where} ${name}: a direct action in a table with an action profile`);
      checkAction(`${where} ${name}`, obj(action.action), refs, isDefault);
    } else if (action.actionProfileMemberId !== undefined || action.actionProfileGroupId !== undefined) {
      const profile = num(t.implementationId);
      if (profile === 0) problems.push(`${where} ${name}: a profile reference in a direct table`);
      if (
        action.actionProfileMemberId !== undefined &&
        !profileMembers.has(`${profile}:${num(action.actionProfileMemberId)}`)
      )
        problems.push(`${where} ${name}: member ${num(action.actionProfileMemberId)} not written before`);
      if (
        action.actionProfileGroupId !== undefined &&
        !profileGroups.has(`${profile}:${num(action.actionProfileGroupId)}`)
      )
        problems.push(`${where} ${name}: group ${num(action.actionProfileGroupId)} not written before`);
    } else {
      problems.push(`${where} ${name}: no action`);
    }
  });
  return problems;
}
