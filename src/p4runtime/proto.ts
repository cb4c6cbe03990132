// The official P4Runtime definitions (proto/p4runtime/, shipped in the package),
// loaded twice: by @grpc/proto-loader for the service and the messages gRPC
// carries, and by protobufjs (./definitions.ts) for what the server encodes itself — the
// google.rpc.Status of a failed Write with one p4.v1.Error per update in its
// details, and P4Info messages compared byte for byte.

import * as grpc from "@grpc/grpc-js";
import * as loader from "@grpc/proto-loader";
import protobuf from "protobufjs";
import { protoDir, protoRoot } from "./definitions.js";
import type { Encodable, p4 } from "./messages.js";

/**
 * How messages look in the handlers: lowerCamelCase fields (as in the protobuf JSON mapping
 * and entries.json), 64-bit integers as decimal strings, enums by name, bytes as Buffers,
 * a `oneof` named by a field of its own, and unset fields absent.
 */
export const LOADER_OPTIONS: loader.Options = {
  keepCase: false,
  longs: String,
  enums: String,
  bytes: Buffer,
  defaults: false,
  oneofs: true,
};

/** The p4.v1.P4Runtime service, each method with the types of its messages as LOADER_OPTIONS decodes them
 * (src/p4runtime/messages.ts). */
export type P4RuntimeDefinition = {
  readonly [M in keyof p4.v1.P4Runtime]: grpc.MethodDefinition<
    p4.v1.P4Runtime[M]["request"],
    p4.v1.P4Runtime[M]["response"]
  >;
};

let service: P4RuntimeDefinition | undefined;

/** The p4.v1.P4Runtime service definition. */
export function p4runtimeService(): P4RuntimeDefinition {
  if (service === undefined) {
    const definition = loader.loadSync("p4/v1/p4runtime.proto", { ...LOADER_OPTIONS, includeDirs: [protoDir()] });
    // The one boundary where the messages get their types: proto-loader's definitions are untyped;
    // messages.ts is generated from the same .proto files for these options, and
    // test/p4runtime/messages.test.ts decodes every message through this service to check it.
    const pkg = grpc.loadPackageDefinition(definition) as unknown as {
      p4: { v1: { P4Runtime: { service: P4RuntimeDefinition } } };
    };
    service = pkg.p4.v1.P4Runtime.service;
  }
  return service;
}

/**
 * The service as strata's server serves it: Read's responses go out as the bytes
 * readResponses() made, so the server sizes each message itself.
 */
export function servedDefinition(): grpc.ServiceDefinition {
  const s = p4runtimeService();
  return { ...s, Read: { ...s.Read, responseSerialize: (b: Buffer) => b } };
}

/** The largest ReadResponse the server sends: what a gRPC client takes by default (4 MiB), less room for gRPC's own
 * framing. */
export const READ_RESPONSE_MAX = 4 * 1024 * 1024 - 1024;

/** The messages the server encodes itself, and the field numbers it frames them with. */
let codec:
  { entity: protobuf.Type; tableEntry: protobuf.Type; tableEntryField: number; entitiesField: number } | undefined;
function entityCodec(): NonNullable<typeof codec> {
  if (codec === undefined) {
    const r = protoRoot();
    const entity = r.lookupType("p4.v1.Entity");
    const field = (t: protobuf.Type, name: string): number => {
      const f = t.fields[name];
      if (f === undefined) throw new Error(`${t.fullName} has no field ${name}`);
      return f.id;
    };
    codec = {
      entity,
      tableEntry: r.lookupType("p4.v1.TableEntry"),
      tableEntryField: field(entity, "tableEntry"),
      entitiesField: field(r.lookupType("p4.v1.ReadResponse"), "entities"),
    };
  }
  return codec;
}

/** A p4.v1.Entity, encoded. */
export function encodeEntity(m: p4.v1.Entity<Encodable>): Uint8Array {
  const { entity } = entityCodec();
  return entity.encode(entity.fromObject(m)).finish();
}

