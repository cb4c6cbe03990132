// Table writes from the control plane: a command buffer of WRITE records,
// applied all-or-nothing. Each applied step leaves an undo record; the first
// failure undoes them in reverse, which also restores the free lists exactly,
// so entry indices the control plane already knows stay valid.
//
// A WRITE record (layout in abi.ts):
//   ┌───────┬──────────┬─────────────┬───────────┬──────────┬─────────┬──────────┬──────────────┬───────────┐
//   │ op    │ table    │ priority    │ action u16│ count u16│ arg u32 │ arg2 u32 │ dataLen u32  │ entry i32 │
// WRITE_SIZE = 32
//   ├───────┴──────────┴─────────────┴───────────┴──────────┴─────────┴──────────┴──────────────┴───────────┤
//   │ value[keyLen] │ mask[keyLen] │ (range: lo[keyLen] │ hi[keyLen]) │ data[dataLen], padded to 8          │
//   └───────────────────────────────────────────────────────────────────────────────────────────────────────┘
// `entry` is written back: the entry index, or −error for the record that failed.

import {
  ACT_COUNT,
  ERR_BAD_ACTION,
  ERR_NO_SUCH_TABLE,
  KIND_RANGE,
  OP_DELETE,
  OP_INSERT,
  OP_MODIFY,
  ROLE_ACTIONS,
  ROLE_COUNT,
  WRITE_ACTION,
  WRITE_ARG,
  WRITE_ARG2,
  WRITE_COUNT,
  WRITE_DATA_LEN,
  WRITE_ENTRY,
  WRITE_OP,
  WRITE_PRIORITY,
  WRITE_SIZE,
  WRITE_TABLE,
} from "../abi";
import {
  create,
  destroy,
  Entry,
  entryAt,
  insert,
  locate,
  remove,
  restoreAction,
  restoreEntry,
  save,
  setAction,
  Table,
} from "./table";
import { makeTemplate, TEMPLATE_AT, TEMPLATE_LEN, templateOf } from "../wire/template";
import { carriesTemplate } from "./action";

// ── The table registry: ids chosen by the control plane ────────────────────

let registry: usize = 0;
/** Table ids the registry has room for: every table's id is below it. */
export let registrySize: i32 = 0;
/**
 * Table writes so far (applyWrites calls, applied or not, and tables created; never 0): what is
 * known of a table's rows as of one count holds until the next, and of a table id until a new
 * table takes it.
 */
export let tableWrites: u32 = 1;

function tableWritten(): void {
  tableWrites = tableWrites == u32.MAX_VALUE ? 1 : tableWrites + 1;
}

export function tableById(id: i32): Table | null {
  if (id < 0 || id >= registrySize) return null;
  const p = load<usize>(registry + ((<usize>id) << alignof<usize>()));
  return p == 0 ? null : changetype<Table>(p);
}

/** Calls `f` on every table. */
export function forEachTable(f: (t: Table) => void): void {
  for (let id = 0; id < registrySize; id++) {
    const t = tableById(id);
    if (t != null) f(t);
  }
}

/** Creates table `id` (see table.create); false if the id is taken or the layout is bad. */
export function createTable(
  id: i32,
  role: i32,
  kind: i32,
  keyLen: i32,
  capacity: i32,
  fields: usize,
  nFields: i32,
): bool {
  if (id < 0 || tableById(id) != null) return false;
  if (id >= registrySize) {
    let size = registrySize == 0 ? 64 : registrySize;
    while (size <= id) size <<= 1;
    const grown = heap.alloc((<usize>size) << alignof<usize>());
    memory.fill(grown, 0, (<usize>size) << alignof<usize>());
    if (registry != 0) {
      memory.copy(grown, registry, (<usize>registrySize) << alignof<usize>());
      heap.free(registry);
    }
    registry = grown;
    registrySize = size;
  }
  const t = create(id, role, kind, keyLen, capacity, fields, nFields);
  if (t == null) return false;
  store<usize>(registry + ((<usize>id) << alignof<usize>()), changetype<usize>(t));
  tableWritten();
  return true;
}

/**
 * Frees table `id` and every entry's data; false if there is none. The control plane calls it
 * only for a table no member points to any more (a reconciliation replaced it).
 */
export function destroyTable(id: i32): bool {
  const t = tableById(id);
  if (t == null) return false;
  destroy(t);
  store<usize>(registry + ((<usize>id) << alignof<usize>()), 0);
  return true;
}

// ── Actions ────────────────────────────────────────────────────────────────

/** Whether `code` is an action a `role` table may hold: abi.ts ROLE_ACTIONS, a word per role, a bit per action. */
function actionFits(role: i32, code: i32): bool {
  if (<u32>role >= <u32>ROLE_COUNT || <u32>code >= <u32>ACT_COUNT) return false;
  return ((load<u32>(ROLE_ACTIONS + ((<usize>role) << 2)) >> (<u32>code)) & 1) != 0;
}

/**
 * Gives entry `i` the record's action, its data copied. A send row's push
 * (its data the header's fields, its arg the design) gets its header's
 * template after them (wire/template.ts), made here, once.
 */
