// The data plane's exports: everything the TypeScript side may call. Control
// calls (set-up, table writes, counters) are few and not per packet; packets
// go in and out only through run()/resume() on whole batches.

import {
  actionOf,
  Entry,
  entryAt,
  hitsAt,
  lookup as lookupIn,
  lookupUncounted,
  probeDistance,
  dirBytes,
  rowOf,
} from "./tables/table";
import { tableById } from "./tables/write";
import { memberAt, linkAt, nLinks, nMembers, orphanDrops } from "./pipeline/topology";
import {
  DROP_COUNT,
  REGION_RECORDING_ACTIVE,
  REGION_RECORDING_SPAN_ENDS,
  REGION_RECORDING_SPAN_LENS,
  REGION_IN_DATA,
  REGION_IN_ENDPOINT,
  REGION_IN_LEN,
  REGION_IN_NSEC,
  REGION_IN_OFFSET,
  REGION_IN_ORIG_LEN,
  REGION_IN_SEC,
  REGION_TRACE_BASE,
  REGION_TRACE_POS,
} from "./abi";
import { Table } from "./tables/table";
import { forEachTable } from "./tables/write";
import { traceBase, tracePos } from "./pipeline/trace";
import {
  active as recordingActive,
  spanEnds as recordingSpanEnds,
  spanLens as recordingSpanLens,
} from "./pipeline/recording";
import { inData, inEndpoint, inLen, inNsec, inOffset, inOrigLen, inSec, injected, injectedReset } from "./pipeline/run";
import { copiesAsked, copiesAskedReset } from "./pipeline/replicate";

export { alloc, free } from "./memory";

// ── Header designs (for tests and tools) ───────────────────────────────────
import { decrementTtl, emit, emitLen, parse } from "./wire/design";
import { headerLen, madeFor, makeTemplate, writeTemplate } from "./wire/template";

/** Parses the header of `design` at `p` into the key vector at `key`; its length, or −1. */
export function designParse(design: i32, p: usize, len: i32, key: usize): i32 {
  return parse(design, p, len, key);
}
export function designEmitLen(design: i32, key: usize): i32 {
  return emitLen(design, key);
}
export function designEmit(design: i32, p: usize, key: usize, payloadLen: i32): void {
  emit(design, p, key, payloadLen);
}
export function designDecrementTtl(design: i32, p: usize): bool {
  return decrementTtl(design, p);
}
/** Makes at `tp` (TEMPLATE_LEN bytes) the template of the header of `design` for fields `key`; its header length, or
 * 0 when it has none. */
export function designTemplate(design: i32, key: usize, tp: usize): i32 {
  makeTemplate(design, key, tp);
  return madeFor(tp, design) ? headerLen(tp) : 0;
}
/** Writes template `tp`'s header at `p` in front of `payloadLen` bytes: the whole block when `block` (48 bytes in
 * front of the header's end may be written), else its bytes only. */
export function designWriteTemplate(tp: usize, p: usize, payloadLen: u32, block: bool): void {
  if (block) writeTemplate(tp, p, payloadLen, true);
  else writeTemplate(tp, p, payloadLen, false);
}
export { TEMPLATE_LEN } from "./wire/template";

// ── Tables ─────────────────────────────────────────────────────────────────
export { createTable, applyWrites, destroyTable } from "./tables/write";
export { FIELD_LEN } from "./tables/table";

/** The best entry for the key at `key` in table `id` (−1: none); counts a hit. For tests and tools. */
export function tableLookup(id: i32, key: usize): i32 {
  const t = tableById(id);
  return t == null ? -1 : rowOf(lookupIn(t, key));
}

/** Looks `n` keys of `keyLen` bytes up in table `id`, from `keys` on, as a packet's lookup does (no hit counted): how
 * many found a row. For bench:lpm. */
export function tableLookupMany(id: i32, keys: usize, keyLen: i32, n: i32): i32 {
  const t = tableById(id);
  if (t == null) return 0;
  let found = 0;
  for (let i = 0; i < n; i++) if (rowOf(lookupUncounted(t, keys + <usize>(i * keyLen))) >= 0) found++;
  return found;
}

/** Mean probe distance of the entries of the hashed index a table's lookups use (−1 for range tables): see
 * tables/indexes/slots.ts. */
export function tableProbeDistance(id: i32): f64 {
  const t = tableById(id);
  return t == null ? -1 : probeDistance(t);
}

/** Bytes of the DIR-16-8-8 an IPv4 LPM table's lookups use (0: none): see tables/indexes/dir.ts. */
export function tableDirBytes(id: i32): f64 {
  const t = tableById(id);
  return t == null ? 0 : <f64>dirBytes(t);
}

export function tableCount(id: i32): i32 {
  const t = tableById(id);
  return t == null ? -1 : t.count;
}

/**
 * Copies the hit count (f64, by entry index) of every entry the table has memory for to `out`
 * (room for its capacity); returns how many: the entries past them never held a row, and have none.
 */
export function tableHits(id: i32, out: usize): i32 {
  const t = tableById(id);
  if (t == null) return -1;
  for (let i = 0; i < t.allocated; i++) store<f64>(out + ((<usize>i) << 3), <f64>hitsAt(t, i));
  return t.allocated;
}

