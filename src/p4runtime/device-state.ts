// One P4Runtime device: a machine of the description, with the P4Info that
// `strata export p4` writes for it. Its table entries are the ledger's
// (src/control/ledger.ts): a Read walks the ledger's entries of each table
// and puts each back into P4 terms (./device-view.ts), whoever wrote it — the
// description, `strata serve --commands`, a controller. What only P4Runtime
// has is kept here: beside each ledger entry a controller wrote, its Extras
// (cookie, metadata, counter base, a profile member or group it names); the
// default entries, multicast groups, clone sessions and action profiles; and
// the entries the data plane has no row for.
//
// A Write batch is applied update by update, as the P4Runtime spec asks
// (§12: ALREADY_EXISTS on a second INSERT, NOT_FOUND on a MODIFY or DELETE of
// nothing, INVALID_ARGUMENT for an entry the P4Info does not allow,
// RESOURCE_EXHAUSTED past a table's size), each update seeing the ones before
// it (./device-batch.ts) and a refused one changing nothing. The rows of the
// entries the batch touched go to the data plane through the ledger as one
// all-or-nothing write, between packet batches: packets see the tables before
// it or after it, never half of it, and its cost follows the entries it
// writes, not the tables' sizes.

import type { CompiledSpec } from "../control/compiled.js";
import type { Ledger, LedgerEntry } from "../control/ledger.js";
import { type Device, type DeviceEntry, type DeviceTable, device } from "../p4/device.js";
import { deviceUpdates } from "../p4/entries.js";
import { type P4InfoIds, p4infoIds } from "../p4/p4info.js";
import type { TableWrite, Tables } from "../wasm/tables.js";
import { Batch } from "./device-batch.js";
import {
  type Entities,
  type Extras,
  type P4Info,
  Refusal,
  refuse,
  invalid,
  type Update,
  type WriteType,
} from "./device-entities.js";
import { indexP4Info, type P4InfoIndex } from "./device-index.js";
import { Reader } from "./device-read.js";
import { writeProfileGroup, writeProfileMember, writeReplication } from "./device-replication.js";
import type { DeviceCtx } from "./device-view.js";
import { initialDefault, writeDirectCounter, writeTableEntry } from "./device-writes.js";
import type { p4 } from "./messages.js";
import { Code, type UpdateError } from "./proto.js";
export { Refusal } from "./device-entities.js";

export interface DeviceInfo {
  readonly deviceId: number;
  readonly machine: string;
  /** The P4Info the export writes for the device, as gRPC decodes it. */
  readonly p4info: P4Info;
}

/** A batch of updates staged: its errors, and what the data plane must do for it. */
export interface Staged {
  /** One error (code 0 = OK) per update, in order. */
  readonly errors: readonly UpdateError[];
  /** The data-plane writes that take the ledger's entries to the batch's; commit() notes what only P4Runtime keeps of
   * them once the ledger took them. */
  plan(): { readonly writes: readonly TableWrite[]; commit(): void };
  /** Undoes every update of the batch (none reaches the data plane). */
  rollback(): void;
}

export class DeviceState implements DeviceCtx {
  readonly deviceId: number;
  readonly machine: string;
  readonly p4info: P4Info;
  readonly index: P4InfoIndex;
  /** The P4Info's packet_out header fields, by metadata id. */
  readonly packetOut: ReadonlyMap<number, { readonly name: string; readonly bits: number }>;
  dev: Device;
  ids: P4InfoIds;
  readonly entities: Entities;
  readonly extras = new WeakMap<LedgerEntry, Extras>();
  readonly described = new WeakMap<DeviceTable, Map<string, DeviceEntry[]>>();
  #compiled: CompiledSpec;
  readonly #ports: ReadonlySet<number>;
  readonly #reader = new Reader(this);

  constructor(compiled: CompiledSpec, info: DeviceInfo) {
    this.deviceId = info.deviceId;
    this.machine = info.machine;
    this.p4info = info.p4info;
    this.#compiled = compiled;
    this.dev = device(compiled, info.deviceId - 1);
    this.ids = p4infoIds(this.dev);
    this.index = indexP4Info(info.p4info, this.dev);
    this.packetOut = this.index.packetOut;
    this.#ports = new Set([...this.dev.ports.map((p) => p.port), 254]);
    const tables = [...this.index.tables.values()];
    const profiles = [...this.index.profiles.keys()];
    this.entities = {
      rowless: new Map(),
      defaults: new Map(tables.map((t) => [t.id, initialDefault(t)])),
      multicast: new Map(),
      clone: new Map(),
      members: new Map(profiles.map((id) => [id, new Map()])),
      groups: new Map(profiles.map((id) => [id, new Map()])),
    };
  }

