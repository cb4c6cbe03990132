// The official P4Runtime definitions (proto/p4runtime/, shipped in the package) as one
// protobufjs root, and nothing of gRPC: `strata export p4` encodes its files with it, the
// server's own encoders (./proto.ts) frame messages with it, and scripts/gen-p4runtime-types.ts
// writes ./messages.ts from it.

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";

/** proto/p4runtime/, found relative to this file in src/ and in dist/src/. */
export function protoDir(): string {
  const here = fileURLToPath(import.meta.url);
  const root = here.includes("/dist/")
    ? here.slice(0, here.lastIndexOf("/dist/"))
    : here.slice(0, here.lastIndexOf("/src/"));
  return join(root, "proto", "p4runtime");
}

let root: protobuf.Root | undefined;

/** The definitions as a protobufjs root: field names lowerCamelCase, as in ./messages.ts and the JSON mapping. */
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
