// Entries grouped by mask, the groups in rank order: what the tuple space
// (tuple-space.ts) and the LPM keyed index (keyed-prefix.ts) probe, one group
// after another, highest first. An entry ranks in its group by `prio` (kinds/:
// a priority, or a prefix length), and a group by the highest rank it has held.
//
// The record follows its index's slots:
//
//   ┌───────┬────────────────────────────────────────────────────────────────────┐
//   │ Slots │ groups usize, groupSize i32, groupCap, groupFree, groupsUsed i32,   │
//   │       │ order usize, nOrder i32                                            │
//   └───────┴────────────────────────────────────────────────────────────────────┘
//
// A group (groupSize bytes; room for groupCap of them, doubled when a new one
// finds no room: memory follows the masks in use):
//
//   ┌─────────────┬───────────┬──────────┬──────────┬──────────────┐
//   │ maxPrio i32 │ count i32 │ next i32 │ (pad)    │ mask[keyLen] │   GROUP_HEADER_LEN = 16
//   └─────────────┴───────────┴──────────┴──────────┴──────────────┘
//
// `maxPrio` only ever rises while the group lives: it stays an upper bound
// after removals, which is all an early stop needs. `next` links free groups.

import { indexAt, Table } from "../storage";
import * as slots from "./slots";
import { Slots } from "./slots";

@unmanaged
export class Grouped extends Slots {
  groups: usize;
  groupSize: i32;
  groupCap: i32;
  groupFree: i32;
  groupsUsed: i32;
  /** Group numbers, highest maxPrio first. */
  order: usize;
  nOrder: i32;
}

const GROUP_HEADER_LEN: i32 = 16;
export const NO_GROUP: i32 = -1;

@inline function groupAt(r: Grouped, g: i32): usize {
  return r.groups + <usize>(g * r.groupSize);
}
@inline export function groupMask(r: Grouped, g: i32): usize {
  return groupAt(r, g) + GROUP_HEADER_LEN;
}
@inline export function groupMaxPrio(r: Grouped, g: i32): i32 {
  return load<i32>(groupAt(r, g));
}
/** The k-th group in rank order. */
@inline export function orderAt(r: Grouped, k: i32): i32 {
  return load<i32>(r.order + ((<usize>k) << 2));
}
@inline function setOrderAt(r: Grouped, k: i32, g: i32): void {
  store<i32>(r.order + ((<usize>k) << 2), g);
}

/** The record of a table whose index is grouped. */
@inline export function groupedOf(t: Table): Grouped {
  return changetype<Grouped>(indexAt(t));
}

/** Makes the record, at creation: slots of 1 << `shift` bytes, and room for one group of `t`'s masks. */
export function make(t: Table, shift: u32): void {
  const r = groupedOf(t);
  slots.make(r, t.allocated, shift);
  r.groupSize = GROUP_HEADER_LEN + t.keyLen;
  r.groupFree = NO_GROUP;
  room(r, 1);
}

export function free(t: Table): void {
  const r = groupedOf(t);
  slots.free(r);
  freeGroups(r);
}

function freeGroups(r: Grouped): void {
  if (r.groups != 0) heap.free(r.groups);
  if (r.order != 0) heap.free(r.order);
}

/** Room for `cap` groups, those in use copied. */
function room(r: Grouped, cap: i32): void {
  const groups = heap.alloc(<usize>(cap * r.groupSize));
  const order = heap.alloc(<usize>(cap * 4));
  if (r.groups != 0) {
    memory.copy(groups, r.groups, <usize>(r.groupsUsed * r.groupSize));
    memory.copy(order, r.order, <usize>(r.nOrder * 4));
    freeGroups(r);
  }
  r.groups = groups;
  r.order = order;
  r.groupCap = cap;
}

/** The group of exactly this mask, or NO_GROUP. */
export function findGroup(t: Table, r: Grouped, mask: usize): i32 {
  for (let k = 0; k < r.nOrder; k++) {
    const g = orderAt(r, k);
    if (memory.compare(groupMask(r, g), mask, <usize>t.keyLen) == 0) return g;
  }
  return NO_GROUP;
}

/** Moves group `g` to its place in the order: highest maxPrio first. */
function reorder(r: Grouped, g: i32): void {
  let k = 0;
  while (orderAt(r, k) != g) k++;
  const p = groupMaxPrio(r, g);
  while (k > 0 && groupMaxPrio(r, orderAt(r, k - 1)) < p) {
    setOrderAt(r, k, orderAt(r, k - 1));
    k--;
  }
  setOrderAt(r, k, g);
}

function newGroup(t: Table, r: Grouped, mask: usize, prio: i32): i32 {
  let g: i32;
  if (r.groupFree != NO_GROUP) {
    g = r.groupFree;
    r.groupFree = load<i32>(groupAt(r, g), 8);
  } else {
    if (r.groupsUsed == r.groupCap) room(r, r.groupCap * 2);
    g = r.groupsUsed++;
  }
  const p = groupAt(r, g);
  store<i32>(p, prio);
  store<i32>(p, 0, 4);
  store<i32>(p, NO_GROUP, 8);
  memory.copy(groupMask(r, g), mask, <usize>t.keyLen);
  setOrderAt(r, r.nOrder, g);
  r.nOrder++;
  reorder(r, g);
  return g;
}

/** An entry of this mask and rank joins its group (made if new); returns the group. */
export function join(t: Table, r: Grouped, mask: usize, prio: i32): i32 {
  let g = findGroup(t, r, mask);
  if (g == NO_GROUP) g = newGroup(t, r, mask, prio);
  const p = groupAt(r, g);
  store<i32>(p, load<i32>(p, 4) + 1, 4);
  if (prio > load<i32>(p)) {
    store<i32>(p, prio);
    reorder(r, g);
  }
  return g;
}

/** An entry leaves group `g`; the group goes when it is empty. */
export function leave(r: Grouped, g: i32): void {
  const p = groupAt(r, g);
  const left = load<i32>(p, 4) - 1;
  store<i32>(p, left, 4);
  if (left > 0) return;
  let k = 0;
  while (orderAt(r, k) != g) k++;
  for (; k + 1 < r.nOrder; k++) setOrderAt(r, k, orderAt(r, k + 1));
  r.nOrder--;
  store<i32>(p, r.groupFree, 8);
  r.groupFree = g;
}
