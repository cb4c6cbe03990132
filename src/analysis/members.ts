// What the walks read of an analysis (./analysis.ts), apart from it so that the
// walks (./walk.ts) and what the analysis works out with them (./costs.ts) do
// not import the class that holds them: a member with its tables indexed by
// header class, the groups of members the relations range over, and a send
// row as the traffic model reads it (a session's header and its classes).

import type { RowSpec, TableSpec } from "../description/types.js";
import type { Member, Topology } from "../model/topology.js";
import type { OtherRow } from "./entry-rows.js";
import type { HeaderSpace } from "./header-space.js";
import { NO_HOPS, oneHop } from "./hops.js";
import type { TableIndex } from "./tables.js";

export type HeaderRole = "acquire" | "forward" | "receive";
export const HEADER_ROLES: readonly HeaderRole[] = ["acquire", "forward", "receive"];

/** A table keyed by an identifier (transmit: out-link; send: session): its rows, and which are in, and the entries
 * beyond them (a controller's, ./entry-rows.ts), numbered after them. */
export interface KeyedTable {
  spec: TableSpec;
  active: boolean[];
  others: readonly OtherRow[];
}

/** A keyed table's active row for one key, and its index in the table. */
export interface KeyedRow {
  readonly index: number;
  readonly row: RowSpec;
}

function keyedRow(t: KeyedTable | undefined, key: (row: RowSpec) => boolean): KeyedRow | undefined {
  if (t === undefined) return undefined;
  const index = t.spec.rows.findIndex((r, k) => key(r) && t.active[k] === true);
  const row = t.spec.rows[index];
  if (row !== undefined) return { index, row };
  const k = t.others.length === 0 ? -1 : t.others.findIndex((o) => key(o.row));
  const other = t.others[k];
  return other === undefined ? undefined : { index: t.spec.rows.length + k, row: other.row };
}

/** A keyed table's active rows, the entries beyond the description's after its rows. */
export function keyedRows(t: KeyedTable): KeyedRow[] {
  const out: KeyedRow[] = [];
  t.spec.rows.forEach((row, index) => {
    if (t.active[index] === true) out.push({ index, row });
  });
  t.others.forEach((o, k) => out.push({ index: t.spec.rows.length + k, row: o.row }));
  return out;
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
  /** Undefined: the description writes none and the data plane holds the defaults (every out-link physical); a
   * controller's change to those makes it a table of its entries (Analysis.setOthers). */
  transmit: KeyedTable | undefined;
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

export type KeyedRole = "transmit" | "send";

/** The spec of a transmit table the description does not write, once a controller changed its defaults: its entries
 * are all beyond the description's rows. */
export const DEFAULTS: TableSpec = { role: "transmit", rows: [], at: { file: "", path: "", line: 0, column: 0 } };

/**
 * Makes the entries beyond the description's rows in member `v`'s `role` table `list` (undefined: none; a transmit
 * table the description does not write goes back to its defaults). Returns how many entries went out or in, and every
 * class as affected when one did.
 */
export function setKeyedOthers(
  v: MemberView,
  role: KeyedRole,
  list: readonly OtherRow[] | undefined,
): { affected: "all" | []; changed: number } {
  const t = role === "transmit" ? v.transmit : v.send;
  const was = new Set(t?.others.map((o) => o.key));
  const now = new Set(list?.map((o) => o.key));
  let changed = 0;
  for (const k of was) if (!now.has(k)) changed++;
  for (const k of now) if (!was.has(k)) changed++;
  let flipped = false;
  if (role === "transmit" && v.member.tables.transmit === undefined) {
    // The defaults, or every entry: the table is the controller's from its first change to the defaults on.
    flipped = (t === undefined) !== (list === undefined);
    v.transmit = list === undefined ? undefined : { spec: DEFAULTS, active: [], others: list };
  } else if (t !== undefined) t.others = list ?? [];
  return { affected: changed > 0 || flipped ? "all" : [], changed };
}
