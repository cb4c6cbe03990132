// trace.jsonl and, beside it, trace.idx: where each line of the trace starts,
// so that `strata trace DIR --packet N` reads one line, not the whole file.
//
// trace.idx, all numbers little-endian:
//   ┌──────────────────────┬─────────────────┬─────────────┐
//   │ magic "STRATIX1" 8 B │ traceBytes u64  │ entries u64 │   header, INDEX_HEADER_LEN = 24
//   └──────────────────────┴─────────────────┴─────────────┘
// then one entry per line of trace.jsonl, in the file's order (packets ascending):
//   ┌────────────┬────────────┐
//   │ packet u64 │ offset u64 │   INDEX_ENTRY_LEN = 16: the packet's number, the byte its line starts at
//   └────────────┴────────────┘
// The header is written last: an index whose traceBytes is not the trace's
// size (a run that died, a trace replaced or edited) is not used. Both files are
// made through --out's OutDir (never through a link), and the trace's CRC-32 is
// kept as it is written, for summary.json.

import { closeSync, fstatSync, openSync, readSync, writeSync } from "node:fs";
import { join } from "node:path";
import { describeIoError, InputError } from "../errors.js";
import { RunningCrc } from "./checksum.js";
import type { FilePlace } from "../out-dir.js";

export const TRACE_FILE = "trace.jsonl";
/** Beside the trace: where each packet's line starts. */
export const TRACE_INDEX_FILE = "trace.idx";

const MAGIC = Buffer.from("STRATIX1", "latin1");
export const INDEX_HEADER_LEN = 24;
export const INDEX_ENTRY_LEN = 16;

/** Bytes of trace lines (and of index entries) held before they are written. */
const FLUSH_AT = 1 << 20;
const ENTRIES_AT = FLUSH_AT / INDEX_ENTRY_LEN;

const TWO_32 = 2 ** 32;

function setU64(view: DataView, at: number, n: number): void {
  view.setUint32(at, n % TWO_32, true);
  view.setUint32(at + 4, Math.floor(n / TWO_32), true);
}

function getU64(view: DataView, at: number): number {
  return view.getUint32(at, true) + view.getUint32(at + 4, true) * TWO_32;
}

/** Where a TraceWriter's lines go: each with its packet's number and its length in bytes (its "\n" included). */
export interface TraceLines {
  line(packet: number, text: string, bytes: number): void;
  close?(): void;
}

/** Writes DIR/trace.jsonl and DIR/trace.idx together. */
export class TraceFile implements TraceLines {
  readonly #fd: number;
  readonly #index: number;
  readonly #check = new RunningCrc();
  #pending: string[] = [];
  #pendingBytes = 0;
  readonly #entries = new DataView(new ArrayBuffer(ENTRIES_AT * INDEX_ENTRY_LEN));
  #held = 0;
  /** Bytes of trace.jsonl written and pending: where the next line starts. */
  #bytes = 0;
  #lines = 0;
  #closed = false;

