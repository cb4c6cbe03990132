// The shape of a description once it has passed schema/strata.schema.json: what
// the semantic checks may rely on. Keep in step with the schema (the tests load
// descriptions through both).

import type { MatchKind } from "../wasm/abi.js";
import type { LinkMode } from "./types.js";

export interface RawSpec {
  readonly networks: Readonly<Record<string, RawNetwork>>;
}

export interface RawNetwork {
  readonly header: string;
  readonly ttl?: "decrement" | "keep";
  readonly members: Readonly<Record<string, RawMember>>;
  readonly links?: readonly RawLink[];
  readonly nonlocal?: readonly string[];
  readonly tables?: Readonly<Record<string, RawMemberTables>>;
  /** Intent (src/intents/routes.ts): shortest-path forwarding compiled to rows. */
  readonly routes?: RawRoutes;
  /** Intent (src/intents/l2.ts): Ethernet forwarding to hosts and a flood tree for broadcast. */
  readonly l2?: RawL2;
  /** Intent (src/intents/overlays.ts): a full mesh of overlay links, each a session of the underlay. */
  readonly overlays?: RawOverlays;
  /** Intent (src/intents/demands.ts): who must reach whom. */
  readonly demands?: readonly RawDemand[];
}

export interface RawRoutes {
  /** Link name → cost (default 1). */
  readonly costs?: Readonly<Record<string, number>>;
  /** Member key → prefixes it owns besides its name (routed to it, delivered there). */
  readonly prefixes?: Readonly<Record<string, readonly string[]>>;
}

export interface RawL2 {
  /** Link name → cost (default 1). */
  readonly costs?: Readonly<Record<string, number>>;
}

export interface RawOverlays {
  /** The mesh: its members (default "*"). */
  readonly members?: RawMemberSet;
  /** The network whose sessions carry the overlay links. */
  readonly underlay: string;
  /** vxlan, gre, ip-in-ip. */
  readonly encapsulation: string;
  /** "LO..HI": the session identifiers (VNIs, GRE keys) the intent may allocate. */
  readonly ids?: string;
}

/** Members: a key, a list of keys, or "*" (every member of the network). */
export type RawMemberSet = string | readonly string[];

export interface RawDemand {
  readonly from: RawMemberSet;
  readonly to: RawMemberSet;
}

export interface RawMember {
  readonly name: string | number;
  readonly role?: "user" | "infra";
  readonly machine?: string;
}

export interface RawLink {
  readonly from?: string;
  readonly to?: string | readonly string[];
  readonly external?: string;
  readonly mode?: LinkMode;
  readonly group?: string;
  readonly name?: string;
  readonly record?: boolean;
  /** The old name of `record`, read the same way (with a note). */
  readonly capture?: boolean;
  readonly shared?: string;
}

/** A table is a list of rows, or the explicit form with a match kind and a capacity. */
export type RawTable<Row> =
  readonly Row[] | { readonly kind?: MatchKind; readonly capacity?: number; readonly rows: readonly Row[] };

export type RawValues = Readonly<Record<string, string | number>>;

/** A link at a member: its identifier, or the link's name (the way to name a link whose identifier is allocated). */
export type RawLinkRef = number | string;

export interface RawAcquireRow {
  readonly in?: RawLinkRef;
  readonly match?: RawValues;
  readonly do: "forward" | "receive" | "both" | "shared";
}

export interface RawForwardRow {
  readonly in?: RawLinkRef;
  readonly match?: RawValues;
  readonly out: RawLinkRef | readonly RawLinkRef[];
}

export interface RawTransmitRow {
  readonly out: RawLinkRef;
  readonly via?: "physical" | { readonly session: string };
}

export interface RawSendRow {
  /** Left out: allocated (then `name` is required). */
  readonly session?: number;
  readonly name?: string;
  readonly header?: RawValues;
}

export interface RawReceiveRow {
  readonly match?: RawValues;
  readonly do?: "deliver" | { readonly link: string };
}

export interface RawMemberTables {
  readonly acquire?: RawTable<RawAcquireRow>;
  readonly forward?: RawTable<RawForwardRow>;
  readonly transmit?: RawTable<RawTransmitRow>;
  readonly send?: RawTable<RawSendRow>;
  readonly receive?: RawTable<RawReceiveRow>;
}
