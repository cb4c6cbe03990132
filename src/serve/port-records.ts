// The records strata serve and its port process (port-helper.ts) exchange over
// a pipe: kind u8, port u8, flags u16 (bit 0: the frame was cut to the snapshot
// length), length u32, all little-endian, then `length` bytes.

/** DROPPED (the native port process only): u32, frames the kernel dropped since the last DROPPED (its ring was
 * full). */
export const RECORD = { FRAME: 1, OPENED: 2, FAILED: 3, SEND_ERROR: 4, DROPPED: 5 } as const;
export const RECORD_HEADER = 8;
export const FLAG_CUT = 1;

/** Bytes of a RecordWriter's slab: records are written into it one after another, and handed out in runs. */
export const SLAB_BYTES = 256 << 10;

/** One record, with its bytes copied. */
export function record(kind: number, port: number, body: Uint8Array, flags = 0): Buffer {
  const r = Buffer.allocUnsafe(RECORD_HEADER + body.length);
  writeRecord(r, 0, kind, port, body, flags);
  return r;
}

function writeRecord(to: Buffer, at: number, kind: number, port: number, body: Uint8Array, flags: number): void {
  to.writeUInt8(kind, at);
  to.writeUInt8(port, at + 1);
  to.writeUInt16LE(flags, at + 2);
  to.writeUInt32LE(body.length, at + 4);
  to.set(body, at + RECORD_HEADER);
}

/**
 * Records gathered for a pipe without a buffer of their own each: put() copies a record into a
 * slab, flush() hands `write` the records put since the last flush as one view of it, and the next
 * records go on after them, so a view handed out (which a pipe may hold until it drains) is never
 * written again. A record that does not fit in what is left of the slab flushes what is there and
 * starts a new slab (larger, for a record longer than a slab). Every view holds whole records.
 */
export class RecordWriter {
  readonly #write: (bytes: Buffer) => void;
  readonly #slabBytes: number;
  #slab: Buffer;
  /** Where the records not yet handed out start in the slab, and where they end. */
  #start = 0;
  #end = 0;
  #count = 0;

  constructor(write: (bytes: Buffer) => void, slabBytes = SLAB_BYTES) {
    this.#write = write;
    this.#slabBytes = slabBytes;
    this.#slab = Buffer.allocUnsafe(slabBytes);
  }

  /** Records put and not yet handed out, and their bytes. */
  get count(): number {
    return this.#count;
  }

  get bytes(): number {
    return this.#end - this.#start;
  }

  put(kind: number, port: number, body: Uint8Array, flags = 0): void {
    const len = RECORD_HEADER + body.length;
    if (this.#end + len > this.#slab.length) {
      this.flush();
      this.#slab = Buffer.allocUnsafe(Math.max(this.#slabBytes, len));
      this.#start = 0;
      this.#end = 0;
    }
    writeRecord(this.#slab, this.#end, kind, port, body, flags);
    this.#end += len;
    this.#count++;
  }

  /** Hands `write` the records put since the last flush, if any. */
  flush(): void {
    if (this.#end === this.#start) return;
    const bytes = this.#slab.subarray(this.#start, this.#end);
    this.#start = this.#end;
    this.#count = 0;
    this.#write(bytes);
  }

  /** Forgets the records put since the last flush (their pipe is gone); returns how many there were. */
  drop(): number {
    const n = this.#count;
    this.#start = this.#end;
    this.#count = 0;
    return n;
  }
}

/**
 * Splits a byte stream into records: feed() each chunk; `each` gets every whole record
 * (`body` is a view, valid during the call).
 */
export class RecordReader {
  #held: Buffer = Buffer.alloc(0);
  readonly #each: (kind: number, port: number, flags: number, body: Buffer) => void;

  constructor(each: (kind: number, port: number, flags: number, body: Buffer) => void) {
    this.#each = each;
  }

  feed(chunk: Buffer): void {
    const buf = this.#held.length === 0 ? chunk : Buffer.concat([this.#held, chunk]);
    let at = 0;
    while (at + RECORD_HEADER <= buf.length) {
      const len = buf.readUInt32LE(at + 4);
      if (at + RECORD_HEADER + len > buf.length) break;
      this.#each(
        buf.readUInt8(at),
        buf.readUInt8(at + 1),
        buf.readUInt16LE(at + 2),
        buf.subarray(at + RECORD_HEADER, at + RECORD_HEADER + len),
      );
      at += RECORD_HEADER + len;
    }
    this.#held = at === buf.length ? Buffer.alloc(0) : Buffer.from(buf.subarray(at));
  }
}
