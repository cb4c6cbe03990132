// Tables from the TypeScript side: create them, write entries in all-or-nothing
// batches through the command buffer (assembly/tables/write.ts), read counters.

import {
  ACTIONS,
  type ActionName,
  LAYOUTS,
  MATCH_KINDS,
  type MatchKind,
  TABLE_ERRORS,
  TABLE_ROLES,
  type TableError,
  type TableRole,
  WRITE_OPS,
} from "./abi.js";
import type { DataPlane } from "./module.js";

/** One field of a table's key: where it sits in the key and how it matches. */
export interface KeyField {
  readonly name: string;
  readonly offset: number;
  readonly len: number;
  readonly kind: MatchKind;
}

export interface TableLayout {
  readonly id: number;
  readonly role: TableRole;
  readonly kind: MatchKind;
  /** Bytes, a multiple of 8. */
  readonly keyLen: number;
  readonly capacity: number;
  readonly fields: readonly KeyField[];
}

export interface EntryMatch {
  readonly value: Uint8Array;
  readonly mask: Uint8Array;
  /** Range tables: bounds, keyLen bytes each (only range fields' bytes count). */
  readonly lo?: Uint8Array;
  readonly hi?: Uint8Array;
  /** Ternary, range, optional: higher wins. Ignored by exact and LPM. */
  readonly priority: number;
}

export interface EntryAction {
  readonly name: ActionName;
  readonly count?: number;
  readonly arg?: number;
  readonly arg2?: number;
  readonly data?: Uint8Array;
}

/** An action as the data plane holds it (data: the bytes asked for; none when it has no data). */
export interface StoredAction {
  readonly name: ActionName;
  readonly count: number;
  readonly arg: number;
  readonly arg2: number;
  readonly data: Uint8Array;
}

export type WriteOp = "insert" | "modify" | "delete";

export interface TableWrite {
  readonly op: WriteOp;
  readonly table: TableLayout;
  readonly match: EntryMatch;
  readonly action?: EntryAction;
}

export type WriteResult =
  | { readonly ok: true; readonly entries: readonly number[] }
  | { readonly ok: false; readonly index: number; readonly error: TableError };

const W = LAYOUTS.WRITE;
const pad8 = (n: number): number => (n + 7) & ~7;

export class Tables {
  readonly #dp: DataPlane;
  /** Where hits() has the data plane write a table's counts (kept: a summary reads every table's), and its size in
   * counts. */
  #hitsAt = 0;
  #hitsRoom = 0;

  constructor(dp: DataPlane) {
    this.#dp = dp;
  }

