// What a device's tables are made of: each table's keys, the P4 actions a table may name and the device declares,
// and the action call each description row becomes.

import type { CompiledRow, CompiledTable } from "../control/compiled.js";
import { InputError } from "../errors.js";
import { ROLE_ACTIONS, type RoleAction, TABLE_ROLES, type TableRole } from "../wasm/abi.js";
import { type DesignDef, IN_LINK_FIELD, keyLayout } from "../wire/designs.js";
import type { ActionCall, ActionParam, DeviceAction, DeviceKey, DeviceMember, Target } from "./device-types.js";
import {
  ACTION_NAMES as A,
  GROUP_BITS,
  LINK_BITS,
  MEMBER_BITS,
  missAction,
  p4Ident,
  PORT_BITS,
  pushAction,
  SESSION_BITS,
} from "./names.js";
import { outOf } from "./port-map.js";

export function tableKeys(m: DeviceMember, t: CompiledTable): DeviceKey[] {
  const layout = keyLayout(m.design);
  return t.fields.map((field): DeviceKey => {
    if (t.role === "transmit")
      return { name: field.name, bits: LINK_BITS, kind: field.kind, field, expr: "meta.out_link" };
    if (t.role === "send")
      return { name: field.name, bits: SESSION_BITS, kind: field.kind, field, expr: "meta.session" };
    if (field.name === IN_LINK_FIELD.name)
      return { name: field.name, bits: IN_LINK_FIELD.bits, kind: field.kind, field, expr: "meta.in_link" };
    const slot = layout.slots.find((s) => s.field.name === field.name);
    if (slot === undefined) throw new Error(`${m.design.name} has no field ${field.name}`);
    return {
      name: field.name,
      bits: slot.field.bits,
      kind: field.kind,
      field,
      expr: `meta.${m.design.name}.${p4Ident(field.name)}`,
    };
  });
}

/**
 * The P4 actions each action of the catalogue (ROLE_ACTIONS) may become; rowCall chooses one for each row. An `out`
 * row goes to one out-link, to several (a multicast group) or to none; a `physical` row to a P4 port, to a member of
 * the same machine, or to no link. A send row's push has an action per design (pushAction).
 */
const P4_ACTIONS = {
  forward: [A.acquireForward],
  receive: [A.acquireReceive],
  both: [A.acquireBoth],
  "shared-acquire": [A.acquireShared],
  out: [A.forwardOut, A.forwardReplicate, A.forwardDrop],
  drop: [A.forwardDrop],
  "shared-forward": [A.forwardShared],
  physical: [A.transmitPhysical, A.transmitLocal, A.transmitNoLink],
  "external-session": [A.transmitSession],
  push: [],
  deliver: [A.receiveDeliver],
  "external-link": [A.receivePop],
} as const satisfies Record<RoleAction<TableRole>, readonly string[]>;

/** The actions a `role` table of member m may name, in the program's order: only a shared member hands over. */
export function tableActions(role: TableRole, m: DeviceMember): string[] {
  const shared = m.partner !== undefined;
  const held = ROLE_ACTIONS[role] as readonly RoleAction<TableRole>[];
  const named = new Set<string>(
    held.filter((a) => shared || (a !== "shared-acquire" && a !== "shared-forward")).flatMap((a) => P4_ACTIONS[a]),
  );
  const push = held.includes("push") ? [pushAction(m.design.name)] : [];
  return [...Object.values(A).filter((a) => named.has(a)), ...push];
}

/** The writable fields of a design: the parameters of its push action. */
export function pushParams(design: DesignDef): ActionParam[] {
  return design.fields.filter((f) => f.readOnly !== true).map((f) => ({ name: p4Ident(f.name), bits: f.bits }));
}

