// Captures the data plane writes itself: one buffer per capture file, filled
// with pcap records (nanosecond timestamps, little-endian — the file header
// the TypeScript side writes says so). The TypeScript side writes a buffer to
// its file when the pipeline pauses for room, and at the end: no work per
// packet outside wasm.
//
// A record, then `len` packet bytes (no padding):
//   ┌─────────────┬──────────────┬──────────────┬───────────────┐
//   │ ts_sec u32  │ ts_nsec u32  │ incl_len u32 │ orig_len u32  │   PCAP_REC_LEN = 16
//   └─────────────┴──────────────┴──────────────┴───────────────┘
//
// A tagged record (a member's deliveries, when the TypeScript side asks which
// link each came in on: topology.ts memberTagDeliveries) has the in-link
// identifier between the header and the bytes: u32 at +16, bytes at +20
// (CAPTURE_TAG_LEN); incl_len still counts the packet's bytes only.
//
// Capture c's buffer: captures + c × CAPTURE_LEN (base usize, used i32).

import { CAPTURE_TAG_LEN, PCAP_REC_CAP_LEN, PCAP_REC_LEN, PCAP_REC_ORIG_LEN, PCAP_REC_TS_FRAC, PCAP_REC_TS_SEC } from "../abi";
import { copyRecord, Packet, SLACK } from "./packet";

const CAPTURE_LEN: i32 = 8;

let captures: usize = 0;
let nCaptures: i32 = 0;
let bufferLen: i32 = 0;
/** Whether link and delivery outputs go to capture buffers (else to the record ring). */
export let capturing: bool = false;

/** `n` capture buffers of `len` bytes each; packets then go to captures, not the ring. */
export function capturesInit(n: i32, len: i32): void {
  if (captures != 0) {
    for (let c = 0; c < nCaptures; c++) heap.free(captureBase(c));
    heap.free(captures);
  }
  nCaptures = n;
  bufferLen = len;
  captures = heap.alloc(<usize>(n * CAPTURE_LEN) + 8);
  for (let c = 0; c < n; c++) {
    store<usize>(captures + <usize>(c * CAPTURE_LEN), heap.alloc(<usize>len + SLACK));
    store<i32>(captures + <usize>(c * CAPTURE_LEN), 0, 4);
  }
  capturing = n > 0;
}

export function captureBase(c: i32): usize {
  return load<usize>(captures + <usize>(c * CAPTURE_LEN));
}

export function captureUsed(c: i32): i32 {
  return load<i32>(captures + <usize>(c * CAPTURE_LEN), 4);
}

/** Every capture buffer is empty again (the TypeScript side has written them out). */
export function capturesDrained(): void {
  for (let c = 0; c < nCaptures; c++) store<i32>(captures + <usize>(c * CAPTURE_LEN), 0, 4);
}

/** Whether capture c can take a record of `len` bytes (tagged: with the in-link); one larger than a whole buffer never can. */
@inline export function captureRoom(c: i32, len: u32, tagged: bool): bool {
  return c < 0 || captureUsed(c) + PCAP_REC_LEN + (tagged ? CAPTURE_TAG_LEN : 0) + <i32>len <= bufferLen;
}

/** Appends `d`'s record to capture c; `tagged`: with the in-link it arrived on (d.port) after the header. */
@inline export function captureAppend(c: i32, d: Packet, tagged: bool): void {
  if (c < 0) return;
  const slot = captures + <usize>(c * CAPTURE_LEN);
  const used = load<i32>(slot, 4);
  const r = load<usize>(slot) + <usize>used;
  store<u32>(r + PCAP_REC_TS_SEC, <u32>d.tsSec);
  store<u32>(r + PCAP_REC_TS_FRAC, d.tsNsec);
  store<u32>(r + PCAP_REC_CAP_LEN, d.len);
  store<u32>(r + PCAP_REC_ORIG_LEN, d.origLen);
  let head = PCAP_REC_LEN;
  if (tagged) {
    store<u32>(r + <usize>PCAP_REC_LEN, d.port);
    head += CAPTURE_TAG_LEN;
  }
  copyRecord(r + <usize>head, d.data, d.len);
  store<i32>(slot, used + head + <i32>d.len, 4);
}
