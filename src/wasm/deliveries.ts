// Deliveries with the in-link each came on, read from the data plane's tagged
// records in the recording ring (assembly/pipeline/recording.ts): a member whose
// deliveries are tagged writes, after each record's pcap header, the in-link
// identifier the packet arrived on. Read once per batch, so a listener (the P4Runtime
// server's PacketIn) learns member, in-link and bytes without tracing and
// without a wasm call per packet.

import { RECORD_HEADER_LEN } from "../pcap/pcap-layout.js";
import { RECORDING_TAG_LEN } from "./abi.js";
import type { DataPlane } from "./module.js";

/** A delivery: `data[start .. start+len)` is a view on linear memory, valid only during the call. */
export type TaggedRecord = (
  inLink: number,
  data: Uint8Array,
  start: number,
  len: number,
  tsSec: number,
  tsNsec: number,
) => void;

/** Calls `fn` for each tagged record in `data[start .. start+len)`; returns how many there were. */
export function forEachTagged(data: Uint8Array, start: number, len: number, fn: TaggedRecord): number {
  const view = new DataView(data.buffer, data.byteOffset);
  const head = RECORD_HEADER_LEN + RECORDING_TAG_LEN;
  let n = 0;
  for (let r = start; r + head <= start + len; n++) {
    const capLen = view.getUint32(r + 8, true);
    fn(
      view.getUint32(r + RECORD_HEADER_LEN, true),
      data,
      r + head,
      capLen,
      view.getUint32(r, true),
      view.getUint32(r + 4, true),
    );
    r += head + capLen;
  }
  return n;
}

/** Tags member `member`'s deliveries and sends them to recording `c` of the ring. */
export function tagDeliveries(dp: DataPlane, member: number, c: number): void {
  dp.exports.memberSetRecording(member, c);
  dp.exports.memberTagDeliveries(member, 1);
}
