// The entities strata writes to a device, compared as a device returns them: each has a key
// (what names it on the device: a table entry's table, match and priority; a member's or group's
// profile and id; a multicast group's or clone session's id) and a value (what it does), both
// strings, so that desired and observed entities compare however each side spelled its bytes
// (P4Runtime §8.4: a server may read back a bytestring padded with zeros) or ordered its lists.

import { canonical } from "../p4/bytes.js";
import type { p4 } from "../p4runtime/messages.js";

/** The kinds in the order a device is written (§9: a table entry names its profile's members and groups). */
export const KINDS = ["member", "group", "table", "multicast", "clone"] as const;
export type Kind = (typeof KINDS)[number];

/** A bytestring's value as hex without leading zero bytes ("00" for zero). */
function hex(b: Uint8Array | undefined): string {
  if (b === undefined || b.length === 0) return "";
  let start = 0;
  while (start < b.length - 1 && b[start] === 0) start++;
  return Buffer.from(b.subarray(start)).toString("hex");
}

const num = (v: string | number | undefined): string => String(v ?? 0);

/** The kind of an entity, or undefined for one strata does not write. */
export function kindOf(e: p4.v1.Entity): Kind | undefined {
  switch (e.entity) {
    case "tableEntry":
      return "table";
    case "actionProfileMember":
      return "member";
    case "actionProfileGroup":
      return "group";
    case "packetReplicationEngineEntry": {
      const pre = e.packetReplicationEngineEntry;
      return pre.type === "multicastGroupEntry" ? "multicast" : pre.type === "cloneSessionEntry" ? "clone" : undefined;
    }
    default:
      return undefined;
  }
}

function fieldMatch(m: p4.v1.FieldMatch): string {
  const id = num(m.fieldId);
  switch (m.fieldMatchType) {
    case "exact":
      return `${id}=${hex(m.exact.value)}`;
    case "ternary":
      return `${id}=${hex(m.ternary.value)}&${hex(m.ternary.mask)}`;
    case "lpm":
      return `${id}=${hex(m.lpm.value)}/${num(m.lpm.prefixLen)}`;
    case "range":
      return `${id}=${hex(m.range.low)}..${hex(m.range.high)}`;
    case "optional":
      return `${id}=${hex(m.optional.value)}?`;
    default:
      return `${id}=?`;
  }
}

/** What names an entity on its device. */
export function keyOf(e: p4.v1.Entity): string {
  switch (e.entity) {
    case "tableEntry": {
      const t = e.tableEntry;
      if (t.isDefaultAction === true) return `table ${num(t.tableId)} default`;
      const match = [...(t.match ?? [])].sort((a, b) => (a.fieldId ?? 0) - (b.fieldId ?? 0)).map(fieldMatch);
      return `table ${num(t.tableId)} ${match.join(" ")} priority ${num(t.priority)}`;
    }
    case "actionProfileMember":
      return `member ${num(e.actionProfileMember.actionProfileId)} ${num(e.actionProfileMember.memberId)}`;
    case "actionProfileGroup":
      return `group ${num(e.actionProfileGroup.actionProfileId)} ${num(e.actionProfileGroup.groupId)}`;
    case "packetReplicationEngineEntry": {
      const pre = e.packetReplicationEngineEntry;
      if (pre.type === "multicastGroupEntry") return `multicast ${num(pre.multicastGroupEntry.multicastGroupId)}`;
      if (pre.type === "cloneSessionEntry") return `clone ${num(pre.cloneSessionEntry.sessionId)}`;
      return "pre ?";
    }
    default:
      return `${e.entity ?? "none"} ?`;
  }
}

function action(a: p4.v1.Action | undefined): string {
  const params = [...(a?.params ?? [])].sort((x, y) => (x.paramId ?? 0) - (y.paramId ?? 0));
  return `${num(a?.actionId)}(${params.map((p) => `${num(p.paramId)}=${hex(p.value)}`).join(",")})`;
}

function tableAction(a: p4.v1.TableAction | undefined): string {
  switch (a?.type) {
    case "action":
      return action(a.action);
    case "actionProfileMemberId":
      return `member ${num(a.actionProfileMemberId)}`;
    case "actionProfileGroupId":
      return `group ${num(a.actionProfileGroupId)}`;
    default:
      return "none";
  }
}

/** A replica's port: the bytestring of P4Runtime 1.4, or the egress_port number of those before. */
function replicas(rs: readonly p4.v1.Replica[] | undefined): string {
  return (rs ?? [])
    .map((r) => {
      const port = r.portKind === "egressPort" ? hex(canonical(BigInt(r.egressPort))) : hex(r.port);
      return `${port}/${num(r.instance)}`;
    })
    .sort()
    .join(",");
}

/** What an entity does: equal values need no write. */
export function valueOf(e: p4.v1.Entity): string {
  switch (e.entity) {
    case "tableEntry":
      return tableAction(e.tableEntry.action);
    case "actionProfileMember":
      return action(e.actionProfileMember.action);
    case "actionProfileGroup": {
      const g = e.actionProfileGroup;
      const members = [...(g.members ?? [])].map((m) => `${num(m.memberId)}x${num(m.weight)}`).sort();
      return members.join(",");
    }
    case "packetReplicationEngineEntry": {
      const pre = e.packetReplicationEngineEntry;
      if (pre.type === "multicastGroupEntry") return replicas(pre.multicastGroupEntry.replicas);
      if (pre.type === "cloneSessionEntry") {
        const c = pre.cloneSessionEntry;
        return `${replicas(c.replicas)} cos ${num(c.classOfService)} len ${num(c.packetLengthBytes)}`;
      }
      return "";
    }
    default:
      return "";
  }
}
