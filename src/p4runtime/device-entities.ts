// What a P4Runtime device holds (./device-state.ts) beside the ledger: its P4Info indexed, what
// only P4Runtime knows of table entries (Extras), the entities only P4Runtime has, the journal that
// undoes a refused update or batch, and the small helpers for P4Runtime's bytestrings.

import { canonicalOf } from "../p4/bytes.js";
import type { DeviceTable } from "../p4/device.js";
import { bytestringValue } from "../p4/import.js";
import type { EntryAction, EntryMatch } from "../wasm/tables.js";
import type { p4 } from "./messages.js";
import { Code } from "./proto.js";

// The messages as @grpc/proto-loader hands them over (src/p4runtime/messages.ts, LOADER_OPTIONS).
export type Update = p4.v1.Update;
export type TableEntry = p4.v1.TableEntry;
export type FieldMatch = p4.v1.FieldMatch;
export type Replica = p4.v1.Replica;
export type P4Info = p4.config.v1.P4Info;
/** An update's type once checked. */
export type WriteType = "INSERT" | "MODIFY" | "DELETE";

/** An update refused: its gRPC canonical code and why. */
export class Refusal extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}
export const refuse = (code: number, message: string): never => {
  throw new Refusal(code, message);
};
export const invalid = (message: string): never => refuse(Code.INVALID_ARGUMENT, message);

// ── The P4Info, indexed ────────────────────────────────────────────────────

export interface InfoField {
  readonly id: number;
  readonly name: string;
  readonly bits: number;
  readonly matchType: string;
  /** The FieldMatch oneof case for it: "exact", "lpm", … */
  readonly kind: string;
}
export interface InfoTable {
  readonly id: number;
  readonly name: string;
  readonly fields: ReadonlyMap<number, InfoField>;
  /** Field names by id, as the importer takes them. */
  readonly fieldNames: ReadonlyMap<number, string>;
  /** Every action the table names, whatever its scope. */
  readonly actions: ReadonlySet<number>;
  /** Actions an entry may name (not @defaultonly). */
  readonly entryActions: ReadonlySet<number>;
  /** Actions the default entry may name (not @tableonly). */
  readonly defaultActions: ReadonlySet<number>;
  readonly constDefault: boolean;
  /** The default action the program gives the table (its miss: a drop), with no parameters. */
  readonly initialDefault: number;
  readonly profile: number;
  readonly size: number;
  readonly dev: DeviceTable;
  readonly priority: boolean;
  readonly hasCounter: boolean;
}
export interface InfoAction {
  readonly id: number;
  readonly name: string;
  readonly params: ReadonlyMap<number, { readonly name: string; readonly bits: number }>;
}
export interface InfoProfile {
  readonly id: number;
  readonly tables: readonly number[];
  readonly size: number;
  readonly maxGroupSize: number;
}

// ── Entities ───────────────────────────────────────────────────────────────

export interface Call {
  readonly actionId: number;
  /** Canonical parameter values, by parameter id order. */
  readonly params: readonly { readonly paramId: number; readonly value: Uint8Array }[];
}
/** What a table entry runs, as P4Runtime names it: an action call, or an action profile's member or group. */
export type TableAct = { readonly call: Call } | { readonly member: number } | { readonly group: number };

/** A data-plane row: its match and its action. */
export interface Row {
  readonly match: EntryMatch;
  readonly action: EntryAction;
}

/**
 * What P4Runtime alone knows of a table entry, kept beside the ledger's entry (never its match,
 * nor its row's action): the cookie, the metadata, the counter base, and the action as it was
 * written where the row does not say it — a profile member or group, or a call the row does not
 * give back (a port or group number the data plane does not use, a member the device lacks).
 */
export interface Extras {
  /** The entry's 64-bit cookie, as a decimal string ("0": none). */
  readonly cookie: string;
  /** The entry's opaque metadata (empty: none). */
  readonly metadata: Uint8Array;
  /** Added to the packets its row has matched: the counter value written, less the row's hits then. */
  readonly counterBase: number;
  /** The action as written, where the row does not say it. */
  readonly as?: TableAct;
}
export const NO_EXTRAS: Extras = { cookie: "0", metadata: new Uint8Array(0), counterBase: 0 };
/** Whether extras say nothing beyond what an entry without them reads as. */
export const plain = (x: Extras): boolean =>
  x.cookie === "0" && x.metadata.length === 0 && x.counterBase === 0 && x.as === undefined;

/**
 * An entry the data plane has no row for (its action names a member the device lacks, in a
 * table without a drop action): there is no ledger entry to view, so P4Runtime keeps it.
 */
export interface Rowless {
  readonly match: EntryMatch;
  readonly act: TableAct;
  readonly extras: Extras;
}

/** A table's default entry while it has no row (every keyed table's; a keyless table's until its action has one). */
export interface DefaultEntry {
  readonly call: Call;
  readonly extras: Extras;
}

