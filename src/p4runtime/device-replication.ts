// A Write's entities beside table entries: multicast groups and clone sessions (the packet
// replication engine, §9.5) and action profile members and groups (§9.2). They are P4Runtime's
// alone; a change to one marks the tables whose rows read it to be translated again.

import { canonical } from "../p4/bytes.js";
import { bytestringValue } from "../p4/import.js";
import type { Batch } from "./device-batch.js";
import { checkCall } from "./device-checks.js";
import {
  field,
  held,
  type InfoProfile,
  invalid,
  num,
  refuse,
  type Replica,
  type StoredReplica,
  type WriteType,
} from "./device-entities.js";
import { actOf, translate } from "./device-view.js";
import type { p4 } from "./messages.js";
import { Code } from "./proto.js";

export function writeReplication(
  b: Batch,
  ports: ReadonlySet<number>,
  type: WriteType,
  pre: p4.v1.PacketReplicationEngineEntry,
): void {
  const s = b.c.entities;
  const j = b.journal;
  if (pre.type === "multicastGroupEntry") {
    const g = pre.multicastGroupEntry;
    const id = num(g.multicastGroupId);
    if (id === 0) return invalid("multicast group id 0");
    const exists = s.multicast.has(id);
    if (type === "INSERT" && exists) return refuse(Code.ALREADY_EXISTS, `multicast group ${id} exists`);
    if (type !== "INSERT" && !exists) return refuse(Code.NOT_FOUND, `no multicast group ${id}`);
    if (type === "DELETE") j.delete(s.multicast, id);
    else j.set(s.multicast, id, replicas(b.c.deviceId, ports, g.replicas ?? [], `multicast group ${id}`));
    // Every forward row that replicates reads its group's out-links.
    for (const t of b.c.index.tables.values()) if (t.dev.role === "forward") b.all.add(t.id);
    return;
  }
  if (pre.type === "cloneSessionEntry") {
    const c = pre.cloneSessionEntry;
    const id = num(c.sessionId);
    if (id === 0) return invalid("clone session id 0");
    const exists = s.clone.has(id);
    if (type === "INSERT" && exists) return refuse(Code.ALREADY_EXISTS, `clone session ${id} exists`);
    if (type !== "INSERT" && !exists) return refuse(Code.NOT_FOUND, `no clone session ${id}`);
    if (type === "DELETE") j.delete(s.clone, id);
    else {
      replicas(b.c.deviceId, ports, c.replicas ?? [], `clone session ${id}`);
      j.set(s.clone, id, c);
    }
    return;
  }
  return invalid("a packet replication engine entry with neither a multicast group nor a clone session");
}

function replicas(
  deviceId: number,
  ports: ReadonlySet<number>,
  given: readonly Replica[],
  where: string,
): StoredReplica[] {
  const seen = new Set<string>();
  return given.map((r) => {
    const port =
      r.port !== undefined ? field(r.port, 32, `${where} replica port`) : canonical(BigInt(num(r.egressPort)));
    const p = Number(bytestringValue(port));
    if (!ports.has(p))
      return invalid(`${where}: port ${p} is not a port of device ${deviceId} (ports: ${[...ports].join(", ")})`);
    const instance = num(r.instance);
    const key = `${p}:${instance}`;
    if (seen.has(key)) return invalid(`${where}: replica (port ${p}, instance ${instance}) twice`);
    seen.add(key);
    return { port, instance };
  });
}

const NO_MATCH = { value: new Uint8Array(0), mask: new Uint8Array(0), priority: 0 };

function profileOf(b: Batch, id: number): InfoProfile {
  const p = b.c.index.profiles.get(id);
  if (p === undefined) return invalid(`no action profile with id ${id} on device ${b.c.deviceId}`);
  return p;
}

