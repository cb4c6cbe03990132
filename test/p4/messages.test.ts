// The messages the export builds (src/p4/p4info.ts, src/p4/entries.ts, typed by
// src/p4runtime/messages.ts) are the official definitions' messages exactly as gRPC decodes
// them: for every machine of every example and exporting fixture, the server's own service
// (proto/p4runtime/ through @grpc/proto-loader) encodes each and decodes it back unchanged — no
// field the definitions lack (it would not be encoded), none of another type, bytes as Buffers,
// defaults left out, every oneof named. The server stages the WriteRequest's updates as built,
// so they are what a controller's Write of entries.bin hands it; entries.bin decodes to them.

import { describe, expect, it } from "vitest";
import { p4runtimeService } from "../../src/p4runtime/proto.js";
import { ALL_MACHINES } from "./helpers/examples.js";

const service = p4runtimeService();
const CASES = ALL_MACHINES.map(({ spec, ex }) => ({ spec, machine: ex.manifest.machine, ex }));

describe.each(CASES)("$spec machine $machine: the export's messages", ({ ex }) => {
  const { p4info, entries } = ex.messages;

  it("the P4Info decodes as built", () => {
    const { SetForwardingPipelineConfig: set } = service;
    expect(set.requestDeserialize(set.requestSerialize({ config: { p4info } })).config?.p4info).toStrictEqual(p4info);
  });

  it("the WriteRequest decodes as built", () => {
    expect(service.Write.requestDeserialize(service.Write.requestSerialize(entries))).toStrictEqual(entries);
  });

  it("entries.bin is the WriteRequest", () => {
    expect(service.Write.requestDeserialize(Buffer.from(ex.files["entries.bin"]))).toStrictEqual(entries);
  });
});