/** A p4.v1.TableEntry, encoded: what a server keeps to answer reads of the entry without encoding it again. */
export function encodeTableEntry(m: p4.v1.TableEntry<Encodable>): Uint8Array {
  const { tableEntry } = entityCodec();
  return tableEntry.encode(tableEntry.fromObject(m)).finish();
}

/**
 * An Entity holding an encoded TableEntry, with `more` of its fields (counter data) after it:
 * the fields of a message may come in any order, and these are not among the first.
 */
export function tableEntryEntity(tableEntry: Uint8Array, more?: p4.v1.TableEntry<Encodable>): Uint8Array {
  const c = entityCodec();
  const tail = more === undefined ? undefined : c.tableEntry.encode(c.tableEntry.fromObject(more)).finish();
  const len = tableEntry.length + (tail?.length ?? 0);
  const out = new Uint8Array(fieldHeaderLen(c.tableEntryField, len) + len);
  let at = writeFieldHeader(out, 0, c.tableEntryField, len);
  out.set(tableEntry, at);
  at += tableEntry.length;
  if (tail !== undefined) out.set(tail, at);
  return out;
}

/** An encoded Entity holding a TableEntry: the TableEntry's bytes (a view into it). */
export function tableEntryOf(entity: Uint8Array): Uint8Array {
  let at = 0;
  // Past two varints: the field's tag and its length.
  for (let varint = 0; varint < 2; varint++) {
    while ((entity[at] ?? 0) & 0x80) at++;
    at++;
  }
  return entity.subarray(at);
}

/**
 * Encoded entities in ReadResponse messages of at most `max` bytes each (§13.3: a server may
 * split a Read's entities across responses); an entity larger than `max` goes alone. Always at
 * least one response.
 */
export function readResponses(entities: readonly Uint8Array[], max: number): Buffer[] {
  const field = entityCodec().entitiesField;
  const out: Buffer[] = [];
  let first = 0;
  let size = 0;
  const flush = (end: number): void => {
    const b = Buffer.allocUnsafe(size);
    let at = 0;
    for (let i = first; i < end; i++) {
      const e = entities[i] as Uint8Array; // i < end ≤ entities.length
      at = writeFieldHeader(b, at, field, e.length);
      b.set(e, at);
      at += e.length;
    }
    out.push(b);
  };
  entities.forEach((e, i) => {
    const framed = fieldHeaderLen(field, e.length) + e.length;
    if (size > 0 && size + framed > max) {
      flush(i);
      first = i;
      size = 0;
    }
    size += framed;
  });
  flush(entities.length);
  return out;
}

// A length-delimited field's header: its tag (field number, wire type 2) and the length, as varints.
const varintLen = (n: number): number => (n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5);
const fieldHeaderLen = (field: number, len: number): number => varintLen((field << 3) | 2) + varintLen(len);
function writeFieldHeader(into: Uint8Array, at: number, field: number, len: number): number {
  let p = at;
  for (let v of [(field << 3) | 2, len]) {
    while (v >= 0x80) {
      into[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    into[p++] = v;
  }
  return p;
}

export const ERROR_TYPE_URL = "type.googleapis.com/p4.v1.Error";

/** gRPC canonical codes, by name, as numbers. */
export const Code = grpc.status;

/** A per-update error of a failed Write (p4.v1.Error). */
export interface UpdateError {
  readonly code: number;
  readonly message: string;
}

/** google.rpc.Status with one p4.v1.Error per update, binary, for the `grpc-status-details-bin` trailer. */
export function statusDetails(code: number, message: string, errors: readonly UpdateError[]): Buffer {
  const r = protoRoot();
  const error = r.lookupType("p4.v1.Error");
  const status = r.lookupType("google.rpc.Status");
  const details = errors.map((e) => ({
    type_url: ERROR_TYPE_URL, // protobufjs's own google.protobuf.Any keeps the proto field name
    value: error
      .encode(error.fromObject({ canonicalCode: e.code, message: e.message, space: e.code === 0 ? "" : "strata" }))
      .finish(),
  }));
  return Buffer.from(status.encode(status.fromObject({ code, message, details })).finish());
}
