// Recordings the data plane writes itself: pcap records (nanosecond timestamps,
// little-endian — the file header the TypeScript side writes says so) for every
// recording, all in ONE ring, each record marked with its recording's number.
// Memory follows the packets recorded, not the number of recordings: a
// description of 20,000 recorded links has one ring like a description of one.
// When the ring is full the pipeline pauses (room.ts); the TypeScript side then
// has the records grouped by recording (recordingsGather: each recording's records
// one after the other, in their order) and writes each recording's span to its
// file with one call — no work per packet outside wasm — and empties the ring.
//
// A record in the ring, then `len` bytes: a pcap record
//   ┌───────────────┬─────────┐┌─────────────┬──────────────┬──────────────┬───────────────┬───────┐
//   │ recording u32 │ len u32 ││ ts_sec u32  │ ts_nsec u32  │ incl_len u32 │ orig_len u32  │ bytes │
//   └───────────────┴─────────┘└─────────────┴──────────────┴──────────────┴───────────────┴───────┘
//    RINGREC_SIZE = 8             PCAP_REC_LEN = 16                                      len = 16 + incl_len
//
// A tagged record (a member's deliveries, when the TypeScript side asks which
// link each came in on: topology.ts memberTagDeliveries) has the in-link
// identifier between the pcap header and the bytes: u32 at +16, bytes at +20
// (RECORDING_TAG_LEN); incl_len still counts the packet's bytes only.
//
// Per recording, two u32 (spanLen, spanEnd) for the gathering, and a place in the
// list of recordings that have records: 12 bytes per recording, whatever it holds.

import {
  RINGREC_RECORDING,
  RINGREC_LEN,
  RINGREC_SIZE,
  RECORDING_TAG_LEN,
  PCAP_REC_CAP_LEN,
  PCAP_REC_LEN,
  PCAP_REC_ORIG_LEN,
  PCAP_REC_TS_FRAC,
  PCAP_REC_TS_SEC,
} from "../abi";
import { copyRecord, Packet, PACKET_LENS, PACKET_TIME, SLACK } from "./packet";

if (PCAP_REC_TS_FRAC != PCAP_REC_TS_SEC + 4 || PCAP_REC_ORIG_LEN != PCAP_REC_CAP_LEN + 4)
  ERROR("a pcap record's header: ts_sec, ts_nsec and incl_len, orig_len must each be a pair of u32 (recordingAppend)");

/** The ring: records as drawn above, from ring to ring + ringUsed. */
let ring: usize = 0;
let ringLen: i32 = 0;
export let ringUsed: i32 = 0;
/** The ring's pcap records again, grouped by recording (recordingsGather). */
let gathered: usize = 0;
/** u32 per recording: bytes of its records in the ring (while gathering). */
export let spanLens: usize = 0;
/** u32 per recording: where its span in `gathered` ends, once gathered. */
export let spanEnds: usize = 0;
/** u32 per recording that has records, in the order of their first record. */
export let active: usize = 0;
let nActive: i32 = 0;
/** `n` recordings sharing a ring of `len` bytes (a link or member with no recording, −1, records nothing). */
export function recordingsInit(n: i32, len: i32): void {
  if (ring != 0) {
    heap.free(ring);
    heap.free(gathered);
    heap.free(spanLens);
    heap.free(spanEnds);
    heap.free(active);
  }
  ringLen = len;
  ring = heap.alloc(<usize>len + SLACK);
  gathered = heap.alloc(<usize>len + SLACK);
  const perRecording = (<usize>n) << 2;
  spanLens = heap.alloc(perRecording + 8);
  memory.fill(spanLens, 0, perRecording);
  spanEnds = heap.alloc(perRecording + 8);
  active = heap.alloc(perRecording + 8);
  ringUsed = 0;
  nActive = 0;
}

/** Whether the ring can take a record of `len` bytes for recording c (tagged: with the in-link); one larger than the
 * whole ring never can. */
@inline export function recordingRoom(c: i32, len: u32, tagged: bool): bool {
  return c < 0 || ringUsed + RINGREC_SIZE + PCAP_REC_LEN + (tagged ? RECORDING_TAG_LEN : 0) + <i32>len <= ringLen;
}

