// Writes src/p4runtime/messages.ts: a TypeScript type for every message, enum and service of
// the official P4Runtime definitions (proto/p4runtime/), as @grpc/proto-loader hands messages
// over with LOADER_OPTIONS (src/p4runtime/proto.ts) and as it takes them to encode.
// Run by `npm run build:ts` (after tsc: the file holds types only, so what tsc emits does not
// depend on it; the typecheck that follows reads the new one); `--check` exits 1 if the
// committed file is stale, and test/p4runtime/messages.test.ts checks the same.

import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";
import { protoRoot } from "../src/p4runtime/definitions.js";

/** How a scalar field's value looks: proto type → its type in each form (Decoded, Encodable). */
const SCALARS: Readonly<Record<string, string>> = {
  double: "number",
  float: "number",
  int32: "number",
  uint32: "number",
  sint32: "number",
  fixed32: "number",
  sfixed32: "number",
  // 64-bit integers: decimal strings as decoded (longs: String); a string or a number to encode.
  int64: 'W["int64"]',
  uint64: 'W["int64"]',
  sint64: 'W["int64"]',
  fixed64: 'W["int64"]',
  sfixed64: 'W["int64"]',
  bool: "boolean",
  string: "string",
  bytes: 'W["bytes"]',
};

/** A type's name as written from anywhere in the file: its full proto name (the namespaces mirror the packages). */
const refName = (t: protobuf.ReflectionObject): string => t.fullName.replace(/^\./, "");

/** What one field holds, as a TypeScript type (one value: the field's repetition is added by the caller). */
export function valueType(f: protobuf.Field): string {
  const scalar = SCALARS[f.type];
  if (scalar !== undefined) return scalar;
  const t = f.resolvedType;
  if (t instanceof protobuf.Enum) return refName(t);
  if (t instanceof protobuf.Type) return `${refName(t)}<W>`;
  throw new Error(`${f.fullName}: type ${f.type} is not resolved`);
}

function fieldType(f: protobuf.Field): string {
  const value = valueType(f);
  if (f instanceof protobuf.MapField) return `{ readonly [key: string]: ${value} }`;
  return f.repeated ? `readonly ${value}[]` : value;
}

function message(t: protobuf.Type, indent: string): string[] {
  const plain = t.fieldsArray.filter((f) => f.partOf === null);
  const body = plain.map((f) => `${indent}  readonly ${f.name}?: ${fieldType(f)};`);
  const oneofs = t.oneofsArray.map((o) => {
    const members = o.fieldsArray.map((f) => `${indent}  ${f.name}: ${fieldType(f)};`);
    return `OneOf<W, "${o.name}", {\n${members.join("\n")}\n${indent}}>`;
  });
  // Type aliases, not interfaces: an object type takes an index signature, as protobufjs's fromObject asks.
  const head = `${indent}export type ${t.name}<W extends Wire = Decoded> =`;
  const fields =
    body.length === 0 && oneofs.length > 0 ? [] : [`{${body.length === 0 ? "" : `\n${body.join("\n")}\n${indent}`}}`];
  return [`${head} ${[...fields, ...oneofs].join(" & ")};`];
}

function enumType(e: protobuf.Enum, indent: string): string[] {
  // A value the definitions do not name arrives as its number (protobufjs's toObject with enums: String).
  const values = [...Object.keys(e.values).map((n) => JSON.stringify(n)), "number"];
  const one = `${indent}export type ${e.name} = ${values.join(" | ")};`;
  if (one.length <= 120) return [one];
  return [
    `${indent}export type ${e.name} =`,
    ...values.map((v, i) => `${indent}  | ${v}${i === values.length - 1 ? ";" : ""}`),
  ];
}

