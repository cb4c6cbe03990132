// Packets of a capture file (pcap or pcapng), to inject one at a time: a replay reads captures itself (./emulation.ts
// replay()), this is for a program that wants the packets in hand.

import { openCapture } from "../pcap/index.js";

export interface CapturedPacket {
  /** The bytes captured (as captured: no link-layer header is adapted, as `strata run` does for some link types). */
  readonly data: Uint8Array;
  readonly time: { readonly sec: number; readonly nsec: number };
}

/** The first `max` packets of a capture (all by default); a PcapError for a file that is none, or is damaged. */
export function readPackets(file: string, max = Infinity): CapturedPacket[] {
  const reader = openCapture(file);
  const out: CapturedPacket[] = [];
  try {
    for (const b of reader.batches()) {
      for (let i = 0; i < b.count && out.length < max; i++) {
        const start = b.offset[i] ?? 0;
        out.push({
          data: b.data.slice(start, start + (b.capLen[i] ?? 0)),
          time: { sec: b.tsSec[i] ?? 0, nsec: b.tsNsec[i] ?? 0 },
        });
      }
      if (out.length >= max) break;
    }
  } finally {
    reader.close();
  }
  return out;
}