  /** `place`: --out, claimed for TRACE_FILE and TRACE_INDEX_FILE. */
  constructor(place: FilePlace) {
    const create = (name: string): number => {
      try {
        return place.create(name);
      } catch (err) {
        if (err instanceof InputError) throw err;
        throw new InputError(place.path(name), "", `cannot create: ${describeIoError(err)}`);
      }
    };
    this.#fd = create(TRACE_FILE);
    try {
      this.#index = create(TRACE_INDEX_FILE);
      writeSync(this.#index, new Uint8Array(INDEX_HEADER_LEN)); // no magic until close()
    } catch (err) {
      closeSync(this.#fd);
      throw err;
    }
  }

  /** Bytes of trace lines so far. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Lines (packets) so far. */
  get lines(): number {
    return this.#lines;
  }

  line(packet: number, text: string, bytes: number): void {
    this.#mark(packet, bytes);
    this.#pending.push(text);
    this.#pendingBytes += bytes;
    if (this.#pendingBytes >= FLUSH_AT) this.#flush();
  }

  /** Appends lines already joined: `text` holds one line per packet of `packets`, of `bytes[k]` bytes each. */
  append(text: string, packets: readonly number[], bytes: readonly number[]): void {
    const start = this.#bytes;
    packets.forEach((p, k) => this.#mark(p, bytes[k] ?? 0));
    this.#flush();
    this.#write(text, this.#bytes - start);
  }

  /** The CRC-32 (hex) of trace.jsonl; after close(). */
  digest(): string {
    return this.#check.hex();
  }

  /** Writes `text`, which the index says is `bytes` long. */
  #write(text: string, bytes: number): void {
    const data = Buffer.from(text);
    if (data.length !== bytes) throw new Error(`trace lines of ${data.length} bytes, indexed as ${bytes}`);
    this.#check.update(data);
    for (let done = 0; done < data.length;) done += writeSync(this.#fd, data, done, data.length - done);
  }

  #mark(packet: number, bytes: number): void {
    if (this.#held === ENTRIES_AT) this.#flushEntries();
    const at = this.#held++ * INDEX_ENTRY_LEN;
    setU64(this.#entries, at, packet);
    setU64(this.#entries, at + 8, this.#bytes);
    this.#bytes += bytes;
    this.#lines++;
  }

  #flush(): void {
    if (this.#pending.length === 0) return;
    this.#write(this.#pending.join(""), this.#pendingBytes);
    this.#pending = [];
    this.#pendingBytes = 0;
  }

  #flushEntries(): void {
    writeSync(this.#index, new Uint8Array(this.#entries.buffer, 0, this.#held * INDEX_ENTRY_LEN));
    this.#held = 0;
  }

  /** Writes what is held, then the index's header: from now on the index is used. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#flush();
      this.#flushEntries();
      const header = new DataView(new ArrayBuffer(INDEX_HEADER_LEN));
      MAGIC.forEach((b, i) => header.setUint8(i, b));
      setU64(header, 8, this.#bytes);
      setU64(header, 16, this.#lines);
      writeSync(this.#index, new Uint8Array(header.buffer), 0, INDEX_HEADER_LEN, 0);
    } finally {
      closeSync(this.#fd);
      closeSync(this.#index);
    }
  }
}

/** What trace.idx says of a packet: its line (text without "\n", number from 1), or, when it is not in the trace, what
 * the trace holds. */
export type Indexed =
  | { readonly found: true; readonly text: string; readonly line: number }
  | { readonly found: false; readonly lines: number; readonly first: number; readonly last: number };

/**
 * Packet `packet`'s line of DIR/trace.jsonl, found through DIR/trace.idx: a binary search
 * reading 16 bytes a step, then the line's bytes. Undefined when the index cannot be used — there
 * is none (an older run), it is not the trace's (a run that did not finish, a trace replaced or
 * edited), or the bytes it points to are not one line of at most `lineMax` bytes: then the
 * caller reads the trace through.
 */
export function readIndexed(dir: string, packet: number, lineMax: number): Indexed | undefined {
  let index: number;
  let trace: number;
  try {
    index = openSync(join(dir, TRACE_INDEX_FILE), "r");
  } catch {
    return undefined;
  }
  try {
    trace = openSync(join(dir, TRACE_FILE), "r");
  } catch {
    closeSync(index);
    return undefined;
  }
  try {
    const read = (fd: number, at: number, len: number): Buffer | undefined => {
      const buf = Buffer.alloc(len);
      return readSync(fd, buf, 0, len, at) === len ? buf : undefined;
    };
    const view = (b: Buffer): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength);
    const header = read(index, 0, INDEX_HEADER_LEN);
    if (header === undefined || !header.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
    const lines = getU64(view(header), 16);
    const traceBytes = getU64(view(header), 8);
    if (traceBytes !== fstatSync(trace).size || fstatSync(index).size !== INDEX_HEADER_LEN + lines * INDEX_ENTRY_LEN)
      return undefined;
    const entry = (k: number): { packet: number; offset: number } => {
      const b = read(index, INDEX_HEADER_LEN + k * INDEX_ENTRY_LEN, INDEX_ENTRY_LEN);
      return b === undefined
        ? { packet: Number.NaN, offset: Number.NaN }
        : { packet: getU64(view(b), 0), offset: getU64(view(b), 8) };
    };
    let lo = 0;
    let hi = lines - 1;
    while (lo <= hi) {
      const mid = Math.floor((lo + hi) / 2);
      const e = entry(mid);
      if (e.packet < packet) lo = mid + 1;
      else if (e.packet > packet) hi = mid - 1;
      else if (e.packet === packet) {
        const end = mid + 1 < lines ? entry(mid + 1).offset : traceBytes;
        if (!(end > e.offset && end - e.offset <= lineMax + 2)) return undefined;
        const bytes = read(trace, e.offset, end - e.offset);
        if (bytes === undefined || bytes.indexOf(10) !== bytes.length - 1) return undefined;
        const len = bytes.length > 1 && bytes[bytes.length - 2] === 13 ? bytes.length - 2 : bytes.length - 1;
        return { found: true, text: bytes.toString("utf8", 0, len), line: mid + 1 };
      } else return undefined;
    }
    return {
      found: false,
      lines,
      first: lines > 0 ? entry(0).packet : 0,
      last: lines > 0 ? entry(lines - 1).packet : 0,
    };
  } finally {
    closeSync(index);
    closeSync(trace);
  }
}
