// The reconciler's comparisons and order, case by case: entities that a device spells otherwise
// (zero-padded bytestrings, fields or replicas in another order, P4Runtime 1.3's egress_port) are
// the same entity; the difference is written members, groups, table entries, multicast groups,
// deletions of table entries first and of the rest last; a default entry is never deleted; Writes
// hold one step each, at most `max` updates.

import { describe, expect, it } from "vitest";
import type { DesiredEntity, MachineDesired } from "../../src/deploy/desired.js";
import { keyOf, kindOf, valueOf } from "../../src/deploy/entities.js";
import { batches, diff } from "../../src/deploy/plan.js";
import type { p4 } from "../../src/p4runtime/messages.js";

const b = (...bytes: number[]): Buffer => Buffer.from(bytes);
const exact = (fieldId: number, ...v: number[]): p4.v1.FieldMatch => ({
  fieldId,
  fieldMatchType: "exact",
  exact: { value: b(...v) },
});
const entry = (t: Partial<p4.v1.TableEntry>): p4.v1.Entity => ({
  entity: "tableEntry",
  tableEntry: { tableId: 1, action: { type: "action", action: { actionId: 7 } }, ...t },
});
const mc = (id: number, replicas: p4.v1.Replica[]): p4.v1.Entity => ({
  entity: "packetReplicationEngineEntry",
  packetReplicationEngineEntry: {
    type: "multicastGroupEntry",
    multicastGroupEntry: { multicastGroupId: id, replicas },
  },
});
const member = (id: number, actionId = 7): p4.v1.Entity => ({
  entity: "actionProfileMember",
  actionProfileMember: { actionProfileId: 9, memberId: id, action: { actionId } },
});
const group = (id: number, members: number[]): p4.v1.Entity => ({
  entity: "actionProfileGroup",
  actionProfileGroup: {
    actionProfileId: 9,
    groupId: id,
    members: members.map((memberId) => ({ memberId, weight: 1 })),
  },
});
const port = (p: number, instance = 0): p4.v1.Replica => ({ portKind: "port", port: b(p), instance });

describe("the same entity however a device spells it", () => {
  it.each([
    { name: "a zero-padded match value", a: entry({ match: [exact(1, 5)] }), b: entry({ match: [exact(1, 0, 0, 5)] }) },
    {
      name: "match fields in another order",
      a: entry({ match: [exact(1, 5), exact(2, 6)] }),
      b: entry({ match: [exact(2, 6), exact(1, 5)] }),
    },
    {
      name: "a zero-padded action parameter",
      a: entry({ action: { type: "action", action: { actionId: 7, params: [{ paramId: 1, value: b(2) }] } } }),
      b: entry({ action: { type: "action", action: { actionId: 7, params: [{ paramId: 1, value: b(0, 2) }] } } }),
    },
    { name: "replicas in another order", a: mc(1, [port(1), port(2, 3)]), b: mc(1, [port(2, 3), port(1)]) },
    {
      name: "a replica's egress_port (P4Runtime 1.3)",
      a: mc(1, [port(3)]),
      b: mc(1, [{ portKind: "egressPort", egressPort: 3 }]),
    },
    { name: "a group's members in another order", a: group(1, [1, 2]), b: group(1, [2, 1]) },
  ])("$name", ({ a, b: other }) => {
    expect(keyOf(other)).toBe(keyOf(a));
    expect(valueOf(other)).toBe(valueOf(a));
  });
});