  create(layout: TableLayout): void {
    const fieldLen = this.#dp.constant("FIELD_LEN");
    const buf = this.#dp.alloc(layout.fields.length * fieldLen + 8);
    const view = this.#dp.mem.view;
    layout.fields.forEach((f, i) => {
      view.setUint16(buf + i * fieldLen, f.offset, true);
      view.setUint16(buf + i * fieldLen + 2, f.len, true);
      view.setInt32(buf + i * fieldLen + 4, MATCH_KINDS.indexOf(f.kind), true);
    });
    const ok = this.#dp.exports.createTable(
      layout.id,
      TABLE_ROLES.indexOf(layout.role),
      MATCH_KINDS.indexOf(layout.kind),
      layout.keyLen,
      layout.capacity,
      buf,
      layout.fields.length,
    );
    this.#dp.free(buf);
    if (!ok)
      throw new Error(
        `data plane refused table ${layout.id} (${layout.role}, ${layout.kind}, key ${layout.keyLen} bytes)`,
      );
  }

  /** Frees a table no member points to any more; its id may be created again. */
  destroy(layout: TableLayout): void {
    if (!this.#dp.exports.destroyTable(layout.id)) throw new Error(`data plane has no table ${layout.id} to destroy`);
  }

  /** Applies every write or none. */
  write(writes: readonly TableWrite[]): WriteResult {
    const sizes = writes.map((w) => {
      const keys = w.table.kind === "range" ? 4 : 2;
      return W.SIZE[0] + keys * w.table.keyLen + pad8(w.action?.data?.length ?? 0);
    });
    const total = sizes.reduce((a, b) => a + b, 0);
    const buf = this.#dp.alloc(total + 8);
    const u8 = this.#dp.mem.u8;
    const view = this.#dp.mem.view;
    let at = buf;
    writes.forEach((w, k) => {
      const keyLen = w.table.keyLen;
      view.setUint32(at + W.OP[0], WRITE_OPS.indexOf(w.op), true);
      view.setUint32(at + W.TABLE[0], w.table.id, true);
      view.setInt32(at + W.PRIORITY[0], w.match.priority, true);
      view.setUint16(at + W.ACTION[0], ACTIONS.indexOf(w.action?.name ?? "none"), true);
      view.setUint16(at + W.COUNT[0], w.action?.count ?? 0, true);
      view.setUint32(at + W.ARG[0], w.action?.arg ?? 0, true);
      view.setUint32(at + W.ARG2[0], w.action?.arg2 ?? 0, true);
      view.setUint32(at + W.DATA_LEN[0], w.action?.data?.length ?? 0, true);
      let p = at + W.SIZE[0];
      const put = (bytes: Uint8Array | undefined): void => {
        if (bytes !== undefined && bytes.length !== keyLen)
          throw new Error(`key part of ${bytes.length} bytes for a ${keyLen}-byte key`);
        u8.fill(0, p, p + keyLen);
        if (bytes !== undefined) u8.set(bytes, p);
        p += keyLen;
      };
      put(w.match.value);
      put(w.match.mask);
      if (w.table.kind === "range") {
        put(w.match.lo);
        put(w.match.hi);
      }
      if (w.action?.data !== undefined) u8.set(w.action.data, p);
      at += sizes[k] ?? 0;
    });
    const failed = this.#dp.exports.applyWrites(buf, writes.length);
    const entries: number[] = [];
    const results = this.#dp.mem.view;
    at = buf;
    for (let k = 0; k < writes.length; k++) {
      entries.push(results.getInt32(at + W.ENTRY[0], true));
      at += sizes[k] ?? 0;
    }
    this.#dp.free(buf);
    if (failed >= 0) {
      const code = -(entries[failed] ?? 0);
      return { ok: false, index: failed, error: TABLE_ERRORS[code] ?? "BadMatchKey" };
    }
    return { ok: true, entries };
  }

  /** The entry a key matches (−1: none). Counts a hit, as a packet would. */
  lookup(table: TableLayout, key: Uint8Array): number {
    const buf = this.#dp.alloc(table.keyLen);
    this.#dp.mem.u8.set(key, buf);
    const hit = this.#dp.exports.tableLookup(table.id, buf);
    this.#dp.free(buf);
    return hit;
  }

  /**
   * The entry a key matches (−1: none) and its action as a packet's lookup
   * reads it (from the keyed slot where that holds it); counts a hit.
   */
  lookupAction(table: TableLayout, key: Uint8Array, dataLen = 0): { row: number; action?: StoredAction } {
    const buf = this.#dp.alloc(table.keyLen + 20);
    this.#dp.mem.u8.set(key, buf);
    const out = buf + table.keyLen;
    const row = this.#dp.exports.tableLookupAction(table.id, buf, out);
    const action = row < 0 ? undefined : this.#readAction(out, dataLen);
    this.#dp.free(buf);
    return action === undefined ? { row } : { row, action };
  }

  #readAction(at: number, dataLen: number): StoredAction {
    const [code = 0, count = 0, arg = 0, arg2 = 0, data = 0] = this.#dp.mem.u32.slice(at >>> 2, (at >>> 2) + 5);
    return {
      name: ACTIONS[code] ?? "none",
      count,
      arg,
      arg2,
      data: data === 0 ? new Uint8Array(0) : this.#dp.mem.u8.slice(data, data + dataLen),
    };
  }

  /** Hit counts by entry index, for the entries the table has memory for (those past them have none). */
  hits(table: TableLayout): Float64Array {
    if (this.#hitsRoom < table.capacity) {
      if (this.#hitsAt !== 0) this.#dp.free(this.#hitsAt);
      this.#hitsRoom = Math.max(table.capacity, 2 * this.#hitsRoom);
      this.#hitsAt = this.#dp.alloc(this.#hitsRoom * 8);
    }
    const n = this.#dp.exports.tableHits(table.id, this.#hitsAt);
    return this.#dp.mem.f64.slice(this.#hitsAt >>> 3, (this.#hitsAt >>> 3) + Math.max(0, n));
  }

  count(table: TableLayout): number {
    return this.#dp.exports.tableCount(table.id);
  }

  /**
   * Entry `i`'s action as stored, or undefined if the entry is free. The entry keeps no length
   * for its data: `dataLen` says how many bytes to read (the action's own, e.g. 2 × count for
   * `out`); an entry without data reads as no bytes.
   */
  action(table: TableLayout, i: number, dataLen = 0): StoredAction | undefined {
    const buf = this.#dp.alloc(20);
    const live = this.#dp.exports.tableEntry(table.id, i, buf);
    const action = live ? this.#readAction(buf, dataLen) : undefined;
    this.#dp.free(buf);
    return action;
  }
}
