// A chunk's packets and a chunk's outputs as bytes, for a Redis key (./protocol.ts has the keys) or a file. A chunk is
// the parts of input batches a one-thread replay would run for its packets (each part a batch or a slice of one, as
// src/run/chunk-runner.ts runs them); its outputs are what the engine wrote for them: each recording's records, the
// trace lines, the counters. The packets are encoded straight into one reused buffer (PacketsWriter); the outputs are
// pieces (a head, each recording's records, the trace's text), joined for a Redis key (one string: cheaper for Redis's
// one thread than a list's items) and written end to end into a file. A reader takes the one buffer either way, viewing
// rather than copying. Numbers are little-endian (checked once: every machine a worker runs on is); a payload that does
// not read back whole is a ChunkDamaged, never a wrong packet.

import { endianness } from "node:os";
import type { Counters } from "../engine/summary.js";
import type { ChunkLines } from "../run/chunk-runner.js";
import type { InputBatch } from "../wasm/runner.js";

/** First word of a chunk's packets, and of its outputs: "SQC1", "SQR1". */
const PACKETS_MAGIC = 0x31435153;
const OUTPUTS_MAGIC = 0x31525153;

/** A payload that does not decode: damaged in transit or storage, or from another strata. */
export class ChunkDamaged extends Error {}

if (endianness() !== "LE") throw new Error("strata's queue payloads are little-endian: this machine is not");

/** Per packet: offset, capLen, origLen, tsNsec, endpoint (u32 each) and tsSec (f64). */
const PACKET_META_BYTES = 5 * 4 + 8;

/** Bytes encodePart() writes for `p`. */
function partBytes(p: InputBatch): number {
  let dataLen = 0;
  for (let i = 0; i < p.count; i++) dataLen += p.capLen[i] ?? 0;
  return 8 + p.count * PACKET_META_BYTES + dataLen;
}

/**
 * One part of a chunk (a batch, or a slice of one) as bytes at `at` of `out` (partBytes() of them): its count and data
 * length, its packets' fields, their bytes. Written at once, for a batch is valid only until the next is read.
 */
function encodePart(p: InputBatch, out: Buffer, at: number): number {
  const n = p.count;
  const tsSec = Float64Array.from(p.tsSec.subarray(0, n));
  const u32 = new Uint32Array(5 * n);
  u32.set(p.capLen.subarray(0, n), n);
  u32.set(p.origLen.subarray(0, n), 2 * n);
  u32.set(p.tsNsec.subarray(0, n), 3 * n);
  if (typeof p.endpoint === "number") u32.fill(p.endpoint, 4 * n);
  else u32.set(p.endpoint.subarray(0, n), 4 * n);
  // The packets' offsets in the part's data: end to end.
  let dataLen = 0;
  for (let i = 0; i < n; i++) {
    u32[i] = dataLen;
    dataLen += u32[n + i] ?? 0;
  }
  out.writeUInt32LE(n, at);
  out.writeUInt32LE(dataLen, at + 4);
  at += 8;
  at += Buffer.from(tsSec.buffer).copy(out, at);
  at += Buffer.from(u32.buffer).copy(out, at);
  // Packets that lie end to end in the batch's data (as a capture's batch holds them) are copied as one run.
  for (let i = 0; i < n;) {
    const start = p.offset[i] ?? 0;
    let end = start + (p.capLen[i] ?? 0);
    for (i++; i < n && p.offset[i] === end; i++) end += p.capLen[i] ?? 0;
    out.set(p.data.subarray(start, end), at);
    at += end - start;
  }
  return at;
}

/**
 * A chunk's packets as one payload, its parts encoded straight into it as they are read (no part's own buffer, no
 * join): a head (its magic, its count of parts), then each part. One buffer serves chunk after chunk (grown, by
 * doubling, to the largest): a payload taken is valid until the next part is added.
 */
export class PacketsWriter {
  #buf = Buffer.allocUnsafe(0);
  #used = 8;
  #parts = 0;

