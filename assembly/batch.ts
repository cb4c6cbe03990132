// Whole-batch kernels: one call for N packets laid out by the TypeScript side.
//
// A packet list is an array of records, one per packet:
//
//   ┌──────────────┬──────────────┐
//   │ offset : u32 │ length : u32 │   PACKET_REF_LEN = 8 bytes
//   └──────────────┴──────────────┘
//
// `offset` is relative to the batch's data region.

import { checksum } from "./wire/checksum";

export const PACKET_REF_LEN: i32 = 8;

/** Writes the Internet checksum of each of `n` packets as a u16 into `out`. */
export function checksumBatch(data: usize, refs: usize, n: i32, out: usize): void {
  for (let i = 0; i < n; i++) {
    const ref = refs + <usize>(i * PACKET_REF_LEN);
    const p = data + <usize>load<u32>(ref);
    const len = load<i32>(ref, 4);
    store<u16>(out + (<usize>i << 1), <u16>checksum(p, len));
  }
}
