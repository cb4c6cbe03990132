// The part of P4Runtime's protobuf definitions (p4/config/v1/p4info.proto,
// p4/v1/p4runtime.proto) that strata writes, as a protobufjs schema: field
// names, numbers and types exactly as the official files have them. With it,
// protobufjs turns the messages strata builds in the protobuf JSON mapping
// into the binary (entries.bin) and text (p4info.txtpb) forms. The tests load
// the official .proto files and check that every field here is the same there.

import protobuf from "protobufjs";
import protojson from "protobufjs/ext/protojson.js";
import textformat from "protobufjs/ext/textformat.js";

type Fields = Record<string, { type: string; id: number; rule?: "repeated" }>;
const msg = (fields: Fields, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ fields, ...extra });
const oneof = (name: string, members: string[]): Record<string, unknown> => ({
  oneofs: { [name]: { oneof: members } },
});

const P4INFO = {
  P4Info: msg({
    pkg_info: { type: "PkgInfo", id: 1 },
    tables: { type: "Table", id: 2, rule: "repeated" },
    actions: { type: "Action", id: 3, rule: "repeated" },
    action_profiles: { type: "ActionProfile", id: 4, rule: "repeated" },
    direct_counters: { type: "DirectCounter", id: 6, rule: "repeated" },
    controller_packet_metadata: { type: "ControllerPacketMetadata", id: 9, rule: "repeated" },
  }),
  Documentation: msg({ brief: { type: "string", id: 1 }, description: { type: "string", id: 2 } }),
  PkgInfo: msg({
    name: { type: "string", id: 1 },
    version: { type: "string", id: 2 },
    doc: { type: "Documentation", id: 3 },
    annotations: { type: "string", id: 4, rule: "repeated" },
    arch: { type: "string", id: 5 },
    organization: { type: "string", id: 6 },
  }),
  Preamble: msg({
    id: { type: "uint32", id: 1 },
    name: { type: "string", id: 2 },
    alias: { type: "string", id: 3 },
    annotations: { type: "string", id: 4, rule: "repeated" },
    doc: { type: "Documentation", id: 5 },
  }),
  MatchField: msg(
    {
      id: { type: "uint32", id: 1 },
      name: { type: "string", id: 2 },
      annotations: { type: "string", id: 3, rule: "repeated" },
      bitwidth: { type: "int32", id: 4 },
      match_type: { type: "MatchType", id: 5 },
      doc: { type: "Documentation", id: 6 },
    },
    {
      ...oneof("match", ["match_type"]),
      nested: { MatchType: { values: { UNSPECIFIED: 0, EXACT: 2, LPM: 3, TERNARY: 4, RANGE: 5, OPTIONAL: 6 } } },
    },
  ),
  Table: msg({
    preamble: { type: "Preamble", id: 1 },
    match_fields: { type: "MatchField", id: 2, rule: "repeated" },
    action_refs: { type: "ActionRef", id: 3, rule: "repeated" },
    const_default_action_id: { type: "uint32", id: 4 },
    initial_default_action: { type: "TableActionCall", id: 5 },
    implementation_id: { type: "uint32", id: 6 },
    direct_resource_ids: { type: "uint32", id: 7, rule: "repeated" },
    size: { type: "int64", id: 8 },
  }),
  TableActionCall: msg(
    { action_id: { type: "uint32", id: 1 }, arguments: { type: "Argument", id: 4, rule: "repeated" } },
    { nested: { Argument: msg({ param_id: { type: "uint32", id: 2 }, value: { type: "bytes", id: 3 } }) } },
  ),
  ActionRef: msg(
    {
      id: { type: "uint32", id: 1 },
      scope: { type: "Scope", id: 3 },
      annotations: { type: "string", id: 2, rule: "repeated" },
    },
    { nested: { Scope: { values: { TABLE_AND_DEFAULT: 0, TABLE_ONLY: 1, DEFAULT_ONLY: 2 } } } },
  ),
  Action: msg(
    { preamble: { type: "Preamble", id: 1 }, params: { type: "Param", id: 2, rule: "repeated" } },
    {
      nested: {
        Param: msg({
          id: { type: "uint32", id: 1 },
          name: { type: "string", id: 2 },
          bitwidth: { type: "int32", id: 4 },
          doc: { type: "Documentation", id: 5 },
        }),
      },
    },
  ),
  ActionProfile: msg({
    preamble: { type: "Preamble", id: 1 },
    table_ids: { type: "uint32", id: 2, rule: "repeated" },
    with_selector: { type: "bool", id: 3 },
    size: { type: "int64", id: 4 },
    max_group_size: { type: "int32", id: 5 },
  }),
  CounterSpec: msg(
    { unit: { type: "Unit", id: 1 } },
    { nested: { Unit: { values: { UNSPECIFIED: 0, BYTES: 1, PACKETS: 2, BOTH: 3 } } } },
  ),
  DirectCounter: msg({
    preamble: { type: "Preamble", id: 1 },
    spec: { type: "CounterSpec", id: 2 },
    direct_table_id: { type: "uint32", id: 3 },
  }),
  ControllerPacketMetadata: msg(
    { preamble: { type: "Preamble", id: 1 }, metadata: { type: "Metadata", id: 2, rule: "repeated" } },
    {
      nested: {
        Metadata: msg({
          id: { type: "uint32", id: 1 },
          name: { type: "string", id: 2 },
          bitwidth: { type: "int32", id: 4 },
        }),
      },
    },
  ),
};