/** Entry `i`'s action code, count, arg, arg2 and data address (0: none) written to `out` as 5 × u32; false if the entry
 * is free. */
export function tableEntry(id: i32, i: i32, out: usize): bool {
  const t = tableById(id);
  if (t == null || i < 0 || i >= t.allocated) return false;
  const e = entryAt(t, i);
  if (e.group < 0) return false;
  writeAction(e, out);
  return true;
}

/**
 * The entry `key` matches in table `id` (−1: none; counts a hit), with its
 * action as a packet's lookup reads it — from the keyed slot where that holds
 * it — written to `out` as tableEntry writes it. For tests: the slot's copy
 * must follow every change to the entry.
 */
export function tableLookupAction(id: i32, key: usize, out: usize): i32 {
  const t = tableById(id);
  if (t == null) return -1;
  const h = lookupIn(t, key);
  const row = rowOf(h);
  if (row >= 0) writeAction(actionOf(t, h), out);
  return row;
}

function writeAction(e: Entry, out: usize): void {
  store<u32>(out, e.code);
  store<u32>(out, e.count, 4);
  store<u32>(out, e.arg, 8);
  store<u32>(out, e.arg2, 12);
  store<u32>(out, e.data, 16);
}

// ── Topology ───────────────────────────────────────────────────────────────
export {
  topologyReset,
  memberSet,
  memberSetTable,
  memberSetOutLink,
  linkSet,
  linkSetReceiver,
  endpointSet,
  linkSetRecording,
  memberSetRecording,
  linkSetDown,
  memberSetDown,
  memberTagDeliveries,
  endpointsGrow,
} from "./pipeline/topology";
export { recordingsInit, recordingsGather, recordingsDrained } from "./pipeline/recording";

/** Zeroes every counter — members, links, table rows — for a new run on the same tables. */
export function countersReset(): void {
  for (let i = 0; i < nMembers; i++) {
    const m = memberAt(i);
    memory.fill(m.drops, 0, <usize>(DROP_COUNT << 3));
    m.delivered = 0;
  }
  memory.fill(orphanDrops, 0, <usize>(DROP_COUNT << 3));
  injectedReset();
  copiesAskedReset();
  for (let i = 0; i < nLinks; i++) {
    linkAt(i).packets = 0;
    linkAt(i).bytes = 0;
  }
  forEachTable((t: Table): void => {
    memory.fill(t.hits, 0, (<usize>t.allocated) << 3);
  });
}

/** Pointer to member `i`'s drop counters: u64 per reason (−1: drops before any member). */
export function memberDrops(i: i32): usize {
  return i < 0 ? orphanDrops : memberAt(i).drops;
}
export function memberDelivered(i: i32): f64 {
  return <f64>memberAt(i).delivered;
}
/** Input packets run; with the copies asked for, the packets that each had one fate. */
export function packetsInjected(): f64 {
  return <f64>injected();
}
export function packetsCopied(): f64 {
  return <f64>copiesAsked;
}
export function linkPackets(i: i32): f64 {
  return <f64>linkAt(i).packets;
}
export function linkBytes(i: i32): f64 {
  return <f64>linkAt(i).bytes;
}

// ── Running ────────────────────────────────────────────────────────────────
export { poolInit } from "./pipeline/packet";
export { traceInit, setTracing, traceOnly, traceRange, drained } from "./pipeline/trace";
export { stackInit } from "./pipeline/replicate";
export { setHopLimit } from "./pipeline/effects";
export {
  heldPacket,
  inputInit,
  run,
  resume,
  setInputWritable,
  setMaxFanout,
  STATUS_DONE,
  STATUS_PAUSED,
} from "./pipeline/run";
export { inputPcap, inputPcapEnd, PCAP_BIG_ENDIAN, PCAP_NANOSECOND } from "./input";
export {
  PACKET_IN_LINK,
  PACKET_LINK,
  PACKET_MEMBER,
  PACKET_OUT_LINK,
  PACKET_SIZE,
  PACKET_STAGE,
} from "./pipeline/packet";

/** Where the TypeScript side writes inputs and reads outputs (REGION_* in abi.ts). */
export function region(which: i32): usize {
  switch (which) {
    case REGION_IN_DATA:
      return inData;
    case REGION_IN_OFFSET:
      return inOffset;
    case REGION_IN_LEN:
      return inLen;
    case REGION_IN_ORIG_LEN:
      return inOrigLen;
    case REGION_IN_SEC:
      return inSec;
    case REGION_IN_NSEC:
      return inNsec;
    case REGION_IN_ENDPOINT:
      return inEndpoint;
    case REGION_TRACE_BASE:
      return traceBase;
    case REGION_TRACE_POS:
      return <usize>tracePos;
    case REGION_RECORDING_ACTIVE:
      return recordingActive;
    case REGION_RECORDING_SPAN_ENDS:
      return recordingSpanEnds;
    case REGION_RECORDING_SPAN_LENS:
      return recordingSpanLens;
  }
  return 0;
}
