// What the pcap and pcapng readers share: the file, its chunk buffer and the reused batch.

import { MutableBatch } from "./batch.js";
import type { ChunkBuffer } from "./byte-source.js";

export abstract class ReaderBase {
  readonly name: string;
  protected readonly chunks: ChunkBuffer;
  protected readonly batch: MutableBatch;
  readonly #fileSize: number;

  constructor(name: string, chunks: ChunkBuffer, fileSize: number, batchSize: number) {
    this.name = name;
    this.chunks = chunks;
    this.#fileSize = fileSize;
    this.batch = new MutableBatch(batchSize);
  }

  get bytesRead(): number {
    return this.chunks.offset;
  }

  get fileSize(): number {
    return this.#fileSize;
  }

  close(): void {
    this.chunks.close();
  }

  /** The batch as a window of `count` packets on the current buffer, numbered from `firstIndex`. */
  protected publish(count: number, firstIndex: number): MutableBatch {
    const b = this.batch;
    b.data = this.chunks.buf;
    b.count = count;
    b.firstIndex = firstIndex;
    return b;
  }
}