const RUNTIME = {
  WriteRequest: msg({
    device_id: { type: "uint64", id: 1 },
    election_id: { type: "Uint128", id: 3 },
    updates: { type: "Update", id: 4, rule: "repeated" },
  }),
  Uint128: msg({ high: { type: "uint64", id: 1 }, low: { type: "uint64", id: 2 } }),
  Update: msg(
    { type: { type: "Type", id: 1 }, entity: { type: "Entity", id: 2 } },
    { nested: { Type: { values: { UNSPECIFIED: 0, INSERT: 1, MODIFY: 2, DELETE: 3 } } } },
  ),
  Entity: msg(
    {
      table_entry: { type: "TableEntry", id: 2 },
      action_profile_member: { type: "ActionProfileMember", id: 3 },
      action_profile_group: { type: "ActionProfileGroup", id: 4 },
      packet_replication_engine_entry: { type: "PacketReplicationEngineEntry", id: 9 },
    },
    oneof("entity", [
      "table_entry",
      "action_profile_member",
      "action_profile_group",
      "packet_replication_engine_entry",
    ]),
  ),
  TableEntry: msg({
    table_id: { type: "uint32", id: 1 },
    match: { type: "FieldMatch", id: 2, rule: "repeated" },
    action: { type: "TableAction", id: 3 },
    priority: { type: "int32", id: 4 },
    is_default_action: { type: "bool", id: 8 },
  }),
  FieldMatch: msg(
    {
      field_id: { type: "uint32", id: 1 },
      exact: { type: "Exact", id: 2 },
      ternary: { type: "Ternary", id: 3 },
      lpm: { type: "LPM", id: 4 },
      range: { type: "Range", id: 6 },
      optional: { type: "Optional", id: 7 },
    },
    {
      ...oneof("field_match_type", ["exact", "ternary", "lpm", "range", "optional"]),
      nested: {
        Exact: msg({ value: { type: "bytes", id: 1 } }),
        Ternary: msg({ value: { type: "bytes", id: 1 }, mask: { type: "bytes", id: 2 } }),
        LPM: msg({ value: { type: "bytes", id: 1 }, prefix_len: { type: "int32", id: 2 } }),
        Range: msg({ low: { type: "bytes", id: 1 }, high: { type: "bytes", id: 2 } }),
        Optional: msg({ value: { type: "bytes", id: 1 } }),
      },
    },
  ),
  TableAction: msg(
    {
      action: { type: "Action", id: 1 },
      action_profile_member_id: { type: "uint32", id: 2 },
      action_profile_group_id: { type: "uint32", id: 3 },
    },
    oneof("type", ["action", "action_profile_member_id", "action_profile_group_id"]),
  ),
  Action: msg(
    { action_id: { type: "uint32", id: 1 }, params: { type: "Param", id: 4, rule: "repeated" } },
    { nested: { Param: msg({ param_id: { type: "uint32", id: 2 }, value: { type: "bytes", id: 3 } }) } },
  ),
  ActionProfileMember: msg({
    action_profile_id: { type: "uint32", id: 1 },
    member_id: { type: "uint32", id: 2 },
    action: { type: "Action", id: 3 },
  }),
  ActionProfileGroup: msg(
    {
      action_profile_id: { type: "uint32", id: 1 },
      group_id: { type: "uint32", id: 2 },
      members: { type: "Member", id: 3, rule: "repeated" },
      max_size: { type: "int32", id: 4 },
    },
    { nested: { Member: msg({ member_id: { type: "uint32", id: 1 }, weight: { type: "int32", id: 2 } }) } },
  ),
  PacketReplicationEngineEntry: msg(
    {
      multicast_group_entry: { type: "MulticastGroupEntry", id: 1 },
      clone_session_entry: { type: "CloneSessionEntry", id: 2 },
    },
    oneof("type", ["multicast_group_entry", "clone_session_entry"]),
  ),
  Replica: msg({ port: { type: "bytes", id: 3 }, instance: { type: "uint32", id: 2 } }, oneof("port_kind", ["port"])),
  MulticastGroupEntry: msg({
    multicast_group_id: { type: "uint32", id: 1 },
    replicas: { type: "Replica", id: 2, rule: "repeated" },
  }),
  CloneSessionEntry: msg({
    session_id: { type: "uint32", id: 1 },
    replicas: { type: "Replica", id: 2, rule: "repeated" },
    class_of_service: { type: "uint32", id: 3 },
    packet_length_bytes: { type: "int32", id: 4 },
  }),
};

/** The schema, as a protobufjs reflection root. */
export const SCHEMA = protobuf.Root.fromJSON({
  nested: { p4: { nested: { config: { nested: { v1: { nested: P4INFO } } }, v1: { nested: RUNTIME } } } },
});

export const P4INFO_TYPE = SCHEMA.lookupType("p4.config.v1.P4Info");
export const WRITE_REQUEST_TYPE = SCHEMA.lookupType("p4.v1.WriteRequest");

/** A message in the protobuf JSON mapping, checked against the schema (unknown fields are errors). */
export type JsonMessage = { readonly [key: string]: unknown };

/** The three forms of one message: JSON (canonical field order, defaults omitted), binary, text. */
export function encodings(
  type: protobuf.Type,
  json: JsonMessage,
): { json: JsonMessage; binary: Uint8Array; text: string } {
  const message = protojson.fromJson(type, json);
  return {
    json: protojson.toJson(type, message) as JsonMessage,
    binary: type.encode(message).finish(),
    text: textformat.toText(type, message),
  };
}

/** A message read back from the JSON mapping (unknown fields are errors), as plain JSON again. */
export function parseJson(type: protobuf.Type, json: unknown): JsonMessage {
  return protojson.toJson(type, protojson.fromJson(type, json)) as JsonMessage;
}