  /** The description this device runs. */
  get compiled(): CompiledSpec {
    return this.#compiled;
  }

  /** Applies a batch of updates, update by update (one that fails changes nothing); `tables` gives the counters. */
  stage(updates: readonly Update[], ledger: Ledger, tables: Tables | undefined): Staged {
    const b = new Batch(this, ledger, tables);
    const errors = updates.map((u, i): UpdateError => {
      const mark = b.journal.length;
      // An update's change to the batch's entries is its last step: one that throws has made none.
      try {
        this.#apply(b, u);
        return { code: Code.OK, message: "" };
      } catch (e) {
        b.journal.undo(mark);
        if (e instanceof Refusal) return { code: e.code, message: `update ${i}: ${e.message}` };
        return { code: Code.INVALID_ARGUMENT, message: `update ${i}: ${e instanceof Error ? e.message : String(e)}` };
      }
    });
    return { errors, plan: () => b.plan(), rollback: () => b.journal.undo() };
  }

  /** Every entity removed and every default entry reset, as a new pipeline starts (VERIFY_AND_COMMIT). */
  clear(ledger: Ledger): Staged {
    const b = new Batch(this, ledger, undefined);
    const s = this.entities;
    for (const t of this.index.tables.values()) {
      for (const e of [...b.entries(t)]) b.set(t, e.key, undefined);
      b.journal.set(s.defaults, t.id, initialDefault(t));
    }
    const empty = <V>(m: Map<number, V>): void => {
      for (const k of [...m.keys()]) b.journal.delete(m, k);
    };
    empty(s.multicast);
    empty(s.clone);
    for (const m of s.members.values()) empty(m);
    for (const m of s.groups.values()) empty(m);
    return { errors: [], plan: () => b.plan(), rollback: () => b.journal.undo() };
  }

  #apply(b: Batch, u: Update): void {
    const type = u.type;
    if (type !== "INSERT" && type !== "MODIFY" && type !== "DELETE")
      return invalid(`update type ${type ?? "UNSPECIFIED"} (INSERT, MODIFY or DELETE)`);
    const entity = u.entity;
    if (entity?.entity === undefined) return invalid("update without an entity");
    const t: WriteType = type;
    switch (entity.entity) {
      case "tableEntry":
        return writeTableEntry(b, t, entity.tableEntry);
      case "directCounterEntry":
        return writeDirectCounter(b, t, entity.directCounterEntry);
      case "packetReplicationEngineEntry":
        return writeReplication(b, this.#ports, t, entity.packetReplicationEngineEntry);
      case "actionProfileMember":
        return writeProfileMember(b, t, entity.actionProfileMember);
      case "actionProfileGroup":
        return writeProfileGroup(b, t, entity.actionProfileGroup);
      default:
        return refuse(
          Code.UNIMPLEMENTED,
          `${entity.entity} entities are not written by strata's server (table entries, direct counters, ` +
            `multicast groups, clone sessions, action profile members and groups are)`,
        );
    }
  }

  /** The entities a Read asks for (wildcards: a 0 id or an absent field reads all), encoded as p4.v1.Entity. */
  read(entity: p4.v1.Entity, ledger: Ledger, tables: Tables): Uint8Array[] {
    return this.#reader.read(entity, ledger, tables);
  }

  /**
   * A reload that kept the device's P4Info: its tables as the new description has them, and the
   * description's multicast groups and action profiles inserted or modified to its (others'
   * kept). Returns the lines of what could not be taken over.
   */
  retable(compiled: CompiledSpec, ledger: Ledger): string[] {
    const problems: string[] = [];
    const dev = device(compiled, this.deviceId - 1);
    for (const [id, t] of this.index.tables) {
      const d = dev.tables.find((x) => x.name === t.name);
      if (d !== undefined) this.index.tables.set(id, { ...t, dev: d });
    }
    this.dev = dev;
    this.#compiled = compiled;
    this.ids = p4infoIds(dev);
    // The entities alone: the rows are the ledger's, which the reload wrote.
    const b = new Batch(this, ledger, undefined);
    for (const u of deviceUpdates(dev, this.ids)) {
      try {
        this.#apply(b, u);
      } catch (e) {
        try {
          if (!(e instanceof Refusal && e.code === Code.ALREADY_EXISTS)) throw e;
          this.#apply(b, { ...u, type: "MODIFY" });
        } catch (again) {
          problems.push(`the description's ${u.entity?.entity ?? "entity"} is not taken over: ${String(again)}`);
        }
      }
    }
    return problems;
  }
}
