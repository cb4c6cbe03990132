// The check summary.json records of every file a run writes beside it (src/engine/digests.ts
// checks it on read): zlib's CRC-32, kept running as the bytes are written. It guards against
// accidents — a trace edited by hand, a recording swapped for another capture, a file cut
// short — not against someone who edits summary.json too, so a cryptographic hash would buy
// nothing here; CRC-32 costs less than half of SHA-256's time on the recordings' path (docs/cli.md).

import { crc32 } from "node:zlib";

/** A CRC-32 of the bytes given so far. */
export class RunningCrc {
  #crc = 0;

  update(bytes: Uint8Array): void {
    this.#crc = crc32(bytes, this.#crc);
  }

  /** As summary.json writes it: 8 lowercase hex digits. */
  hex(): string {
    return crcHex(this.#crc);
  }
}

export const crcHex = (crc: number): string => (crc >>> 0).toString(16).padStart(8, "0");
