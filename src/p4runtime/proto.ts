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
