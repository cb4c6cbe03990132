// src/p4/schema.ts, the part of P4Runtime's definitions strata writes with, is
// the official one: every message, field (name, number, type, repeated, oneof,
// declaration order) and enum value it has is the same in test/fixtures/p4runtime.

import protobuf from "protobufjs";
import { describe, expect, it } from "vitest";
import { SCHEMA } from "../../src/p4/schema.js";
import { OFFICIAL } from "./helpers/official.js";

function types(ns: protobuf.NamespaceBase): protobuf.Type[] {
  return ns.nestedArray.flatMap((n) => [
    ...(n instanceof protobuf.Type ? [n] : []),
    ...(n instanceof protobuf.Namespace || n instanceof protobuf.Type ? types(n) : []),
  ]);
}
function enums(ns: protobuf.NamespaceBase): protobuf.Enum[] {
  return ns.nestedArray.flatMap((n) => [
    ...(n instanceof protobuf.Enum ? [n] : []),
    ...(n instanceof protobuf.Namespace || n instanceof protobuf.Type ? enums(n) : []),
  ]);
}

SCHEMA.resolveAll();
const ours = types(SCHEMA);

describe("strata's P4Runtime schema", () => {
  it("covers the messages strata writes", () => {
    expect(ours.map((t) => t.fullName)).toContain(".p4.v1.WriteRequest");
    expect(ours.map((t) => t.fullName)).toContain(".p4.config.v1.P4Info");
  });

  it.each(ours.map((t) => [t.fullName, t] as const))("%s matches the official definition", (name, t) => {
    const official = OFFICIAL.lookupType(name);
    for (const f of t.fieldsArray) {
      const o = official.fields[f.name];
      expect(o, `${name}.${f.name}`).toBeDefined();
      if (o === undefined) continue;
      expect({ id: f.id, repeated: f.repeated, oneof: f.partOf?.name }, `${name}.${f.name}`).toEqual({
        id: o.id,
        repeated: o.repeated,
        oneof: o.partOf?.name,
      });
      expect(f.resolvedType?.fullName ?? f.type, `${name}.${f.name} type`).toBe(o.resolvedType?.fullName ?? o.type);
    }
    // Declaration order decides the JSON and text field order: the same subsequence as the official one.
    const order = official.fieldsArray.map((f) => f.name).filter((n) => t.fields[n] !== undefined);
    expect(t.fieldsArray.map((f) => f.name)).toEqual(order);
  });

  it.each(enums(SCHEMA).map((e) => [e.fullName, e] as const))("enum %s has the official values", (name, e) => {
    const official = OFFICIAL.lookupEnum(name);
    for (const [k, v] of Object.entries(e.values)) expect(official.values[k], `${name}.${k}`).toBe(v);
  });
});
