// An entry's action as one word, and a lookup's answer: the row and its action
// together.
//
// An index may hold an entry's action beside its key (keyed.ts), so that a
// lookup reads one slot and never the entry. It holds it as a word,
//
//   ┌──────────────┬───────────┬───────────┐
//   │ code + 1: u8 │ count: u8 │ arg: u16  │   (0: the action does not fit; read the entry)
//   └──────────────┴───────────┴───────────┘
//
// for an action with no arg2 and no data (bar a forward's one out-link, whose
// list of one element `arg` repeats: steps.ts's forward reads the list only for
// several), count < 256 and arg < 65536. A lookup returns a Hit:
//
//   ┌──────────────────────────────┬─────────────────────────────────────┐
//   │ row: i32 (−1: none), bits 0–31 │ action word, bits 32–63 (0: none) │
//   └──────────────────────────────┴─────────────────────────────────────┘

import { ACT_OUT, ACT_PUSH, ROLE_SEND } from "../abi";
import { TEMPLATE_AT } from "../wire/template";
import { Entry, entryAt, Table } from "./storage";

/** Entry `e`'s action as one word, or 0 when it does not fit. */
export function actionWord(e: Entry): u32 {
  const dataNeeded = e.data != 0 && !(e.code == ACT_OUT && e.count == 1);
  if (e.arg2 != 0 || dataNeeded || e.count > 0xff || e.arg > 0xffff || e.code >= 0xff) return 0;
  return (<u32>e.code + 1) | ((<u32>e.count) << 8) | (e.arg << 16);
}

/** Whether a row of a `role` table whose action is `code` with `len` bytes of data gets a header template after
 * them: a send row's push, its data the header's fields (wire/template.ts). */
export function carriesTemplate(role: i32, code: i32, len: u32): bool {
  return role == ROLE_SEND && code == ACT_PUSH && len <= <u32>TEMPLATE_AT;
}

/** An action word's code, count and arg, as actionWord put them there. */
@inline export function wordCode(a: u32): u32 {
  return (a & 0xff) - 1;
}
@inline export function wordCount(a: u32): u32 {
  return (a >> 8) & 0xff;
}
@inline export function wordArg(a: u32): u32 {
  return a >> 16;
}

/** A lookup's answer: see the diagram above. */
export type Hit = u64;

/** No row. */
export const MISS: Hit = 0xffffffff;

@inline export function hit(row: i32, word: u32): Hit {
  return ((<u64>word) << 32) | (<u64>(<u32>row));
}
/** The Hit of an index slot that holds entry + 1 (u32), then the action word: the two read as one u64 (not 0). */
@inline export function heldHit(held: u64): Hit {
  return held - 1;
}
/** The row a lookup found, or −1. */
@inline export function rowOf(h: Hit): i32 {
  return <i32>h;
}
/** The action word of the row, or 0: read the entry. */
@inline export function wordOf(h: Hit): u32 {
  return <u32>(h >> 32);
}

/**
 * The action of hit `h` (a row) in `t`, as an entry's: the entry itself, or
 * the action word unpacked into a record of its own (no arg2, no data: those
 * stay 0, as the static data starts), valid until the next call.
 */
@inline export function actionOf(t: Table, h: Hit): Entry {
  const a = wordOf(h);
  return a != 0 ? unpack(a) : entryAt(t, rowOf(h));
}

const held = changetype<Entry>(memory.data(offsetof<Entry>(), 16));

@inline function unpack(a: u32): Entry {
  held.code = <u16>wordCode(a);
  held.count = <u16>wordCount(a);
  held.arg = wordArg(a);
  return held;
}
