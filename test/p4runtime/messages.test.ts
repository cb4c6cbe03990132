// src/p4runtime/messages.ts says how proto-loader hands messages over; here every message the
// P4Runtime service carries is filled, encoded, and decoded by the service's own deserializers
// (LOADER_OPTIONS), and what comes back is held to what the generator wrote for each field.

import { readFileSync } from "node:fs";
import protobuf from "protobufjs";
import { describe, expect, it } from "vitest";
import { generateMessageTypes, valueType } from "../../scripts/gen-p4runtime-types.js";
import { protoRoot } from "../../src/p4runtime/definitions.js";
import { p4runtimeService } from "../../src/p4runtime/proto.js";

type Obj = Record<string, unknown>;

/** The message types filled, and each oneof's members in the order they were set (one more each time the oneof is
 * filled). */
interface Filled {
  readonly types: Set<string>;
  readonly members: Map<protobuf.OneOf, string[]>;
}

/** A value for one field, as fromObject takes it (never the field's default, so that it is encoded); undefined: none to
 * give. */
function value(f: protobuf.Field, stack: readonly string[], filled: Filled): unknown {
  const t = f.resolvedType;
  if (t instanceof protobuf.Enum) return Object.entries(t.values).find(([, n]) => n !== 0)?.[0];
  if (t instanceof protobuf.Type) return sample(t, stack, filled);
  const scalars: Record<string, unknown> = { bool: true, string: "s", bytes: Buffer.from([1, 2]) };
  return scalars[f.type] ?? (valueType(f) === 'W["int64"]' ? "12345678901234" : 7);
}

/** Every field set, and of each oneof the member after the one set last time; a type already being filled (a cycle) is
 * left empty. */
function sample(t: protobuf.Type, stack: readonly string[], filled: Filled): Obj {
  filled.types.add(t.fullName);
  const out: Obj = {};
  if (stack.includes(t.fullName)) return out;
  const chosen = new Map(
    t.oneofsArray.map((o) => {
      const done = filled.members.get(o) ?? [];
      filled.members.set(o, done);
      const f = o.fieldsArray[done.length % o.fieldsArray.length];
      done.push(f?.name ?? "");
      return [o, f];
    }),
  );
  for (const f of t.fieldsArray) {
    if (f.partOf !== null && chosen.get(f.partOf) !== f) continue;
    const v = value(f, [...stack, t.fullName], filled);
    if (v !== undefined) out[f.name] = f instanceof protobuf.MapField ? { key: v } : f.repeated ? [v] : v;
  }
  return out;
}

/** Where a decoded message differs from its generated type, or from what was sent. */
function problems(t: protobuf.Type, sent: Obj, got: Obj, path: string): string[] {
  const out: string[] = [];
  const oneofNames = new Set(t.oneofsArray.map((o) => o.name));
  for (const o of t.oneofsArray) {
    const set = o.fieldsArray.filter((f) => got[f.name] !== undefined).map((f) => f.name);
    const expected = set.length === 1 ? set[0] : undefined;
    if (set.length > 1 || got[o.name] !== expected)
      out.push(`${path}.${o.name}: ${String(got[o.name])}, members set: ${set.join(", ") || "none"}`);
  }
  const fields = Object.keys(got).filter((key) => !oneofNames.has(key));
  if (fields.sort().join() !== Object.keys(sent).sort().join())
    out.push(`${path}: fields ${fields.join(", ")}, sent ${Object.keys(sent).join(", ")}`);
  for (const key of fields) {
    const f = t.fields[key];
    if (f === undefined) continue;
    const one = (v: unknown, s: unknown, at: string): void => {
      const claimed = valueType(f);
      const rt = f.resolvedType;
      if (rt instanceof protobuf.Type) {
        if (typeof v === "object" && v !== null && !Array.isArray(v)) out.push(...problems(rt, s as Obj, v as Obj, at));
        else out.push(`${at}: ${typeof v}, not a message`);
        return;
      }
      const ok =
        rt instanceof protobuf.Enum
          ? typeof v === "string" && v in rt.values
          : claimed === 'W["bytes"]'
            ? Buffer.isBuffer(v)
            : claimed === 'W["int64"]'
              ? typeof v === "string"
              : typeof v === claimed;
      if (!ok) out.push(`${at}: ${JSON.stringify(v)} is not ${claimed}`);
    };
    const v = got[key];
    const s = sent[key];
    if (f instanceof protobuf.MapField) {
      for (const [mk, mv] of Object.entries(v as Obj)) one(mv, (s as Obj)[mk], `${path}.${key}[${mk}]`);
    } else if (f.repeated) {
      if (!Array.isArray(v)) out.push(`${path}.${key}: not an array`);
      else v.forEach((x, i) => one(x, (s as unknown[])[i], `${path}.${key}[${i}]`));
    } else one(v, s, `${path}.${key}`);
  }
  return out;
}

describe("src/p4runtime/messages.ts", () => {
  it("is what scripts/gen-p4runtime-types.ts writes from proto/p4runtime/ now (npm run build:ts writes it)", () => {
    expect(readFileSync(new URL("../../src/p4runtime/messages.ts", import.meta.url), "utf8")).toBe(
      generateMessageTypes(),
    );
  });

  const root = protoRoot();
  const service = p4runtimeService();
  const method = root.lookupService("p4.v1.P4Runtime").methodsArray;
  const cases = method.flatMap((m) => [
    {
      name: `${m.name} request`,
      type: m.resolvedRequestType,
      decode: service[m.name as keyof typeof service].requestDeserialize as (b: Buffer) => Obj,
    },
    {
      name: `${m.name} response`,
      type: m.resolvedResponseType,
      decode: service[m.name as keyof typeof service].responseDeserialize as (b: Buffer) => Obj,
    },
  ]);
  const filled: Filled = { types: new Set(), members: new Map() };

  it.each(cases)("$name: every field, and each member of every oneof, decodes as the types say", ({ type, decode }) => {
    if (type === null) throw new Error("unresolved");
    for (let k = 0; k < 40; k++) {
      const sent = sample(type, [], filled);
      const got = decode(Buffer.from(type.encode(type.fromObject(sent)).finish()));
      expect(problems(type, sent, got, type.name)).toEqual([]);
    }
  });

  it(
    "covers every member of every oneof the service's messages hold; unset " +
      "fields are absent; an enum value the definitions do not name is its " +
      "number",
    () => {
      for (const name of [
        "p4.v1.TableEntry",
        "p4.v1.Replica",
        "p4.config.v1.P4Info",
        "p4.config.v1.P4DataTypeSpec",
        "google.rpc.Status",
        "google.protobuf.Any",
      ]) {
        expect(filled.types, name).toContain(`.${name}`);
      }
      const missed = [...filled.members].flatMap(([o, done]) =>
        o.fieldsArray.filter((f) => !done.includes(f.name)).map((f) => `${o.parent?.fullName}.${f.name}`),
      );
      expect(missed).toEqual([]);
      const w = root.lookupType("p4.v1.WriteRequest");
      const decode = (o: Obj): unknown =>
        service.Write.requestDeserialize(Buffer.from(w.encode(w.fromObject(o)).finish()));
      expect(decode({})).toEqual({});
      expect(decode({ updates: [{ type: 77, entity: {} }] })).toEqual({ updates: [{ type: 77, entity: {} }] });
    },
  );
});