describe("different entities, or the same entity doing something else", () => {
  it.each([
    { name: "another priority", a: entry({ priority: 1 }), b: entry({ priority: 2 }), same: "none" },
    {
      name: "another match value",
      a: entry({ match: [exact(1, 5)] }),
      b: entry({ match: [exact(1, 6)] }),
      same: "none",
    },
    {
      name: "another action parameter",
      a: entry({ action: { type: "action", action: { actionId: 7, params: [{ paramId: 1, value: b(2) }] } } }),
      b: entry({ action: { type: "action", action: { actionId: 7, params: [{ paramId: 1, value: b(3) }] } } }),
      same: "key",
    },
    { name: "another replica", a: mc(1, [port(1)]), b: mc(1, [port(2)]), same: "key" },
    { name: "another member's action", a: member(1, 7), b: member(1, 8), same: "key" },
  ])("$name", ({ a, b: other, same }) => {
    expect(keyOf(other) === keyOf(a)).toBe(same === "key");
    if (same === "key") expect(valueOf(other)).not.toBe(valueOf(a));
  });
});

function desired(entities: readonly (readonly [p4.v1.Entity, "INSERT" | "MODIFY"])[]): MachineDesired {
  const d = entities.map(([entity, type]): DesiredEntity => {
    const kind = kindOf(entity);
    if (kind === undefined) throw new Error("no kind");
    return {
      kind,
      key: keyOf(entity),
      value: valueOf(entity),
      update: { type, entity },
      where: kind,
      origin: keyOf(entity),
    };
  });
  return {
    machine: "m",
    deviceId: 1,
    p4info: {
      tables: [{ preamble: { id: 1, name: "I.t", alias: "t" } }],
      actionProfiles: [{ preamble: { id: 9, alias: "sel" } }],
    },
    p4infoBinary: new Uint8Array(0),
    program: "",
    cookie: "1",
    entities: d,
  };
}

describe("the difference, in the order it can be written", () => {
  it.each([
    {
      name: "nothing to write where the device holds it all",
      want: [
        [member(1), "INSERT"],
        [entry({ match: [exact(1, 1)] }), "INSERT"],
      ] as const,
      held: [member(1), entry({ match: [exact(1, 0, 1)] })],
      changes: [],
    },
    {
      name:
        "deletions of table entries first, then members, groups, entries, multicast groups, then the rest's " +
        "deletions in reverse (multicast groups, groups, members)",
      want: [
        [mc(5, [port(1)]), "INSERT"],
        [entry({ match: [exact(1, 1)] }), "INSERT"],
        [group(2, [1]), "INSERT"],
        [member(1), "INSERT"],
      ] as const,
      held: [mc(6, [port(1)]), member(3), entry({ match: [exact(1, 9)] }), group(4, [3])],
      changes: [
        "delete table 1 1=09 priority 0",
        "insert member 9 1",
        "insert group 9 2",
        "insert table 1 1=01 priority 0",
        "insert multicast 5",
        "delete multicast 6",
        "delete group 9 4",
        "delete member 9 3",
      ],
    },
    {
      name: "an entry that does something else is modified; a default entry is modified, never deleted",
      want: [
        [entry({ match: [exact(1, 1)], action: { type: "action", action: { actionId: 8 } } }), "INSERT"],
        [entry({ isDefaultAction: true, action: { type: "action", action: { actionId: 8 } } }), "MODIFY"],
      ] as const,
      held: [
        entry({ match: [exact(1, 1)] }),
        entry({ isDefaultAction: true }),
        entry({ tableId: 2, isDefaultAction: true }),
      ],
      changes: ["modify table 1 1=01 priority 0", "modify table 1 default"],
    },
  ])("$name", ({ want, held, changes }) => {
    const got = diff(desired(want), held);
    expect(got.map((c) => `${c.op} ${c.key}`)).toEqual(changes);
    for (const c of got) expect(c.update.type).toBe(c.op.toUpperCase());
  });

  it("Writes of one step each, at most max updates", () => {
    const want = [1, 2, 3].map((i) => [member(i), "INSERT"] as const);
    const changes = diff(desired([...want, [entry({ match: [exact(1, 1)] }), "INSERT"]]), [
      entry({ match: [exact(1, 2)] }),
    ]);
    expect(batches(changes, 2).map((w) => w.map((c) => `${c.op} ${c.kind}`))).toEqual([
      ["delete table"],
      ["insert member", "insert member"],
      ["insert member"],
      ["insert table"],
    ]);
  });
});
