// A device's installed rows as one P4Runtime WriteRequest (p4/v1/p4runtime.proto)
// in the protobuf JSON mapping: INSERT updates for the multicast groups
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

import { base64, canonical, ones, readBig } from "./bytes.js";
import {
  type ActionCall,
  CLONE_SESSION_BOTH,
  type Device,
  type DeviceEntry,
  type DeviceKey,
  type DeviceTable,
  RECIRC_PORT,
} from "./device.js";
import { qualified } from "./names.js";
import type { P4InfoIds } from "./p4info.js";
import type { JsonMessage } from "./schema.js";

/** The election id strata's entries are written with: a controller that is primary by default. */
export const ELECTION_ID = { high: 0n, low: 1n };

const bytes = (v: bigint): string => base64(canonical(v));

/** Whether entries of the table carry a priority (P4Runtime: a ternary, range or optional field). */
export function needsPriority(t: DeviceTable): boolean {
  return t.keys.some((k) => k.kind === "ternary" || k.kind === "range" || k.kind === "optional");
}

/** The prefix length of an LPM mask, or −1 if the mask is not a prefix. */
export function prefixLength(mask: bigint, bits: number): number {
  const host = ones(bits) ^ mask;
  if ((host & (host + 1n)) !== 0n) return -1;
  return bits - host.toString(2).replace(/^0+$/, "").length;
}

/** One field of a row, as P4Runtime matches it; undefined for "don't care". */
export function fieldMatch(k: DeviceKey, e: DeviceEntry, fieldId: number): JsonMessage | undefined {
  const m = e.row.match;
  const at = (b: Uint8Array | undefined): bigint =>
    b === undefined ? 0n : readBig(b, k.field.offset, k.field.len) & ones(k.bits);
  switch (k.kind) {
    case "exact":
      return { fieldId, exact: { value: bytes(at(m.value)) } };
    case "optional":
      return at(m.mask) === 0n ? undefined : { fieldId, optional: { value: bytes(at(m.value)) } };
    case "ternary": {
      const mask = at(m.mask);
      return mask === 0n ? undefined : { fieldId, ternary: { value: bytes(at(m.value) & mask), mask: bytes(mask) } };
    }
    case "lpm": {
      const mask = at(m.mask);
      const len = prefixLength(mask, k.bits);
      if (len < 0) throw new Error(`${k.name}: mask ${mask.toString(16)} of an LPM field is not a prefix`);
      return len === 0 ? undefined : { fieldId, lpm: { value: bytes(at(m.value) & mask), prefixLen: len } };
    }
    case "range": {
      const lo = at(m.lo);
      const hi = at(m.hi);
      return lo === 0n && hi === ones(k.bits) ? undefined : { fieldId, range: { low: bytes(lo), high: bytes(hi) } };
    }
  }
}

export function actionJson(call: ActionCall, ids: P4InfoIds): JsonMessage {
  const actionId = ids.actions.get(qualified(call.action));
  if (actionId === undefined) throw new Error(`no id for action ${call.action}`);
  return { actionId, params: call.args.map((v, i) => ({ paramId: i + 1, value: bytes(v) })) };
}

export function writeRequest(dev: Device, ids: P4InfoIds): JsonMessage {
  const insert = (entity: JsonMessage): JsonMessage => ({ type: "INSERT", entity });
  const updates: JsonMessage[] = [];
  for (const g of dev.multicast) {
    updates.push(
      insert({
        packetReplicationEngineEntry: {
          multicastGroupEntry: {
            multicastGroupId: g.id,
            replicas: g.replicas.map((r) => ({ port: bytes(BigInt(r.port)), instance: r.instance })),
          },
        },
      }),
    );
  }
  if (dev.cloneBoth) {
    updates.push(
      insert({
        packetReplicationEngineEntry: {
          cloneSessionEntry: {
            sessionId: CLONE_SESSION_BOTH,
            replicas: [{ port: bytes(BigInt(RECIRC_PORT)), instance: 0 }],
          },
        },
      }),
    );
  }
  for (const t of dev.tables) {
    if (t.selector === undefined) continue;
    const actionProfileId = ids.profiles.get(qualified(t.selector.name));
    t.selector.members.forEach((call, i) =>
      updates.push(
        insert({ actionProfileMember: { actionProfileId, memberId: i + 1, action: actionJson(call, ids) } }),
      ),
    );
    for (const g of t.selector.groups) {
      updates.push(
        insert({
          actionProfileGroup: {
            actionProfileId,
            groupId: g.id,
            members: g.members.map((memberId) => ({ memberId, weight: 1 })),
          },
        }),
      );
    }
  }
  for (const t of dev.tables) {
    const tableId = ids.tables.get(qualified(t.name));
    const priority = needsPriority(t);
    for (const e of t.entries) {
      if (t.keyless) {
        // P4Runtime §9.1: a keyless table takes no INSERT; its default entry is MODIFYed.
        updates.push({
          type: "MODIFY",
          entity: { tableEntry: { tableId, action: { action: actionJson(e.call, ids) }, isDefaultAction: true } },
        });
        continue;
      }
      const match = t.keys.flatMap((k, i) => fieldMatch(k, e, i + 1) ?? []);
      const action =
        e.profileGroup !== undefined
          ? { actionProfileGroupId: e.profileGroup }
          : e.profileMember !== undefined
            ? { actionProfileMemberId: e.profileMember }
            : { action: actionJson(e.call, ids) };
      updates.push(
        insert({ tableEntry: { tableId, match, action, ...(priority ? { priority: e.row.match.priority } : {}) } }),
      );
    }
  }
  return {
    deviceId: String(dev.deviceId),
    electionId: { high: String(ELECTION_ID.high), low: String(ELECTION_ID.low) },
    updates,
  };
}