export interface StoredReplica {
  readonly port: Uint8Array;
  readonly instance: number;
}
export interface GroupMember {
  readonly memberId: number;
  readonly weight: number;
}
/** What only P4Runtime has of a device: rowless entries, default entries, replication, action profiles. */
export interface Entities {
  /** tableId → ledger key → an entry without a row. */
  readonly rowless: Map<number, Map<string, Rowless>>;
  /** tableId → its default entry, while it has no row. */
  readonly defaults: Map<number, DefaultEntry>;
  readonly multicast: Map<number, readonly StoredReplica[]>;
  readonly clone: Map<number, p4.v1.CloneSessionEntry>;
  /** profileId → memberId → call. */
  readonly members: Map<number, Map<number, Call>>;
  /** profileId → groupId → members (with weights). */
  readonly groups: Map<number, Map<number, readonly GroupMember[]>>;
}

/**
 * Changes to the entities, each with its undo: an update that is refused, a batch rolled back
 * and a batch the data plane refuses leave the entities as they were.
 */
export class Journal {
  /** Per change, flat (a batch of thousands makes no closures): the map, the key, whether it held the key, and what. */
  readonly #undo: unknown[] = [];

  set<K, V>(m: Map<K, V>, k: K, v: V): void {
    this.#undo.push(m, k, m.has(k), m.get(k));
    m.set(k, v);
  }

  delete<K, V>(m: Map<K, V>, k: K): void {
    if (!m.has(k)) return;
    this.#undo.push(m, k, true, m.get(k));
    m.delete(k);
  }

  get length(): number {
    return this.#undo.length;
  }

  /** Undoes the changes made since the journal was `mark` long. */
  undo(mark = 0): void {
    const u = this.#undo;
    // The stack holds its four values per change untyped (no record per change); they were pushed by set() and delete()
    // above.
    while (u.length > mark) {
      const old = u.pop();
      const had = u.pop() as boolean;
      const k = u.pop();
      const m = u.pop() as Map<unknown, unknown>;
      if (had) m.set(k, old);
      else m.delete(k);
    }
  }
}

/** A 32-bit field's number, or a 64-bit one's (a decimal string as decoded); 0 when unset. */
export const num = (v: number | string | undefined): number =>
  typeof v === "number" ? v : typeof v === "string" && /^\d+$/.test(v) ? Number(v) : 0;
export const EMPTY = new Uint8Array(0);

/** Whether the low `hostBits` bits of a big-endian value are all 0 (an LPM value has no bits past its prefix). */
export function lowBitsClear(value: Uint8Array, hostBits: number): boolean {
  let left = hostBits;
  for (let i = value.length - 1; i >= 0 && left > 0; i--, left -= 8) {
    const byte = value[i] ?? 0;
    if ((left >= 8 ? byte : byte & ((1 << left) - 1)) !== 0) return false;
  }
  return true;
}
/** A bytestring that must hold a value of `bits` bits, made canonical. */
export function field(b: Uint8Array | undefined, bits: number, what: string): Uint8Array {
  if (b === undefined || b.length === 0) return invalid(`${what}: empty bytestring (0 is one zero byte)`);
  const c = canonicalOf(b, bits);
  if (c === undefined)
    return invalid(`${what}: value 0x${bytestringValue(b).toString(16)} does not fit in ${bits} bits`);
  return c;
}

/** What a read of table entries filters by: a TableEntry's fields (absent or undefined: no filter). */
export type EntryQuery = {
  readonly [
    K in
      | "tableId"
      | "match"
      | "priority"
      | "isDefaultAction"
      | "controllerMetadata"
      | "metadata"
      | "action"
      | "counterData"
  ]?: TableEntry[K] | undefined;
};

/** A TableEntry's controller_metadata (uint64, a decimal string as decoded; "0": none). */
export const cookieOf = (te: EntryQuery): string => te.controllerMetadata ?? "0";
/** A TableEntry's metadata, copied out of the request (empty: none). */
export const metadataOf = (te: EntryQuery): Uint8Array =>
  te.metadata === undefined || te.metadata.length === 0 ? EMPTY : new Uint8Array(te.metadata);

/** A CounterData's packet count (the exported counters count packets; a byte count is not kept). */
export const packets = (data: p4.v1.CounterData | undefined): number => num(data?.packetCount);

/** A P4Info object's preamble (every object the export writes has one). */
export function preambleOf(
  o: { readonly preamble?: p4.config.v1.Preamble },
  what: string,
): { readonly id: number; readonly name: string; readonly alias: string } {
  const p = o.preamble;
  if (p === undefined) throw new Error(`a P4Info ${what} without a preamble`);
  const name = p.name ?? "";
  return { id: p.id ?? 0, name, alias: p.alias ?? name.slice(name.lastIndexOf(".") + 1) };
}

/** A map's value that the device's own bookkeeping guarantees (every table and profile has its maps from the start). */
export function held<K, V>(m: ReadonlyMap<K, V>, k: K): V {
  const v = m.get(k);
  if (v === undefined) throw new Error(`internal: no entry ${String(k)}`);
  return v;
}