/** Whether a table entry of the profile's tables names the member or group. */
function inUse(b: Batch, p: InfoProfile, named: { readonly member: number } | { readonly group: number }): boolean {
  return p.tables.some((id) => {
    const t = b.c.index.tables.get(id);
    if (t === undefined) return false;
    for (const e of b.entries(t)) {
      const act = actOf(b.c, t, e);
      if (act === undefined) continue;
      if (
        "member" in named ? "member" in act && act.member === named.member : "group" in act && act.group === named.group
      )
        return true;
    }
    return false;
  });
}

export function writeProfileMember(b: Batch, type: WriteType, m: p4.v1.ActionProfileMember): void {
  const s = b.c.entities;
  const p = profileOf(b, num(m.actionProfileId));
  const id = num(m.memberId);
  const members = held(s.members, p.id);
  const exists = members.has(id);
  if (type === "INSERT" && exists) return refuse(Code.ALREADY_EXISTS, `action profile member ${id} exists`);
  if (type !== "INSERT" && !exists) return refuse(Code.NOT_FOUND, `no action profile member ${id}`);
  if (type === "DELETE") {
    const inGroup = [...(s.groups.get(p.id)?.values() ?? [])].some((g) => g.some((x) => x.memberId === id));
    if (inGroup || inUse(b, p, { member: id }))
      return refuse(
        Code.FAILED_PRECONDITION,
        `action profile member ${id} is in use by ${inGroup ? "a group" : "a table entry"}`,
      );
    b.journal.delete(members, id);
  } else {
    if (type === "INSERT" && p.size > 0 && members.size >= p.size)
      return refuse(Code.RESOURCE_EXHAUSTED, `the action profile holds ${p.size} members`);
    const tables = p.tables.flatMap((tid) => {
      const t = b.c.index.tables.get(tid);
      return t === undefined ? [] : [t];
    });
    const call = checkCall(
      b.c.index.actions,
      m.action,
      {
        actions: new Set(tables.flatMap((t) => [...t.actions])),
        allowed: new Set(tables.flatMap((t) => [...t.entryActions])),
      },
      "entry",
      `action profile member ${id}`,
    );
    // The data plane must be able to run it in each table (a Refusal if not).
    for (const t of tables) translate(b.c, t, NO_MATCH, { call });
    b.journal.set(members, id, call);
  }
  for (const t of p.tables) b.all.add(t);
}

export function writeProfileGroup(b: Batch, type: WriteType, g: p4.v1.ActionProfileGroup): void {
  const s = b.c.entities;
  const p = profileOf(b, num(g.actionProfileId));
  const id = num(g.groupId);
  const groups = held(s.groups, p.id);
  const exists = groups.has(id);
  if (type === "INSERT" && exists) return refuse(Code.ALREADY_EXISTS, `action profile group ${id} exists`);
  if (type !== "INSERT" && !exists) return refuse(Code.NOT_FOUND, `no action profile group ${id}`);
  if (type === "DELETE") {
    if (inUse(b, p, { group: id }))
      return refuse(Code.FAILED_PRECONDITION, `action profile group ${id} is in use by a table entry`);
    b.journal.delete(groups, id);
  } else {
    const members = (g.members ?? []).map((x) => ({
      memberId: num(x.memberId),
      weight: x.weight === undefined ? 1 : num(x.weight),
    }));
    for (const x of members) {
      if (s.members.get(p.id)?.has(x.memberId) !== true)
        return refuse(Code.NOT_FOUND, `action profile group ${id}: member ${x.memberId} is not written`);
      if (x.weight < 1)
        return invalid(`action profile group ${id}: member ${x.memberId} has weight ${x.weight} (at least 1)`);
    }
    if (new Set(members.map((x) => x.memberId)).size !== members.length)
      return invalid(`action profile group ${id}: a member twice`);
    if (p.maxGroupSize > 0 && members.length > p.maxGroupSize)
      return refuse(
        Code.RESOURCE_EXHAUSTED,
        `action profile group ${id}: ${members.length} members, at most ${p.maxGroupSize}`,
      );
    b.journal.set(groups, id, members);
  }
  for (const t of p.tables) b.all.add(t);
}
