// The official P4Runtime definitions (proto/p4runtime/, shipped in the package),
// loaded twice: by @grpc/proto-loader for the service and the messages gRPC
// carries, and by protobufjs for what the server encodes itself — the
// google.rpc.Status of a failed Write with one p4.v1.Error per update in its
// details, and P4Info messages compared byte for byte.

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as loader from "@grpc/proto-loader";
import protobuf from "protobufjs";

/** proto/p4runtime/, found relative to this file in src/ and in dist/src/. */
export function protoDir(): string {
  const here = fileURLToPath(import.meta.url);
  const root = here.includes("/dist/") ? here.slice(0, here.lastIndexOf("/dist/")) : here.slice(0, here.lastIndexOf("/src/"));
  return join(root, "proto", "p4runtime");
}

/**
 * How messages look in the handlers: lowerCamelCase fields (as in the protobuf JSON mapping
 * and entries.json), 64-bit integers as decimal strings, enums by name, bytes as Buffers,
 * a `oneof` named by a field of its own, and unset fields absent.
 */
export const LOADER_OPTIONS: loader.Options = { keepCase: false, longs: String, enums: String, bytes: Buffer, defaults: false, oneofs: true };

let service: grpc.ServiceDefinition | undefined;

/** The p4.v1.P4Runtime service definition. */
export function p4runtimeService(): grpc.ServiceDefinition {
  if (service === undefined) {
    const definition = loader.loadSync("p4/v1/p4runtime.proto", { ...LOADER_OPTIONS, includeDirs: [protoDir()] });
    const pkg = grpc.loadPackageDefinition(definition) as unknown as { p4: { v1: { P4Runtime: { service: grpc.ServiceDefinition } } } };
    service = pkg.p4.v1.P4Runtime.service;
  }
  return service;
}

let root: protobuf.Root | undefined;

/** The same definitions as a protobufjs root (lowerCamelCase names). */
export function protoRoot(): protobuf.Root {
  if (root === undefined) {
    const dir = protoDir();
    const r = new protobuf.Root();
    r.resolvePath = (_origin, target) => (target.startsWith("google/protobuf/") ? target : join(dir, target));
    r.loadSync(["p4/v1/p4runtime.proto", "google/rpc/status.proto"]);
    r.resolveAll();
    root = r;
  }
  return root;
}

/**
 * The service as strata's server serves it: Read's responses go out as the bytes
 * readResponses() made, so the server sizes each message itself.
 */
export function servedDefinition(): grpc.ServiceDefinition {
  const s = p4runtimeService();
  const read = s.Read;
  if (read === undefined) throw new Error("the P4Runtime definitions have no Read");
  return { ...s, Read: { ...read, responseSerialize: (b: Buffer) => b } };
}

/** The largest ReadResponse the server sends: what a gRPC client takes by default (4 MiB), less room for gRPC's own framing. */
export const READ_RESPONSE_MAX = 4 * 1024 * 1024 - 1024;

/** The messages the server encodes itself, and the field numbers it frames them with. */
let codec: { entity: protobuf.Type; tableEntry: protobuf.Type; tableEntryField: number; entitiesField: number } | undefined;
function entityCodec(): NonNullable<typeof codec> {
  if (codec === undefined) {
    const r = protoRoot();
    const entity = r.lookupType("p4.v1.Entity");
    const field = (t: protobuf.Type, name: string): number => {
      const f = t.fields[name];
      if (f === undefined) throw new Error(`${t.fullName} has no field ${name}`);
      return f.id;
    };
    codec = { entity, tableEntry: r.lookupType("p4.v1.TableEntry"), tableEntryField: field(entity, "tableEntry"), entitiesField: field(r.lookupType("p4.v1.ReadResponse"), "entities") };
  }
  return codec;
}

type Message = { readonly [key: string]: unknown };

/** A p4.v1.Entity (as the handlers hold messages), encoded. */
export function encodeEntity(m: Message): Uint8Array {
  const { entity } = entityCodec();
  return entity.encode(entity.fromObject(m)).finish();
}

/** A p4.v1.TableEntry, encoded: what a server keeps to answer reads of the entry without encoding it again. */
export function encodeTableEntry(m: Message): Uint8Array {
  const { tableEntry } = entityCodec();
  return tableEntry.encode(tableEntry.fromObject(m)).finish();
}

/**
 * An Entity holding an encoded TableEntry, with `more` of its fields (counter data) after it:
 * the fields of a message may come in any order, and these are not among the first.
 */
export function tableEntryEntity(tableEntry: Uint8Array, more?: Message): Uint8Array {
  const c = entityCodec();
  const tail = more === undefined ? undefined : c.tableEntry.encode(c.tableEntry.fromObject(more)).finish();
  const len = tableEntry.length + (tail?.length ?? 0);
  const head = protobuf.Writer.create().uint32((c.tableEntryField << 3) | 2).uint32(len).finish();
  const out = new Uint8Array(head.length + len);
  out.set(head, 0);
  out.set(tableEntry, head.length);
  if (tail !== undefined) out.set(tail, head.length + tableEntry.length);
  return out;
}

/**
 * Encoded entities in ReadResponse messages of at most `max` bytes each (§13.3: a server may
 * split a Read's entities across responses); an entity larger than `max` goes alone. Always at
 * least one response.
 */
export function readResponses(entities: readonly Uint8Array[], max: number): Buffer[] {
  const tag = (entityCodec().entitiesField << 3) | 2;
  const out: Buffer[] = [];
  let w = protobuf.Writer.create();
  let size = 0;
  for (const bytes of entities) {
    const framed = 1 + varintLen(bytes.length) + bytes.length;
    if (size > 0 && size + framed > max) {
      out.push(asBuffer(w.finish()));
      w = protobuf.Writer.create();
      size = 0;
    }
    w.uint32(tag).bytes(bytes);
    size += framed;
  }
  out.push(asBuffer(w.finish()));
  return out;
}

const asBuffer = (b: Uint8Array): Buffer => (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength));
const varintLen = (n: number): number => (n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5);

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
    value: error.encode(error.fromObject({ canonicalCode: e.code, message: e.message, space: e.code === 0 ? "" : "strata" })).finish(),
  }));
  return Buffer.from(status.encode(status.fromObject({ code, message, details })).finish());
}
