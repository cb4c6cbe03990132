// The contract between the control plane (TypeScript) and the data plane (wasm):
// codes and record layouts, defined once here. scripts/gen-abi.ts writes them
// into assembly/abi.ts as constants on every build (`npm run build:wasm`), so
// the two sides cannot drift. Names are what users see (summary.json, traces),
// so they are kebab-case and stable.

/** The five tables of a member (seed §2.5, §3.1). */
export const TABLE_ROLES = ["acquire", "forward", "transmit", "send", "receive"] as const;
export type TableRole = (typeof TABLE_ROLES)[number];

/** Match kinds; tie-breaks are those of P4Runtime (see assembly/tables/table.ts). */
export const MATCH_KINDS = ["exact", "lpm", "ternary", "range", "optional"] as const;
export type MatchKind = (typeof MATCH_KINDS)[number];

/** Results of table writes. */
export const TABLE_ERRORS = [
  "ok",
  "DuplicateEntry",
  "TableFull",
  "BadMatchKey",
  "NotFound",
  "BadAction",
  "NoSuchTable",
] as const;
export type TableError = (typeof TABLE_ERRORS)[number];

/**
 * The actions a table of each role may hold: the one catalogue of them. ACTIONS (their codes) is made from it, and so
 * are the data plane's write check (assembly/tables/write.ts, through the generated ROLE_ACTIONS), the description's
 * actions (src/description/types.ts) and the P4 actions a table may name (src/p4/device.ts).
 */
export const ROLE_ACTIONS = {
  acquire: [
    "forward", // to the forward table
    "receive", // to the receive table
    "both", // a copy to each (multicast to a member that also forwards)
    "shared-acquire", // to the shared member's acquire table (subduction)
  ],
  forward: [
    "out", // onto these out-links (several = replication)
    "drop",
    "shared-forward", // to the shared member's forward table (subduction)
  ],
  transmit: [
    "physical", // onto the physical link
    "external-session", // into an underlay network's send table (layering)
  ],
  send: [
    "push", // attach this header
  ],
  receive: [
    "deliver", // primitive, to the member's machine
    "external-link", // decapsulate into an overlay's acquire table (layering)
  ],
} as const satisfies Record<TableRole, readonly string[]>;

/** Actions a table row yields, across all five roles, in role order: an action's code is its index. */
export const ACTIONS = [
  "none",
  ...ROLE_ACTIONS.acquire,
  ...ROLE_ACTIONS.forward,
  ...ROLE_ACTIONS.transmit,
  ...ROLE_ACTIONS.send,
  ...ROLE_ACTIONS.receive,
] as const;
export type ActionName = (typeof ACTIONS)[number];
/** The actions a `role` table may hold. */
export type RoleAction<R extends TableRole> = (typeof ROLE_ACTIONS)[R][number];

/** Why a packet was dropped. Every drop has one; each is counted per member. */
export const DROP_REASONS = [
  "none",
  "bad-header", // the packet does not carry a valid header of the network's design
  "acquire-miss",
  "forward-miss",
  "forward-drop", // a forward row said drop
  "transmit-miss",
  "no-link", // transmitted on an identifier with no link attached
  "receive-miss",
  "send-miss", // no send row for the session
  "loop", // hop limit reached
  "replication-limit", // too many copies of one packet
  "too-long", // larger than a packet buffer
  "no-buffer", // every packet buffer is in use (too many modified copies at once)
  "ttl-expired",
  "unsupported", // an action code this stage cannot perform (the control plane never installs one; a guard)
  "link-down", // sent onto a link that is down (an update took it down: docs/updates.md)
  "member-down", // reached a member that is down, or sent by one
] as const;
export type DropReason = (typeof DROP_REASONS)[number];

/** Pipeline stages, as they appear in traces. */
export const STAGES = ["done", "acquire", "forward", "transmit", "link", "receive", "send", "deliver", "drop"] as const;
export type Stage = (typeof STAGES)[number];

