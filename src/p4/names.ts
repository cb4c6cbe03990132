// P4 identifiers from a description's names, and the fixed names of the
// program strata writes (controls, metadata, actions). Every writer (program,
// P4Info, entries, CLI commands) and the importer take names from here.

/** P4_16 keywords (P4_16 spec §6.4): a field or parameter named like one gets a trailing `_`. */
const KEYWORDS = new Set([
  "abstract",
  "action",
  "actions",
  "apply",
  "bool",
  "bit",
  "break",
  "const",
  "continue",
  "control",
  "default",
  "else",
  "entries",
  "enum",
  "error",
  "exit",
  "extern",
  "false",
  "for",
  "header",
  "header_union",
  "if",
  "in",
  "inout",
  "int",
  "key",
  "list",
  "match_kind",
  "out",
  "package",
  "parser",
  "priority",
  "return",
  "select",
  "state",
  "string",
  "struct",
  "switch",
  "table",
  "this",
  "transition",
  "true",
  "tuple",
  "type",
  "typedef",
  "varbit",
  "verify",
  "void",
]);

/** A name usable as a P4 identifier: `-` becomes `_`, a keyword gets a trailing `_`. */
export function p4Ident(name: string): string {
  const id = name.replace(/[^A-Za-z0-9_]/g, "_");
  return KEYWORDS.has(id) ? `${id}_` : id;
}

/** The controls of the program, as P4Info's fully qualified names start. */
export const INGRESS = "StrataIngress";
export const EGRESS = "StrataEgress";

/** Fully qualified name of an object declared in the ingress control. */
export const qualified = (name: string): string => `${INGRESS}.${name}`;

/** The actions every device has, one per strata action (src/wasm/abi.ts ACTIONS), by role. */
export const ACTION_NAMES = {
  acquireForward: "acquire_forward",
  acquireReceive: "acquire_receive",
  acquireBoth: "acquire_both",
  acquireShared: "acquire_shared",
  forwardOut: "forward_out",
  forwardReplicate: "forward_replicate",
  forwardDrop: "forward_drop",
  forwardShared: "forward_shared",
  transmitPhysical: "transmit_physical",
  transmitLocal: "transmit_local",
  transmitSession: "transmit_session",
  transmitNoLink: "transmit_no_link",
  receiveDeliver: "receive_deliver",
  receivePop: "receive_pop",
} as const;

/** A table's miss action: drop, with the table's drop reason. */
export const missAction = (role: string): string => `${role}_miss`;

/** The push action of a design (its parameters are the design's writable fields). */
export const pushAction = (design: string): string => `push_${design}`;

/** Parameter widths shared by the program and P4Info. */
export const MEMBER_BITS = 8;
export const LINK_BITS = 16;
export const PORT_BITS = 9; // v1model PortId_t
export const SESSION_BITS = 32;
export const GROUP_BITS = 16; // v1model mcast_grp