  add(p: InputBatch): void {
    const need = this.#used + partBytes(p);
    if (need > this.#buf.length) {
      const grown = Buffer.allocUnsafe(Math.max(need, 2 * this.#buf.length));
      this.#buf.copy(grown, 0, 0, this.#used);
      this.#buf = grown;
    }
    this.#used = encodePart(p, this.#buf, this.#used);
    this.#parts++;
  }

  /** Parts added since the last take(). */
  get parts(): number {
    return this.#parts;
  }

  /** The payload of the parts added since the last take() (a view on the writer's buffer), and a new one begun. */
  take(): Buffer {
    if (this.#buf.length < 8) this.#buf = Buffer.allocUnsafe(8);
    this.#buf.writeUInt32LE(PACKETS_MAGIC, 0);
    this.#buf.writeUInt32LE(this.#parts, 4);
    const payload = this.#buf.subarray(0, this.#used);
    [this.#used, this.#parts] = [8, 0];
    return payload;
  }
}

/** A chunk's packets as one payload, its parts from `parts` (a new writer's: for tests). */
export function chunkPayload(parts: readonly InputBatch[]): Buffer {
  const w = new PacketsWriter();
  for (const p of parts) w.add(p);
  return Buffer.from(w.take());
}

/** Bytes of a payload's pieces. */
export function piecesLength(pieces: readonly Uint8Array[]): number {
  return pieces.reduce((sum, p) => sum + p.length, 0);
}

/** Reads a payload's fields in order, as views on it, copied only where a typed array needs an alignment. */
class Reader {
  readonly #b: Buffer;
  #at = 0;

  constructor(b: Buffer) {
    this.#b = b;
  }

  /** The next `n` bytes, as a view; ChunkDamaged if the payload has not got them. */
  bytes(n: number): Buffer {
    const has = this.left;
    if (n > has) throw new ChunkDamaged(`the payload ends at byte ${this.#b.length}, ${n - has} short`);
    this.#at += n;
    return this.#b.subarray(this.#at - n, this.#at);
  }

  u32(): number {
    return this.bytes(4).readUInt32LE(0);
  }

  /** The next `n` values of 8 (f64) or 4 (u32) bytes, in an array on the payload itself if it is aligned for them. */
  array<T>(n: number, size: 4 | 8, make: (buffer: ArrayBuffer, offset: number, length: number) => T): T {
    const b = this.bytes(n * size);
    if (b.byteOffset % size === 0) return make(b.buffer as ArrayBuffer, b.byteOffset, n);
    const copy = new ArrayBuffer(n * size);
    new Uint8Array(copy).set(b);
    return make(copy, 0, n);
  }

  /** Bytes left unread. */
  get left(): number {
    return this.#b.length - this.#at;
  }
}

/** The parts chunkPayload() wrote; ChunkDamaged if the payload does not read back whole. */
export function decodeChunk(payload: Buffer): InputBatch[] {
  const r = new Reader(payload);
  const magic = r.left >= 8 ? r.u32() : 0;
  if (magic !== PACKETS_MAGIC) throw new ChunkDamaged("not a strata chunk of packets");
  const parts: InputBatch[] = [];
  const count = r.u32();
  for (let k = 0; k < count; k++) {
    if (r.left < 8) throw new ChunkDamaged(`part ${k} of ${count} is missing`);
    const n = r.u32();
    const dataLen = r.u32();
    const tsSec = r.array(n, 8, (b, o, l) => new Float64Array(b, o, l));
    const u32 = r.array(5 * n, 4, (b, o, l) => new Uint32Array(b, o, l));
    const data = r.bytes(dataLen); // bytes need no alignment
    const offset = u32.subarray(0, n);
    const capLen = u32.subarray(n, 2 * n);
    for (let i = 0; i < n; i++)
      if ((offset[i] ?? 0) + (capLen[i] ?? 0) > dataLen)
        throw new ChunkDamaged(`part ${k}: packet ${i} lies past its data`);
    parts.push({
      data,
      count: n,
      offset,
      capLen,
      origLen: u32.subarray(2 * n, 3 * n),
      tsNsec: u32.subarray(3 * n, 4 * n),
      endpoint: u32.subarray(4 * n, 5 * n),
      tsSec,
    });
  }
  if (r.left > 0) throw new ChunkDamaged(`${r.left} bytes after the last part`);
  return parts;
}

/** What the engine wrote for a chunk: each recording's records (in the order of their first), trace lines, counters. */
export interface ChunkOutputs {
  /** Each recording's records and their CRC-32 (worked out on the worker: the coordinator's merge only combines). */
  readonly records: readonly { readonly recording: number; readonly bytes: Uint8Array; readonly crc: number }[];
  readonly lines: ChunkLines;
  readonly counters: Counters;
}

/** Counters as JSON: the hits' Map as entries. */
interface CountersJson extends Omit<Counters, "hits"> {
  readonly hits: [number, number[]][];
}

interface OutputsHead {
  readonly records: [number, number, number][];
  readonly packets: number[];
  readonly bytes: number[];
  readonly textBytes: number;
  readonly counters: CountersJson;
}

/** A chunk's outputs as pieces: a JSON head (its length first), each recording's records, the trace text. */
export function encodeOutputs(o: ChunkOutputs): Buffer[] {
  const text = Buffer.from(o.lines.text, "utf8");
  const head: OutputsHead = {
    records: o.records.map((r) => [r.recording, r.bytes.length, r.crc]),
    packets: o.lines.packets,
    bytes: o.lines.bytes,
    textBytes: text.length,
    counters: { ...o.counters, hits: [...o.counters.hits] },
  };
  const json = Buffer.from(JSON.stringify(head), "utf8");
  const lead = Buffer.allocUnsafe(8 + json.length);
  lead.writeUInt32LE(OUTPUTS_MAGIC, 0);
  lead.writeUInt32LE(json.length, 4);
  json.copy(lead, 8);
  const records = o.records.map((r) => Buffer.from(r.bytes.buffer, r.bytes.byteOffset, r.bytes.length));
  return [lead, ...records, text];
}

/** The outputs encodeOutputs() wrote; ChunkDamaged if the payload does not read back whole. */
export function decodeOutputs(payload: Buffer): ChunkOutputs {
  const r = new Reader(payload);
  const magic = r.left >= 8 ? r.u32() : 0;
  if (magic !== OUTPUTS_MAGIC) throw new ChunkDamaged("not a strata chunk's outputs");
  let head: OutputsHead;
  try {
    head = JSON.parse(r.bytes(r.u32()).toString("utf8")) as OutputsHead;
  } catch (err) {
    if (err instanceof ChunkDamaged) throw err;
    throw new ChunkDamaged("the outputs' head is not JSON");
  }
  // Views on the payload, not copies: bytes need no alignment.
  const records = head.records.map(([recording, len, crc]) => ({ recording, bytes: r.bytes(len), crc }));
  const text = r.bytes(head.textBytes).toString("utf8");
  if (r.left > 0) throw new ChunkDamaged("the outputs' length is not what their head says");
  return {
    records,
    lines: { text, packets: head.packets, bytes: head.bytes },
    counters: { ...head.counters, hits: new Map(head.counters.hits) },
  };
}
