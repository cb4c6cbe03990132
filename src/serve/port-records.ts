// The records strata serve and its port process (port-helper.ts) exchange over
// a pipe: kind u8, port u8, flags u16 (bit 0: the frame was cut to the snapshot
// length), length u32, all little-endian, then `length` bytes.

export const RECORD = { FRAME: 1, OPENED: 2, FAILED: 3, SEND_ERROR: 4 } as const;
export const RECORD_HEADER = 8;
export const FLAG_CUT = 1;

/** One record, with its bytes copied. */
export function record(kind: number, port: number, body: Uint8Array, flags = 0): Buffer {
  const r = Buffer.allocUnsafe(RECORD_HEADER + body.length);
  r.writeUInt8(kind, 0);
  r.writeUInt8(port, 1);
  r.writeUInt16LE(flags, 2);
  r.writeUInt32LE(body.length, 4);
  r.set(body, RECORD_HEADER);
  return r;
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