export function deviceActions(members: readonly DeviceMember[], designs: readonly DesignDef[]): DeviceAction[] {
  const member = { name: "member", bits: MEMBER_BITS };
  const inLink = { name: "in_link", bits: LINK_BITS };
  const actions: DeviceAction[] = [
    { name: A.acquireForward, params: [] },
    { name: A.acquireReceive, params: [] },
    { name: A.acquireBoth, params: [] },
    { name: A.acquireShared, params: [member] },
    { name: A.forwardOut, params: [{ name: "out_link", bits: LINK_BITS }] },
    { name: A.forwardReplicate, params: [{ name: "group", bits: GROUP_BITS }] },
    { name: A.forwardDrop, params: [] },
    { name: A.forwardShared, params: [member] },
    { name: A.transmitPhysical, params: [{ name: "port", bits: PORT_BITS }] },
    { name: A.transmitLocal, params: [member, inLink] },
    { name: A.transmitSession, params: [member, { name: "session", bits: SESSION_BITS }] },
    { name: A.transmitNoLink, params: [] },
    { name: A.receiveDeliver, params: [] },
    { name: A.receivePop, params: [member, inLink] },
    ...designs
      .filter((d) => members.some((m) => m.design === d && m.member.tables.send !== undefined))
      .map((d) => ({ name: pushAction(d.name), params: pushParams(d) })),
    ...TABLE_ROLES.map((role) => ({ name: missAction(role), params: [] })),
  ];
  // Only what some table names: a device without subduction has no shared actions.
  const named = new Set(
    members.flatMap((m) =>
      TABLE_ROLES.filter((r) => m.member.tables[r] !== undefined).flatMap((r) => [
        ...tableActions(r, m),
        missAction(r),
      ]),
    ),
  );
  return actions.filter((a) => named.has(a.name));
}

export function rowCall(
  role: TableRole,
  m: DeviceMember,
  r: CompiledRow,
  group: (outLinks: readonly number[]) => number,
  numberOf: (member: number) => number,
  targetOf: (member: number, out: number) => Target,
  file: string,
  at: string,
): ActionCall {
  const a = r.action;
  const call = (action: string, ...args: (number | bigint)[]): ActionCall => ({
    action,
    args: args.map((x) => BigInt(x)),
  });
  switch (a.name) {
    case "forward":
      return call(A.acquireForward);
    case "receive":
      return call(A.acquireReceive);
    case "both":
      return call(A.acquireBoth);
    case "shared-acquire":
      return call(A.acquireShared, numberOf(a.arg ?? -1));
    case "out": {
      if (r.outLinks.length === 0) return call(A.forwardDrop);
      if (r.outLinks.length === 1) return call(A.forwardOut, r.outLinks[0] ?? 0);
      return call(A.forwardReplicate, group(r.outLinks));
    }
    case "drop":
      return call(A.forwardDrop);
    case "shared-forward":
      return call(A.forwardShared, numberOf(a.arg ?? -1));
    case "physical": {
      const t = targetOf(m.member.index, outOf(r));
      switch (t.kind) {
        case "port":
          return call(A.transmitPhysical, t.port);
        case "local":
          return call(A.transmitLocal, t.member, t.inLink);
        case "anycast":
          return call(A.transmitPhysical, t.ports[0] ?? 0);
        case "none":
          return call(A.transmitNoLink);
      }
      break;
    }
    case "external-session":
      return call(A.transmitSession, numberOf(a.arg ?? -1), a.arg2 ?? 0);
    case "push":
      return { action: pushAction(m.design.name), args: pushArgs(m.design, a.data ?? new Uint8Array(0)) };
    case "deliver":
      return call(A.receiveDeliver);
    case "external-link":
      return call(A.receivePop, numberOf(a.arg ?? -1), a.arg2 ?? 0);
    case "none":
      break;
  }
  throw new InputError(file, at, `a ${role} row whose action is ${a.name} has no P4 action`, "");
}

/** A send row's header (a key vector of the design) as the push action's arguments. */
function pushArgs(design: DesignDef, vector: Uint8Array): bigint[] {
  const layout = keyLayout(design);
  return layout.slots
    .filter((s) => s.field !== IN_LINK_FIELD && s.field.readOnly !== true)
    .map((s) => {
      let v = 0n;
      for (let i = 0; i < s.len; i++) v = (v << 8n) | BigInt(vector[s.offset + i] ?? 0);
      return v;
    });
}