function service(s: protobuf.Service, indent: string): string[] {
  const methods = s.methodsArray.map((m) => {
    const req = m.resolvedRequestType;
    const res = m.resolvedResponseType;
    if (req === null || res === null) throw new Error(`${m.fullName}: types not resolved`);
    return [
      `${indent}  readonly ${m.name}: {`,
      `${indent}    readonly request: ${refName(req)}<W>;`,
      `${indent}    readonly response: ${refName(res)}<W>;`,
      `${indent}  };`,
    ];
  });
  return [
    `${indent}/** The ${s.name} service: each method's request and response. */`,
    `${indent}export interface ${s.name}<W extends Wire = Decoded> {`,
    ...methods.flat(),
    `${indent}}`,
  ];
}

/** A namespace's members: messages (with a namespace of their nested types), enums, services and nested namespaces. */
function members(ns: protobuf.NamespaceBase, indent: string): string[] {
  const out: string[] = [];
  for (const o of ns.nestedArray) {
    if (o instanceof protobuf.Type) out.push(...message(o, indent));
    else if (o instanceof protobuf.Enum) out.push(...enumType(o, indent));
    else if (o instanceof protobuf.Service) out.push(...service(o, indent));
    const isPackage =
      o instanceof protobuf.Namespace && !(o instanceof protobuf.Type) && !(o instanceof protobuf.Service);
    if ((isPackage || o instanceof protobuf.Type) && o.nestedArray.length > 0) {
      out.push(`${indent}export namespace ${o.name} {`, ...members(o, `${indent}  `), `${indent}}`);
    }
  }
  return out;
}

const PREAMBLE = `// GENERATED by scripts/gen-p4runtime-types.ts from proto/p4runtime/ (the official P4Runtime
// definitions): do not edit. Types only: every message as @grpc/proto-loader hands it over with
// LOADER_OPTIONS (src/p4runtime/proto.ts) — \`Decoded\`, the default — and as it takes one to
// encode (protobufjs fromObject) — \`Encodable\`. Fields are lowerCamelCase and optional (an
// unset field is absent); repeated fields are arrays, maps are objects by key, enums their
// value names (a value the definitions do not name: its number). A oneof decodes as a
// discriminated union: the field named after the oneof says which member is set.
// \`strata export p4\` builds its P4Info and WriteRequest as \`Decoded\` messages (src/p4/p4info.ts,
// entries.ts), which the server stages as they are; the protobuf JSON mapping it writes reads
// back as \`Encodable\` (src/p4/import.ts).

/** How a message is decoded: 64-bit integers as decimal strings, bytes as Buffers, oneofs named. */
export interface Decoded {
  readonly int64: string;
  readonly bytes: Buffer;
}
/** What encodes: 64-bit integers as strings or numbers, bytes as bytes or base64 text, a oneof's name optional. */
export interface Encodable {
  readonly int64: string | number;
  readonly bytes: Uint8Array | string;
}
export type Wire = Decoded | Encodable;

/**
 * A oneof \`K\` with members \`M\`. Decoded: one member set and \`K\` naming it, or none and no \`K\`.
 * Encodable: any of them, \`K\` ignored.
 */
export type OneOf<W extends Wire, K extends string, M> = W extends Decoded
  ? { [C in keyof M]: Chosen<K, M, C> }[keyof M] | ({ readonly [P in K]?: never } & { readonly [F in keyof M]?: never })
  : { readonly [P in K]?: keyof M } & { readonly [F in keyof M]?: M[F] };
/** A decoded oneof \`K\` with its member \`C\` set. */
type Chosen<K extends string, M, C extends keyof M> = { readonly [P in K]: C } & { readonly [F in C]: M[C] } & {
  readonly [F in Exclude<keyof M, C>]?: never;
};
`;

export function generateMessageTypes(): string {
  const root = protoRoot();
  return `${PREAMBLE}\n${members(root, "").join("\n")}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const target = fileURLToPath(new URL("../../src/p4runtime/messages.ts", import.meta.url));
  const text = generateMessageTypes();
  let old = "";
  try {
    old = readFileSync(target, "utf8");
  } catch {
    // not written yet
  }
  if (process.argv.includes("--check")) {
    if (old !== text) {
      console.error("strata: src/p4runtime/messages.ts is stale: run npm run build:ts");
      process.exit(1);
    }
  } else if (old !== text) writeFileSync(target, text);
}
