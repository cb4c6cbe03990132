// The reader side of PacketBatch: parallel arrays allocated once per reader and refilled.

import type { CaptureWriter, PacketBatch } from "./types.js";

export const DEFAULT_BATCH_SIZE = 256;

export class MutableBatch implements PacketBatch {
  data: Uint8Array;
  count = 0;
  firstIndex = 0;
  readonly offset: Uint32Array;
  readonly capLen: Uint32Array;
  readonly origLen: Uint32Array;
  readonly iface: Uint32Array;
  readonly tsSec: Float64Array;
  readonly tsNsec: Uint32Array;
  readonly flags: Uint8Array;

  constructor(size: number) {
    this.data = new Uint8Array(0);
    this.offset = new Uint32Array(size);
    this.capLen = new Uint32Array(size);
    this.origLen = new Uint32Array(size);
    this.iface = new Uint32Array(size);
    this.tsSec = new Float64Array(size);
    this.tsNsec = new Uint32Array(size);
    this.flags = new Uint8Array(size);
  }
}

export function batchSizeOption(size: number | undefined): number {
  const n = size ?? DEFAULT_BATCH_SIZE;
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`batch size ${n} is not a whole number ≥ 1`);
  return n;
}

/** Every packet of a batch through writer.write, keeping interface indices (CaptureWriter.writeBatch). */
export function writeBatchTo(writer: CaptureWriter, batch: PacketBatch): void {
  for (let i = 0; i < batch.count; i++) {
    writer.write(
      batch.data,
      batch.offset[i] ?? 0,
      batch.capLen[i] ?? 0,
      batch.origLen[i] ?? 0,
      batch.tsSec[i] ?? 0,
      batch.tsNsec[i] ?? 0,
      batch.iface[i] ?? 0,
    );
  }
}