/** Trace event kinds (besides table lookups, which carry a stage). */
export const TRACE_KINDS = [
  "none",
  "inject",
  "lookup",
  "link",
  "fork",
  "deliver",
  "drop",
  "exit",
  "push", // layering: an underlay's send row put its header in front (arg: bytes added)
  "pop", // layering: a receive row took its network's header off (arg: bytes taken away)
  "handoff", // to another network's member on the same machine (arg: the stage it enters)
] as const;

/** Link modes (seed §4.3). */
export const LINK_MODES = ["one-way", "two-way", "allcast", "anycast"] as const;

/** Areas of linear memory the TypeScript side reads or fills, for `region(REGION_x)`. */
export const REGIONS = [
  "in-data",
  "in-offset",
  "in-len",
  "in-orig-len",
  "in-sec",
  "in-nsec",
  "in-endpoint",
  "trace-base",
  "trace-pos",
  // The recording ring, once recordingsGather() has grouped it (assembly/pipeline/recording.ts): the recordings with
  // records (u32 each), and per recording its span's end and length (u32).
  "recording-active",
  "recording-span-ends",
  "recording-span-lens",
] as const;

/** Injection kinds: where an input packet enters. */
export const INJECT_KINDS = ["link", "self", "session"] as const;

/** In-link values that are not link identifiers. */
export const LINK_SELF = 0xffff; // sent by the member itself (seed: NoInLink)
export const LINK_SHARED = 0xfffe; // handed over by a shared member (seed: SharedPacket)
export const LINK_NONE = 0xfffd;
/** Largest link identifier a member may use. */
export const LINK_MAX = 0xfff0;

/**
 * A tagged recording (assembly/pipeline/recording.ts): after each record's pcap header, the
 * in-link identifier the packet arrived on (u32, little-endian), then its bytes. Deliveries that
 * a listener wants to see by in-link (P4Runtime PacketIn) go to tagged buffers.
 */
export const RECORDING_TAG_LEN = 4;

/** Table write operations in the command buffer. */
export const WRITE_OPS = ["none", "insert", "modify", "delete"] as const;

/**
 * Record layouts: field → [byte offset, wasm type]. Each ends with a LEN.
 * Drawn as boxes where they are used in assembly/.
 */
export const LAYOUTS = {
  /** One record in the recording ring, followed by LEN bytes: a pcap record (tagged: the in-link after its header). */
  RINGREC: {
    RECORDING: [0, "u32"], // the recording's number
    LEN: [4, "u32"],
    SIZE: [8, ""],
  },
  /** One trace event. */
  EVENT: {
    KIND: [0, "u8"],
    STAGE: [1, "u8"],
    ACTION: [2, "u8"],
    REASON: [3, "u8"],
    PACKET: [4, "u32"],
    COPY: [8, "u32"],
    MEMBER: [12, "i32"],
    ROW: [16, "i32"], // entry index in the stage's table, -1 for a miss
    IDENT: [20, "u32"], // in-link / out-link identifier
    LINK: [24, "i32"],
    ARG: [28, "u32"], // fork: the parent copy; lookup: the table id
    SIZE: [32, ""],
  },
  /** One table write, followed by value[keyLen], mask[keyLen], (range tables: lo[keyLen], hi[keyLen]), data[dataLen]
   * padded to 8. */
  WRITE: {
    OP: [0, "u32"],
    TABLE: [4, "u32"],
    PRIORITY: [8, "i32"],
    ACTION: [12, "u16"],
    COUNT: [14, "u16"], // out: number of ports; push: header length
    ARG: [16, "u32"], // out: the first out-link; external-session / external-link: the network
    ARG2: [20, "u32"],
    DATA_LEN: [24, "u32"],
    ENTRY: [28, "i32"], // result: the entry index written (or -1)
    SIZE: [32, ""],
  },
} as const;