function actionFrom(t: Table, i: i32, rec: usize, data: usize): void {
  const len = load<u32>(rec + WRITE_DATA_LEN);
  const code = <i32>load<u16>(rec + WRITE_ACTION);
  const pushed = carriesTemplate(t.role, code, len);
  let copy: usize = 0;
  if (len > 0) {
    copy = heap.alloc(pushed ? <usize>(TEMPLATE_AT + TEMPLATE_LEN) : <usize>len);
    memory.copy(copy, data, <usize>len);
    if (pushed) {
      memory.fill(copy + <usize>len, 0, <usize>(TEMPLATE_AT - <i32>len));
      makeTemplate(<i32>load<u32>(rec + WRITE_ARG), copy, templateOf(copy));
    }
  }
  setAction(
    t,
    i,
    load<u16>(rec + WRITE_ACTION),
    load<u16>(rec + WRITE_COUNT),
    load<u32>(rec + WRITE_ARG),
    load<u32>(rec + WRITE_ARG2),
    copy,
  );
}

// ── Undo log ───────────────────────────────────────────────────────────────

/**
 *   ┌────────┬────────────┬───────────┬──────────────────────────────────────┐
 *   │ op i32 │ table i32  │ entry i32 │ saved: usize (a copy of the entry)   │   UNDO_LEN = 16
 *   └────────┴────────────┴───────────┴──────────────────────────────────────┘
 */
const UNDO_LEN: i32 = 16;

function recordSize(t: Table, rec: usize): i32 {
  const keys = t.kind == KIND_RANGE ? 4 : 2;
  const data = <i32>load<u32>(rec + WRITE_DATA_LEN);
  return WRITE_SIZE + keys * t.keyLen + ((data + 7) & ~7);
}

function freeData(e: Entry): void {
  if (e.data != 0) heap.free(<usize>e.data);
}

/**
 * Applies `n` WRITE records from `buf`. Returns -1 when all were applied, or
 * the index of the record that failed (its `entry` holds −error) after
 * undoing every earlier one.
 */
export function applyWrites(buf: usize, n: i32): i32 {
  tableWritten();
  const undo = heap.alloc(<usize>(n * UNDO_LEN) + 1);
  let done = 0;
  let failed = -1;
  let rec = buf;
  for (let k = 0; k < n; k++) {
    const result = applyOne(rec, undo + <usize>(k * UNDO_LEN));
    store<i32>(rec + WRITE_ENTRY, result);
    if (result < 0) {
      failed = k;
      break;
    }
    done++;
    rec += <usize>recordSize(tableById(load<i32>(rec + WRITE_TABLE))!, rec);
  }
  for (let k = done - 1; k >= 0; k--) {
    const u = undo + <usize>(k * UNDO_LEN);
    if (failed >= 0) rollback(u);
    else commit(u);
  }
  heap.free(undo);
  return failed;
}

function applyOne(rec: usize, u: usize): i32 {
  const t = tableById(load<i32>(rec + WRITE_TABLE));
  if (t == null) return -ERR_NO_SUCH_TABLE;
  const op = load<i32>(rec + WRITE_OP);
  const k = <usize>t.keyLen;
  const value = rec + WRITE_SIZE;
  const mask = value + k;
  const lo = mask + k;
  const hi = lo + k;
  const data = rec + WRITE_SIZE + k * (t.kind == KIND_RANGE ? 4 : 2);
  const prio = load<i32>(rec + WRITE_PRIORITY);
  store<i32>(u, op);
  store<i32>(u, t.id, 4);
  store<usize>(u, 0, 12);
  if (op != OP_DELETE && !actionFits(t.role, load<u16>(rec + WRITE_ACTION))) return -ERR_BAD_ACTION;
  let i: i32;
  if (op == OP_INSERT) {
    i = insert(t, value, mask, lo, hi, prio);
    if (i < 0) return i;
    actionFrom(t, i, rec, data);
  } else if (op == OP_MODIFY) {
    i = locate(t, value, mask, lo, hi, prio);
    if (i < 0) return i;
    store<usize>(u, save(t, i), 12);
    actionFrom(t, i, rec, data);
  } else if (op == OP_DELETE) {
    i = locate(t, value, mask, lo, hi, prio);
    if (i < 0) return i;
    store<usize>(u, save(t, i), 12);
    remove(t, i);
  } else {
    return -ERR_BAD_ACTION;
  }
  store<i32>(u, i, 8);
  return i;
}

function rollback(u: usize): void {
  const op = load<i32>(u);
  const t = tableById(load<i32>(u, 4))!;
  const i = load<i32>(u, 8);
  const saved = load<usize>(u, 12);
  if (op == OP_INSERT) {
    freeData(entryAt(t, i));
    remove(t, i);
  } else if (op == OP_MODIFY) {
    freeData(entryAt(t, i));
    restoreAction(t, i, saved);
    heap.free(saved);
  } else if (op == OP_DELETE) {
    restoreEntry(t, i, saved);
    heap.free(saved);
  }
}

function commit(u: usize): void {
  const op = load<i32>(u);
  const saved = load<usize>(u, 12);
  // The replaced or removed action's data is garbage only now.
  if ((op == OP_MODIFY || op == OP_DELETE) && saved != 0) {
    freeData(changetype<Entry>(saved));
    heap.free(saved);
  }
}
