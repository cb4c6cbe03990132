// A chunk's packets and a chunk's outputs as bytes, for a Redis key (./protocol.ts has the keys).
// A chunk is the parts of input batches a one-thread replay would run for its packets (each part
// a batch or a slice of one, as src/run/chunk-runner.ts runs them); its outputs are what the
// engine wrote for them: each recording's records, the trace lines, the counters. Numbers are
// little-endian (checked once: every machine a worker runs on is); a payload that does not read
// back whole is a ChunkDamaged, never a wrong packet.

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

/**
 * One part of a chunk (a batch, or a slice of one) as bytes: its count and data length, its packets' fields, their
 * bytes. Made at once, for a batch is valid only until the next is read.
 */
export function encodePart(p: InputBatch): Buffer {
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
  const out = Buffer.allocUnsafe(8 + n * PACKET_META_BYTES + dataLen);
  out.writeUInt32LE(n, 0);
  out.writeUInt32LE(dataLen, 4);
  let at = 8;
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
  return out;
}

/** A chunk's packets as one payload: its parts, each from encodePart(). */
export function chunkPayload(parts: readonly Buffer[]): Buffer {
  const head = Buffer.allocUnsafe(8);
  head.writeUInt32LE(PACKETS_MAGIC, 0);
  head.writeUInt32LE(parts.length, 4);
  return Buffer.concat([head, ...parts]);
}

/** ChunkDamaged unless `b` holds `n` bytes at `at`. */
function need(b: Buffer, at: number, n: number): void {
  if (at + n > b.length) throw new ChunkDamaged(`the payload ends at byte ${b.length}, ${at + n - b.length} short`);
}

/** Reads `n` bytes at `at` of `b` into a fresh, aligned buffer. */
function take(b: Buffer, at: number, n: number): ArrayBuffer {
  need(b, at, n);
  const copy = new ArrayBuffer(n);
  new Uint8Array(copy).set(b.subarray(at, at + n));
  return copy;
}

/** The parts encodeChunk() wrote; ChunkDamaged if the payload does not read back whole. */
export function decodeChunk(b: Buffer): InputBatch[] {
  if (b.length < 8 || b.readUInt32LE(0) !== PACKETS_MAGIC) throw new ChunkDamaged("not a strata chunk of packets");
  const parts: InputBatch[] = [];
  const count = b.readUInt32LE(4);
  let at = 8;
  for (let k = 0; k < count; k++) {
    if (at + 8 > b.length) throw new ChunkDamaged(`part ${k} of ${count} is missing`);
    const n = b.readUInt32LE(at);
    const dataLen = b.readUInt32LE(at + 4);
    at += 8;
    const tsSec = new Float64Array(take(b, at, 8 * n));
    at += 8 * n;
    const u32 = new Uint32Array(take(b, at, 20 * n));
    at += 20 * n;
    need(b, at, dataLen);
    const data = b.subarray(at, at + dataLen); // a view: bytes need no alignment
    at += dataLen;
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
  if (at !== b.length) throw new ChunkDamaged(`${b.length - at} bytes after the last part`);
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

/** A chunk's outputs as one payload: a JSON head (its length first), the records, the trace text. */
export function encodeOutputs(o: ChunkOutputs): Buffer {
  const text = Buffer.from(o.lines.text, "utf8");
  const head: OutputsHead = {
    records: o.records.map((r) => [r.recording, r.bytes.length, r.crc]),
    packets: o.lines.packets,
    bytes: o.lines.bytes,
    textBytes: text.length,
    counters: { ...o.counters, hits: [...o.counters.hits] },
  };
  const json = Buffer.from(JSON.stringify(head), "utf8");
  const lead = Buffer.allocUnsafe(8);
  lead.writeUInt32LE(OUTPUTS_MAGIC, 0);
  lead.writeUInt32LE(json.length, 4);
  return Buffer.concat([lead, json, ...o.records.map((r) => r.bytes), text]);
}

/** The outputs encodeOutputs() wrote; ChunkDamaged if the payload does not read back whole. */
export function decodeOutputs(b: Buffer): ChunkOutputs {
  if (b.length < 8 || b.readUInt32LE(0) !== OUTPUTS_MAGIC) throw new ChunkDamaged("not a strata chunk's outputs");
  const jsonLen = b.readUInt32LE(4);
  let head: OutputsHead;
  try {
    head = JSON.parse(b.toString("utf8", 8, 8 + jsonLen)) as OutputsHead;
  } catch {
    throw new ChunkDamaged("the outputs' head is not JSON");
  }
  let at = 8 + jsonLen;
  // Views on the payload, not copies: bytes need no alignment.
  const records = head.records.map(([recording, len, crc]) => {
    need(b, at, len);
    const bytes = b.subarray(at, at + len);
    at += len;
    return { recording, bytes, crc };
  });
  if (at + head.textBytes !== b.length) throw new ChunkDamaged("the outputs' length is not what their head says");
  const text = b.toString("utf8", at, at + head.textBytes);
  return {
    records,
    lines: { text, packets: head.packets, bytes: head.bytes },
    counters: { ...head.counters, hits: new Map(head.counters.hits) },
  };
}