/** Appends `d`'s record for recording c; `tagged`: with the in-link it arrived on (d.inLink) after the pcap header. */
@inline export function recordingAppend(c: i32, d: Packet, tagged: bool): void {
  if (c < 0) return;
  const at = ring + <usize>ringUsed;
  const r = at + <usize>RINGREC_SIZE;
  // ts_sec, ts_nsec and incl_len, orig_len: each pair one load from the descriptor (packet.ts PACKET_TIME,
  // PACKET_LENS).
  store<u64>(r + PCAP_REC_TS_SEC, load<u64>(changetype<usize>(d) + PACKET_TIME));
  store<u64>(r + PCAP_REC_CAP_LEN, load<u64>(changetype<usize>(d) + PACKET_LENS));
  let head = PCAP_REC_LEN;
  if (tagged) {
    store<u32>(r + <usize>PCAP_REC_LEN, d.inLink);
    head += RECORDING_TAG_LEN;
  }
  copyRecord(r + <usize>head, d.data, d.len);
  const len = head + <i32>d.len;
  store<u32>(at + RINGREC_RECORDING, <u32>c);
  store<u32>(at + RINGREC_LEN, <u32>len);
  ringUsed += RINGREC_SIZE + len;
}

/**
 * Groups the ring's records by recording, each recording's in their order, into one
 * span per recording; returns how many recordings have records. The TypeScript side
 * reads the list (region recording-active) and each one's span (recording-span-ends,
 * recording-span-lens: it starts at its end less its length), writes them, then
 * calls recordingsDrained.
 */
export function recordingsGather(): i32 {
  forgetSpans();
  const end = ring + <usize>ringUsed;
  for (let at = ring; at < end;) {
    const c = <usize>load<u32>(at + RINGREC_RECORDING);
    const len = load<u32>(at + RINGREC_LEN);
    const s = spanLens + (c << 2);
    const before = load<u32>(s);
    if (before == 0) {
      store<u32>(active + ((<usize>nActive) << 2), <u32>c);
      nActive++;
    }
    store<u32>(s, before + len);
    at += <usize>RINGREC_SIZE + <usize>len;
  }
  // Each recording's span starts where the one before it in the list ends; spanEnds is its next record's place until
  // all are in.
  let start: u32 = <u32>gathered;
  for (let k = 0; k < nActive; k++) {
    const c = <usize>load<u32>(active + ((<usize>k) << 2));
    store<u32>(spanEnds + (c << 2), start);
    start += load<u32>(spanLens + (c << 2));
  }
  for (let at = ring; at < end;) {
    const c = <usize>load<u32>(at + RINGREC_RECORDING);
    const len = load<u32>(at + RINGREC_LEN);
    const e = spanEnds + (c << 2);
    const to = load<u32>(e);
    copySpan(<usize>to, at + <usize>RINGREC_SIZE, len);
    store<u32>(e, to + len);
    at += <usize>RINGREC_SIZE + <usize>len;
  }
  return nActive;
}

/**
 * Copies a record of `len` ≥ 16 bytes (a pcap header at least) in 16-byte moves, the last one
 * ending at its end: nothing past it is written, where the next recording's span may already be.
 */
@inline function copySpan(to: usize, from: usize, len: u32): void {
  if (len > 256) {
    memory.copy(to, from, <usize>len);
    return;
  }
  const n = <usize>len;
  let i: usize = 0;
  for (; i + 16 <= n; i += 16) v128.store(to + i, v128.load(from + i));
  if (i < n) v128.store(to + n - 16, v128.load(from + n - 16));
}

/** The ring is empty again (the TypeScript side has written what recordingsGather grouped). */
export function recordingsDrained(): void {
  forgetSpans();
  ringUsed = 0;
}

/** No recording has a span: spanLens back to 0 for those that had one. */
function forgetSpans(): void {
  for (let k = 0; k < nActive; k++) store<u32>(spanLens + ((<usize>load<u32>(active + ((<usize>k) << 2))) << 2), 0);
  nActive = 0;
}
