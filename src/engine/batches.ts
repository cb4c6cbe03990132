// Batches as the engine takes them: packets gathered one at a time into the
// next batch (BatchQueue: a live port's frames, a controller's packet-outs),
// and a batch cut into parts (sliceBatch: at update times, at chunk ends).

import type { InputBatch } from "../wasm/runner.js";

/** Packets [from, to) of `b`, sharing its data. */
export function sliceBatch(b: InputBatch, from: number, to = b.count): InputBatch {
  return {
    data: b.data,
    count: to - from,
    offset: b.offset.subarray(from, to),
    capLen: b.capLen.subarray(from, to),
    origLen: b.origLen.subarray(from, to),
    tsSec: b.tsSec.subarray(from, to),
    tsNsec: b.tsNsec.subarray(from, to),
    endpoint: typeof b.endpoint === "number" ? b.endpoint : b.endpoint.subarray(from, to),
  };
}

/**
 * Packets gathered for the next batch: one buffer and one array per field, allocated once
 * (a frame longer than the buffer grows it). The buffer is allocated at the first packet, not before: an engine
 * that only runs whole batches (strata run, the tests' thousands of engines) never makes its megabyte.
 */
export class BatchQueue {
  count = 0;
  #bytes = 0;
  #data = new Uint8Array(0);
  /** The buffer's length, allocated or not yet: the bytes a batch may hold (a longer frame grows it). */
  #room: number;
  readonly #max: number;
  readonly #offset: Uint32Array;
  readonly #capLen: Uint32Array;
  readonly #origLen: Uint32Array;
  readonly #tsSec: Float64Array;
  readonly #tsNsec: Uint32Array;
  readonly #endpoint: Uint32Array;

  constructor(packets: number, bytes: number) {
    this.#max = packets;
    this.#room = bytes;
    this.#offset = new Uint32Array(packets);
    this.#capLen = new Uint32Array(packets);
    this.#origLen = new Uint32Array(packets);
    this.#tsSec = new Float64Array(packets);
    this.#tsNsec = new Uint32Array(packets);
    this.#endpoint = new Uint32Array(packets);
  }

  get full(): boolean {
    return this.count >= this.#max;
  }

  /** Whether a `len`-byte packet fits beside what is queued (an empty queue takes any). */
  fits(len: number): boolean {
    return this.count === 0 || this.#bytes + len <= this.#room;
  }

  push(endpoint: number, data: Uint8Array, len: number, origLen: number, sec: number, nsec: number): void {
    if (this.#bytes + len > this.#room) this.#room = Math.max(2 * this.#room, this.#bytes + len);
    if (this.#data.length < this.#room) {
      const grown = new Uint8Array(this.#room);
      grown.set(this.#data.subarray(0, this.#bytes));
      this.#data = grown;
    }
    const k = this.count;
    this.#data.set(data.subarray(0, len), this.#bytes);
    this.#offset[k] = this.#bytes;
    this.#capLen[k] = len;
    this.#origLen[k] = origLen;
    this.#tsSec[k] = sec;
    this.#tsNsec[k] = nsec;
    this.#endpoint[k] = endpoint;
    this.#bytes += len;
    this.count++;
  }

  take(): InputBatch {
    return {
      data: this.#data,
      count: this.count,
      offset: this.#offset,
      capLen: this.#capLen,
      origLen: this.#origLen,
      tsSec: this.#tsSec,
      tsNsec: this.#tsNsec,
      endpoint: this.#endpoint,
    };
  }

  reset(): void {
    this.count = 0;
    this.#bytes = 0;
  }
}
