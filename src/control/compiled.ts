// What the control plane compiles a description into: numbered networks,
// members, one-way links and tables with their entries. The installer writes
// it into the data plane; traces and summaries name things through it. The
// reference interpreter (src/model) takes only its numbering, never its entries.

import type { LinkMode, LinkSpec, MemberSpec, NetworkSpec, SourceRef, Spec, TableSpec } from "../description/types.js";
import type { TableRole } from "../wasm/abi.js";
import type { EntryAction, EntryMatch, TableLayout } from "../wasm/tables.js";
import type { KeyLayout } from "../wire/designs.js";

/** A table's capacity when its description gives none, and it has no more rows than that. */
export const DEFAULT_CAPACITY = 1024;

/** A table's capacity: the description's, else room for its rows and at least DEFAULT_CAPACITY. */
export function capacityOf(t: TableSpec | undefined, rows: number): number {
  return t?.capacity ?? Math.max(DEFAULT_CAPACITY, rows);
}

export interface CompiledSpec {
  readonly spec: Spec;
  readonly networks: readonly CompiledNetwork[];
  readonly members: readonly CompiledMember[];
  readonly links: readonly CompiledLink[];
  readonly tables: readonly CompiledTable[];
  readonly machines: readonly string[];
  /** Subduction: out-links the overlay's shared member sends on, which are links of the underlay. */
  readonly sharedOutLinks: readonly SharedOutLink[];
  /** The most copies one step can make: out-links of a row, receivers of a link. */
  readonly maxFanout: number;
}

export interface CompiledNetwork {
  readonly index: number;
  readonly name: string;
  readonly spec: NetworkSpec;
  readonly layout: KeyLayout;
}

export interface CompiledMember {
  readonly index: number;
  readonly network: number;
  readonly key: string;
  /** "network.member", how outputs and traces name it. */
  readonly qualified: string;
  readonly machine: number;
  /** One more than the largest identifier the member sends on. */
  readonly nOutLinks: number;
  readonly tables: Partial<Record<TableRole, CompiledTable>>;
  readonly spec: MemberSpec;
}

/** Member `member` transmits on link `link` with its identifier `outLink` (a shared link of another network). */
export interface SharedOutLink {
  readonly member: number;
  readonly outLink: number;
  readonly link: number;
}

export interface Receiver {
  readonly member: number;
  readonly inLink: number;
}

/** One direction of a declared link. */
export interface CompiledLink {
  readonly index: number;
  readonly network: number;
  /** The declared link's name; both directions of a two-way link share it. */
  readonly name: string;
  /** "network.name", the link's name across networks (its recording is links/<qualified>.pcap). */
  readonly qualified: string;
  /** Whether its packets are recorded (the description's `record`, default true). */
  readonly recorded: boolean;
  /** Member index, or −1 when the sender is outside the network. */
  readonly sender: number;
  readonly senderOutLink: number;
  readonly mode: LinkMode;
  /** Empty when the link leaves the network. */
  readonly receivers: readonly Receiver[];
  /** The external end's name, when one end is outside. */
  readonly external?: string;
  readonly spec: LinkSpec;
}

export interface CompiledTable extends TableLayout {
  readonly member: number;
  readonly rows: readonly CompiledRow[];
  readonly spec?: TableSpec;
}

export interface CompiledRow {
  /** Index in the description's rows, or −1 for a row the compiler added. */
  readonly row: number;
  readonly match: EntryMatch;
  readonly action: EntryAction;
  /** Out-link identifiers (forward rows), for people and the reference. */
  readonly outLinks: readonly number[];
  readonly at: SourceRef | null;
  /** The row as a person would write it: "in 1, dst 02:00:00:00:00:02 → out 2". */
  readonly text: string;
}
