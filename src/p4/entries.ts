// A device's installed rows as one P4Runtime WriteRequest (p4/v1/p4runtime.proto),
// as the generated message type holds it and gRPC decodes it
// (src/p4runtime/messages.ts: bytes as Buffers, unset fields absent, oneofs named):
// the server stages its updates as they are. INSERT updates for the multicast groups
// (replication) and the clone session (`both`), the action selectors' members
// and groups (anycast), then every table entry — except in a keyless table
// (a row that matches no field), whose row is its default action: a MODIFY of
// the default entry, since P4Runtime refuses INSERTs there.
//
// Matches follow P4Runtime spec §9.1.1: canonical bytestrings; a "don't care"
// field is left out (ternary mask 0, optional absent, LPM prefix 0, a range
// covering every value); exact fields never are. Tables with a ternary, range
// or optional field carry the row's priority — strata's own, where a larger
// number wins and the first row written has the largest — and the others none.

import type { p4 } from "../p4runtime/messages.js";
import { canonical } from "./bytes.js";
import { exportMatch } from "./import.js";
import {
  type ActionCall,
  CLONE_SESSION_BOTH,
  type Device,
  type DeviceEntry,
  type DeviceTable,
  RECIRC_PORT,
} from "./device.js";
import { idOf, type P4InfoIds } from "./p4info.js";

/** The election id strata's entries are written with: a controller that is primary by default. */
export const ELECTION_ID = { high: 0n, low: 1n };

const bytes = (v: bigint): Buffer => Buffer.from(canonical(v));

/** Whether entries of the table carry a priority (P4Runtime: a ternary, range or optional field). */
export function needsPriority(t: DeviceTable): boolean {
  return t.keys.some((k) => k.kind === "ternary" || k.kind === "range" || k.kind === "optional");
}

export function action(call: ActionCall, ids: P4InfoIds): p4.v1.Action {
  const actionId = idOf(ids.actions, call.action);
  const params = call.args.map((v, i) => ({ paramId: i + 1, value: bytes(v) }));
  return { actionId, ...(params.length > 0 ? { params } : {}) };
}

/** A multicast group's or clone session's replica: its port as a bytestring (P4Runtime 1.4), its instance if not 0. */
const replica = (port: number, instance: number): p4.v1.Replica => ({
  portKind: "port",
  port: bytes(BigInt(port)),
  ...(instance !== 0 ? { instance } : {}),
});

export function writeRequest(dev: Device, ids: P4InfoIds): p4.v1.WriteRequest {
  // The PRE and the profiles first: table entries name their groups and members.
  const updates = [...deviceUpdates(dev, ids), ...dev.tables.flatMap((t) => tableUpdates(t, ids))];
  return {
    deviceId: String(dev.deviceId),
    electionId: uint128(ELECTION_ID),
    ...(updates.length > 0 ? { updates } : {}),
  };
}

/** What a device has beside its tables' entries: the multicast groups and clone session, and the action profiles'
 * members and groups, as INSERTs. */
export function deviceUpdates(dev: Device, ids: P4InfoIds): p4.v1.Update[] {
  return [...replicationUpdates(dev), ...dev.tables.flatMap((t) => profileUpdates(t, ids))];
}

const insert = (entity: p4.v1.Entity): p4.v1.Update => ({ type: "INSERT", entity });

/** The multicast groups (replication), and the clone session of `both`. */
function replicationUpdates(dev: Device): p4.v1.Update[] {
  const groups = dev.multicast.map((g) =>
    insert({
      entity: "packetReplicationEngineEntry",
      packetReplicationEngineEntry: {
        type: "multicastGroupEntry",
        multicastGroupEntry: {
          multicastGroupId: g.id,
          replicas: g.replicas.map((r) => replica(r.port, r.instance)),
        },
      },
    }),
  );
  if (!dev.cloneBoth) return groups;
  const both = insert({
    entity: "packetReplicationEngineEntry",
    packetReplicationEngineEntry: {
      type: "cloneSessionEntry",
      cloneSessionEntry: { sessionId: CLONE_SESSION_BOTH, replicas: [replica(RECIRC_PORT, 0)] },
    },
  });
  return [...groups, both];
}

/** An anycast table's action selector: its members (one per receiver), then its groups. */
function profileUpdates(t: DeviceTable, ids: P4InfoIds): p4.v1.Update[] {
  if (t.selector === undefined) return [];
  const actionProfileId = idOf(ids.profiles, t.selector.name);
  const members = t.selector.members.map((call, i) =>
    insert({
      entity: "actionProfileMember",
      actionProfileMember: { actionProfileId, memberId: i + 1, action: action(call, ids) },
    }),
  );
  const groups = t.selector.groups.map((g) =>
    insert({
      entity: "actionProfileGroup",
      actionProfileGroup: {
        actionProfileId,
        groupId: g.id,
        members: g.members.map((memberId) => ({ memberId, weight: 1 })),
      },
    }),
  );
  return [...members, ...groups];
}

/** A table's entries: inserted, or for a keyless table its default entry modified. */
function tableUpdates(t: DeviceTable, ids: P4InfoIds): p4.v1.Update[] {
  return t.entries.map((e): p4.v1.Update => ({
    // P4Runtime §9.1: a keyless table takes no INSERT; its default entry is MODIFYed.
    type: t.keyless ? "MODIFY" : "INSERT",
    entity: { entity: "tableEntry", tableEntry: tableEntry(t, e, ids) },
  }));
}

/** A row of the description as a P4Runtime TableEntry; a keyless table's row is its default entry. */
export function tableEntry(t: DeviceTable, e: DeviceEntry, ids: P4InfoIds): p4.v1.TableEntry {
  const tableId = idOf(ids.tables, t.name);
  if (t.keyless) return { tableId, action: { type: "action", action: action(e.call, ids) }, isDefaultAction: true };
  const match = exportMatch(t, e.row.match);
  const tableAction: p4.v1.TableAction =
    e.profileGroup !== undefined
      ? { type: "actionProfileGroupId", actionProfileGroupId: e.profileGroup }
      : e.profileMember !== undefined
        ? { type: "actionProfileMemberId", actionProfileMemberId: e.profileMember }
        : { type: "action", action: action(e.call, ids) };
  return {
    tableId,
    ...(match.length > 0 ? { match } : {}),
    action: tableAction,
    ...(needsPriority(t) ? { priority: e.row.match.priority } : {}),
  };
}

/** A 128-bit number as a message: each half as a decimal string, unless it is 0. */
const uint128 = (n: { high: bigint; low: bigint }): p4.v1.Uint128 => ({
  ...(n.high !== 0n ? { high: String(n.high) } : {}),
  ...(n.low !== 0n ? { low: String(n.low) } : {}),
});
