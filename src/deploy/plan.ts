// The difference between what a device holds and what it should (desired.ts), as the writes
// that make one the other, in the order they can be made: table entries that go first (they
// may name members and groups that go, and they free room in their tables), then what is new
// or changed, in dependency order (profile members, groups, table entries, multicast groups,
// the clone session), then the rest of what goes, in reverse.

import type { Encodable, p4 } from "../p4runtime/messages.js";
import type { DesiredEntity, MachineDesired } from "./desired.js";
import { type Kind, KINDS, keyOf, kindOf, valueOf } from "./entities.js";

export type Op = "insert" | "modify" | "delete";

export interface Change {
  readonly op: Op;
  readonly kind: Kind;
  /** The table, selector or replication entries it is in. */
  readonly where: string;
  /** What names it on the device (entities.ts keyOf). */
  readonly key: string;
  /** The description's row (or group, or member) it comes from; for a delete, what the device held. */
  readonly origin: string;
  readonly update: p4.v1.Update;
}

/** The Read requests that return every entity strata writes to a device of this P4Info. */
export function readRequests(info: p4.config.v1.P4Info): p4.v1.Entity<Encodable>[] {
  const keyless = (info.tables ?? []).filter((t) => (t.matchFields ?? []).length === 0);
  const profiles = info.actionProfiles ?? [];
  return [
    { tableEntry: {} },
    ...keyless.map((t) => ({ tableEntry: { tableId: t.preamble?.id ?? 0, isDefaultAction: true } })),
    ...profiles.flatMap((p) => [
      { actionProfileMember: { actionProfileId: p.preamble?.id ?? 0 } },
      { actionProfileGroup: { actionProfileId: p.preamble?.id ?? 0 } },
    ]),
    { packetReplicationEngineEntry: { multicastGroupEntry: {} } },
    { packetReplicationEngineEntry: { cloneSessionEntry: {} } },
  ];
}

/** Names of a P4Info's tables and action profiles by id, for the entities a description does not hold. */
function namesOf(info: p4.config.v1.P4Info): Map<number, string> {
  const names = new Map<number, string>();
  for (const t of [...(info.tables ?? []), ...(info.actionProfiles ?? [])])
    if (t.preamble?.id !== undefined) names.set(t.preamble.id, t.preamble.alias ?? t.preamble.name ?? "");
  return names;
}

function whereOf(e: p4.v1.Entity, names: ReadonlyMap<number, string>): string {
  const id =
    e.entity === "tableEntry"
      ? e.tableEntry.tableId
      : e.entity === "actionProfileMember"
        ? e.actionProfileMember.actionProfileId
        : e.entity === "actionProfileGroup"
          ? e.actionProfileGroup.actionProfileId
          : undefined;
  if (id !== undefined) return names.get(id) ?? `id ${id}`;
  return kindOf(e) === "clone" ? "clone sessions" : "multicast groups";
}

/** What to delete of an observed entity: its key fields only (§9.1: a DELETE names the entity). */
function deletion(e: p4.v1.Entity): p4.v1.Update {
  if (e.entity !== "tableEntry") return { type: "DELETE", entity: e };
  const t = e.tableEntry;
  const tableEntry: p4.v1.TableEntry = {
    ...(t.tableId !== undefined ? { tableId: t.tableId } : {}),
    ...(t.match !== undefined ? { match: t.match } : {}),
    ...(t.priority !== undefined ? { priority: t.priority } : {}),
  };
  return { type: "DELETE", entity: { entity: "tableEntry", tableEntry } };
}

/**
 * The changes that take `observed` (what a Read returned) to `desired`, in the order they are to be
 * written. A default entry is never deleted: a device always has one.
 */
export function diff(desired: MachineDesired, observed: readonly p4.v1.Entity[]): Change[] {
  const held = new Map<string, p4.v1.Entity>();
  for (const e of observed) if (kindOf(e) !== undefined) held.set(keyOf(e), e);
  const upserts: Change[] = [];
  const wanted = new Set<string>();
  for (const d of desired.entities) {
    wanted.add(d.key);
    const there = held.get(d.key);
    if (there !== undefined && valueOf(there) === d.value) continue;
    upserts.push(upsert(d, there));
  }
  const names = namesOf(desired.p4info);
  const deletes: Change[] = [];
  for (const [key, e] of held) {
    const kind = kindOf(e);
    if (wanted.has(key) || kind === undefined) continue;
    if (e.entity === "tableEntry" && e.tableEntry.isDefaultAction === true) continue;
    deletes.push({
      op: "delete",
      kind,
      where: whereOf(e, names),
      key,
      origin: "not in the description",
      update: deletion(e),
    });
  }
  const rank = (k: Kind): number => KINDS.indexOf(k);
  const byKind = (a: Change, b: Change): number => rank(a.kind) - rank(b.kind);
  upserts.sort(byKind);
  deletes.sort((a, b) => byKind(b, a));
  return [...deletes.filter((c) => c.kind === "table"), ...upserts, ...deletes.filter((c) => c.kind !== "table")];
}

function upsert(d: DesiredEntity, there: p4.v1.Entity | undefined): Change {
  // A default entry is always there: it is modified, never inserted.
  const op: Op = there !== undefined || d.update.type === "MODIFY" ? "modify" : "insert";
  return {
    op,
    kind: d.kind,
    where: d.where,
    key: d.key,
    origin: d.origin,
    update: op === "modify" ? { ...d.update, type: "MODIFY" } : d.update,
  };
}

/**
 * The changes cut into Writes: each holds changes of one step of the order (one kind, one of
 * delete or not), at most `max` of them, so that a Write never needs one after it.
 */
export function batches(changes: readonly Change[], max: number): Change[][] {
  const out: Change[][] = [];
  let step = "";
  for (const c of changes) {
    const s = `${c.kind} ${c.op === "delete" ? "delete" : "write"}`;
    const last = out[out.length - 1];
    if (last === undefined || s !== step || last.length >= max) out.push([c]);
    else last.push(c);
    step = s;
  }
  return out;
}

/** How many of each op. */
export function counts(changes: readonly Change[]): Record<Op, number> {
  const n: Record<Op, number> = { insert: 0, modify: 0, delete: 0 };
  for (const c of changes) n[c.op]++;
  return n;
}
