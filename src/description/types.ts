// A network description after loading and validation: the shape the control
// plane compiles. Every element keeps `at`, its place in the source file, so a
// later stage (compile, install) can still point a user at the line to fix.

import type { ActionName, MatchKind, RoleAction, TableRole } from "../wasm/abi.js";
import type { DesignDef } from "../wire/designs.js";

/** A place in the description: the file, a path inside it, and line:column when known. */
export interface SourceRef {
  readonly file: string;
  /** Dotted path with [index] for lists: "networks.lanA.links[2].from". */
  readonly path: string;
  /** 1-based; 0 when unknown. */
  readonly line: number;
  readonly column: number;
}

export interface Spec {
  readonly file: string;
  readonly networks: readonly NetworkSpec[];
  /** Every link end's identifier and named session's id, written or allocated (./allocate.ts). */
  readonly allocation?: Allocation;
}

export interface NetworkSpec {
  readonly name: string;
  readonly design: DesignDef;
  /** ipv4/ipv6: forwarding decrements TTL / hop limit (and fixes the IPv4 checksum). */
  readonly decrementTtl: boolean;
  readonly members: readonly MemberSpec[];
  readonly links: readonly LinkSpec[];
  /** Groups declared nonlocal (seed §5.1.3): one group across bridged networks; only their links may be layered. */
  readonly nonlocal: ReadonlySet<string>;
  /** Tables by member key; a member with no entry has no rows (and default transmit rows). */
  readonly tables: ReadonlyMap<string, MemberTables>;
  readonly at: SourceRef;
  /** The network's intents (`routes:`, `l2:`, `demands:`), when it has any; their rows are in `tables`. */
  readonly intents?: NetworkIntents;
}

export interface MemberSpec {
  /** The key in `members:` — how the description and the CLI refer to the member. */
  readonly key: string;
  /** The member's unique name in the design's notation, as written ("02:00:00:00:0a:01"). */
  readonly name: string;
  /** The same name as a number (big-endian value of the design's dst field). */
  readonly nameValue: bigint;
  readonly role: "user" | "infra";
  /** Members of different networks on one machine compose (layering, subduction). */
  readonly machine: string;
  readonly at: SourceRef;
}

/** One end of a link inside the network: a member and its local link identifier. */
export interface Endpoint {
  readonly member: string;
  readonly ident: number;
  /** Bridging: the member belongs to this other network (written `network:member.id`). */
  readonly network?: string;
}

export type LinkMode = "one-way" | "two-way" | "allcast" | "anycast";

export interface LinkSpec {
  /** Unique in the network; names its recording links/<network>.<name>.pcap. */
  readonly name: string;
  readonly mode: LinkMode;
  /** The sender, or an external end (outside the network) by name. */
  readonly from: Endpoint | { readonly external: string };
  /** The receivers (several for allcast/anycast), or an external end. */
  readonly to: readonly Endpoint[] | { readonly external: string };
  readonly group?: string;
  /** Record this link's packets in links/ (the description's `record`, default true). */
  readonly record: boolean;
  /** Subduction: the overlay network whose shared member (same name, same machine) shares this link. */
  readonly shared?: string;
  /** Subduction, resolved: this network's shared member at the link's end, and its partner in the overlay. */
  readonly sharedAt?: { readonly member: string; readonly partner: string };
  readonly at: SourceRef;
}

/** A match pattern on one field, values as unsigned big integers of the field's width. */
export type Pattern =
  | { readonly kind: "exact"; readonly value: bigint }
  | { readonly kind: "prefix"; readonly value: bigint; readonly len: number }
  | { readonly kind: "ternary"; readonly value: bigint; readonly mask: bigint }
  | { readonly kind: "range"; readonly lo: bigint; readonly hi: bigint };

/** `in:` of a row: a link identifier, "self" (sent by the member itself) or "shared" (handed over by the shared member
 * of the overlay, SharedForward). */
export type InLink = number | "self" | "shared";

/**
 * What a row's action carries besides its kind (`object`: nothing), for each action of the catalogue (src/wasm/abi.ts
 * ROLE_ACTIONS): a new action there does not type-check until it has an entry here.
 */
interface ActionFields {
  readonly forward: object;
  readonly receive: object;
  readonly both: object;
  readonly "shared-acquire": object; // to the shared member of the overlay (subduction)
  readonly out: { readonly outLinks: readonly number[] };
  readonly drop: object;
  readonly "shared-forward": object; // to the shared member of the underlay (subduction)
  readonly physical: object;
  // ExternalSession (layering): a session of the underlay's member on the same machine
  readonly "external-session": { readonly network: string; readonly session: number; readonly at: SourceRef };
  readonly push: { readonly header: ReadonlyMap<string, bigint> }; // every writable field of the design
  readonly deliver: object;
  // ExternalLink (layering): the overlay's link the packet arrives on
  readonly "external-link": { readonly network: string; readonly ident: number; readonly at: SourceRef };
}

