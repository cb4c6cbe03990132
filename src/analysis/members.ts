// What the walks read of an analysis (./analysis.ts), apart from it so that the
// walks (./walk.ts) and what the analysis works out with them (./costs.ts) do
// not import the class that holds them: a member with its tables indexed by
// header class, the groups of members the relations range over, and a send
// row as the traffic model reads it (a session's header and its classes).

import type { RowSpec, TableSpec } from "../description/types.js";
import type { Member, Topology } from "../model/topology.js";
import type { HeaderSpace } from "./header-space.js";
import { NO_HOPS, oneHop } from "./hops.js";
import type { TableIndex } from "./tables.js";

export type HeaderRole = "acquire" | "forward" | "receive";
export const HEADER_ROLES: readonly HeaderRole[] = ["acquire", "forward", "receive"];

/** A table keyed by an identifier (transmit: out-link; send: session): its rows, and which are in. */
export interface KeyedTable {
  spec: TableSpec;
  active: boolean[];
}

/** A keyed table's active row for one key, and its index in the table. */
export interface KeyedRow {
  readonly index: number;
  readonly row: RowSpec;
}

function keyedRow(t: KeyedTable | undefined, key: (row: RowSpec) => boolean): KeyedRow | undefined {
  const index = t === undefined ? -1 : t.spec.rows.findIndex((r, k) => key(r) && t.active[k] === true);
  const row = t?.spec.rows[index];
  return row === undefined ? undefined : { index, row };
}

/** The transmit row that says how the member leaves on `outLink` (undefined: none, or no transmit table). */
export function transmitRow(v: MemberView, outLink: number): KeyedRow | undefined {
  return keyedRow(v.transmit, (r) => r.out === outLink);
}

export interface MemberView {
  readonly index: number;
  readonly member: Member;
  readonly space: HeaderSpace;
  /** Forwarding lowers the hop limit (`ttl: decrement`). */
  readonly decrements: boolean;
  readonly tables: Partial<Record<HeaderRole, TableIndex>>;
  readonly transmit: KeyedTable | undefined;
  readonly send: KeyedTable | undefined;
  /** Identifiers the member receives on: its links' and, at a shared member, the shared links its partner receives on.
   * */
  readonly inLinks: readonly number[];
  /** Subduction: the shared member of the same name in the other network. */
  readonly partner: number | undefined;
}

export type ComponentKind = "network" | "bridged" | "subduction";

export interface Component {
  readonly kind: ComponentKind;
  /** "lan", "lanA+lanB", "core+tenant". */
  readonly name: string;
  readonly networks: readonly string[];
  readonly members: readonly number[];
  /** Member index → 1 when in the component. */
  readonly has: Uint8Array;
  /** Hand-overs between shared members are steps (subduction). */
  readonly shared: boolean;
  readonly space: HeaderSpace;
  /** Some member lowers the hop limit when forwarding. */
  readonly decrements: boolean;
}

/** A component as the reports name it: "network lan", "bridged set lanA+lanB", "subduction core+tenant". */
export function componentName(c: Component): string {
  return `${c.kind === "bridged" ? "bridged set" : c.kind} ${c.name}`;
}

/** What a walk reads of an analysis. */
export interface Walkable {
  readonly topology: Topology;
  /** Links a packet may cross (the data plane's hop limit). */
  readonly hopLimit: number;
  member(i: number): MemberView;
  /** The components a member is in. */
  componentsOf(member: number): readonly Component[];
  /** Links a crossing of `link` counts for its receiver number `receiver` (./costs.ts). */
  linkCost(link: number, receiver: number): number;
  /** The component's links from outside (no sender). */
  inbound(c: Component): readonly number[];
  /** The in-links of a member a loop can come in by. */
  loopLinks(member: number): readonly number[];
  /** An update took the link down: it carries nothing (docs/updates.md). */
  linkDown(link: number): boolean;
  /** An update took the member down: it drops what reaches it and what it forwards or sends. */
  memberDown(member: number): boolean;
}

/** The component a member is analysed in for what crosses networks: its subduction group, else its bridged set. */
export function largestOf(a: Walkable, member: number): Component | undefined {
  const cs = a.componentsOf(member);
  return cs.find((c) => c.kind === "subduction") ?? cs.find((c) => c.kind === "bridged") ?? cs[0];
}

/** A header a member's send row attaches: the traffic model's `sendTable` entry. */
export interface Session {
  readonly member: number;
  /** The send row's index. */
  readonly row: number;
  readonly session: number;
  /** Every field the row writes; read-only ones (IPv4 ports) are whatever the payload holds. */
  readonly header: ReadonlyMap<string, bigint>;
  /** The header classes the header is in (several when read-only fields matter to some row). */
  readonly atoms: readonly number[];
  readonly hops: bigint;
}

/** The member's session `session`: its send row's header (undefined: the member has no send row for it). */
export function sessionAt(v: MemberView, session: number): Session | undefined {
  const send = keyedRow(v.send, (r) => r.session === session);
  const action = send?.row.action;
  return send === undefined || action?.kind !== "push" ? undefined : sessionOf(v, send.index, session, action.header);
}

export function sessionOf(v: MemberView, row: number, session: number, header: ReadonlyMap<string, bigint>): Session {
  const hop = v.space.hopField === undefined ? undefined : header.get(v.space.hopField.name);
  return {
    member: v.index,
    row,
    session,
    header,
    atoms: v.space.classesWhere(header),
    hops: hop === undefined ? NO_HOPS : oneHop(hop),
  };
}

/** Whether some active row of the member's header tables takes only some hop-limit values (it matches the TTL). */
export function takesSomeHops(v: MemberView): boolean {
  return HEADER_ROLES.some((role) => {
    const t = v.tables[role];
    return t !== undefined && t.rows.some((r, i) => t.isActive(i) && r.hops !== t.space.allHops);
  });
}