/** The description's word for a catalogue action where it has its own: `via: { session }`, `do: { link }`. */
type Written<A extends ActionName> = A extends "external-session" ? "session" : A extends "external-link" ? "link" : A;

/** A row's action in a `role` table: one of the actions the catalogue gives that role. */
export type ActionOf<R extends TableRole> = {
  [A in RoleAction<R>]: { readonly kind: Written<A> } & ActionFields[A];
}[RoleAction<R>];

export type Action = ActionOf<TableRole>;

export interface RowSpec {
  /** acquire/forward: the in-link; undefined = any. */
  readonly in?: InLink;
  /** acquire/forward/receive: patterns by field name; a missing field is "don't care". */
  readonly match: ReadonlyMap<string, Pattern>;
  /** transmit: the out-link identifier. */
  readonly out?: number;
  /** send: the session identifier. */
  readonly session?: number;
  /** send: the row's name, by which transmit rows of overlays name the session (`via: { session: lanA.NAME }`). */
  readonly name?: string;
  readonly action: Action;
  readonly at: SourceRef;
  /** The intent that made the row (src/intents/); undefined for a row written by hand. */
  readonly intent?: Provenance;
}

/** Where an intent's row came from: the intent (its place in the description) and what the row is for. */
export interface Provenance {
  readonly intent: "routes" | "l2" | "overlays";
  /**
   * The destination the row leads to: a member key, or a prefix a member owns ("r 10.9.0.0/16"); for overlays, the
   * overlay link the row carries and its session's identifier ("s1-s2 (vni 5000)").
   */
  readonly destination: string;
  /** The intent's place (`networks.ip.routes`). */
  readonly at: SourceRef;
}

/** A network's intents as read (src/intents/): what updates recompute and the analysis checks. */
export interface NetworkIntents {
  readonly routes?: RoutesIntent;
  readonly l2?: L2Intent;
  readonly demands: readonly Demand[];
  /** The tables as written by hand, before the intents' rows joined them (what a recomputation merges into). */
  readonly hand: ReadonlyMap<string, MemberTables>;
}

export interface RoutesIntent {
  /** Link name → cost (default 1). */
  readonly costs: ReadonlyMap<string, number>;
  /** Member key → the prefixes it owns besides its name. */
  readonly prefixes: ReadonlyMap<string, readonly { readonly value: bigint; readonly len: number }[]>;
  readonly at: SourceRef;
}

/** The l2 intent (src/intents/l2.ts): Ethernet forwarding to hosts and a flood tree for broadcast. */
export interface L2Intent {
  /** Link name → cost (default 1). */
  readonly costs: ReadonlyMap<string, number>;
  readonly at: SourceRef;
}

/** One pair a `demands:` entry asks for: `from` must reach `to` (member keys). */
export interface Demand {
  readonly from: string;
  readonly to: string;
  readonly at: SourceRef;
}

export interface TableSpec {
  readonly role: TableRole;
  /** Written by the user; otherwise the control plane infers it from the patterns. */
  readonly kind?: MatchKind;
  readonly capacity?: number;
  readonly rows: readonly RowSpec[];
  readonly at: SourceRef;
}

export type MemberTables = Partial<Record<TableRole, TableSpec>>;

// The identifiers of a description, written or allocated (./allocate.ts decides them).

/** A link end's identifier: written in the description, or allocated by strata. */
export interface LinkEndAllocation {
  /** The network that declares the link. */
  readonly network: string;
  /** The link's name in that network. */
  readonly link: string;
  /** The member at this end: its key, or "net:key" for a member of another network (bridging). */
  readonly member: string;
  readonly ident: number;
  /** True when strata chose it; false when the description writes it. */
  readonly allocated: boolean;
}

/** A named send row's session id: written, or allocated by strata. */
export interface SessionAllocation {
  readonly network: string;
  readonly member: string;
  /** The send row's `name`. */
  readonly name: string;
  readonly session: number;
  readonly allocated: boolean;
}

/** The identifier (a VNI, a GRE key) of an overlay link's session, allocated by the overlays intent (src/intents/). */
export interface OverlayIdAllocation {
  /** The overlay network, whose `overlays:` made the link. */
  readonly network: string;
  /** The overlay link's name ("s1-s2"). */
  readonly link: string;
  /** The underlay network whose header carries it, and the field. */
  readonly underlay: string;
  readonly field: string;
  readonly id: number;
}

export interface Allocation {
  readonly links: readonly LinkEndAllocation[];
  readonly sessions: readonly SessionAllocation[];
  /** Present when a network has `overlays:`. */
  readonly overlays?: readonly OverlayIdAllocation[];
}

export const EMPTY_ALLOCATION: Allocation = { links: [], sessions: [] };
