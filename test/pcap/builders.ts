// Capture files built byte by byte for tests, independent of src/pcap's writers,
// so a reader test never trusts the code it is checking. Each builder takes the
// fields a case cares about and defaults the rest.

import { existsSync, readFileSync } from "node:fs";
import { openCaptureBytes } from "../../src/pcap/reader.js";
import type { CaptureReader, ReaderOptions } from "../../src/pcap/types.js";

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Distinct bytes so a misplaced window shows: (seed + i) & 0xff. */
export function payload(len: number, seed = 0): Uint8Array {
  return Uint8Array.from({ length: len }, (_, i) => (seed + i * 7) & 0xff);
}

class Bytes {
  readonly parts: number[] = [];
  constructor(readonly le: boolean) {}
  u8(v: number): this {
    this.parts.push(v & 0xff);
    return this;
  }
  u16(v: number): this {
    const b = [v & 0xff, (v >>> 8) & 0xff];
    this.parts.push(...(this.le ? b : b.reverse()));
    return this;
  }
  u32(v: number): this {
    const b = [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];
    this.parts.push(...(this.le ? b : b.reverse()));
    return this;
  }
  bytes(b: Uint8Array): this {
    for (const x of b) this.parts.push(x);
    return this;
  }
  pad4(): this {
    while (this.parts.length % 4 !== 0) this.parts.push(0);
    return this;
  }
  done(): Uint8Array {
    return Uint8Array.from(this.parts);
  }
}

// --- pcap ---

export interface PcapHeaderSpec {
  le?: boolean;
  nano?: boolean;
  magic?: number;
  versionMajor?: number;
  snapLen?: number;
  linkTypeField?: number;
}

export function pcapHeader(h: PcapHeaderSpec = {}): Uint8Array {
  const b = new Bytes(h.le ?? true);
  return b
    .u32(h.magic ?? (h.nano === true ? 0xa1b23c4d : 0xa1b2c3d4))
    .u16(h.versionMajor ?? 2)
    .u16(4)
    .u32(0)
    .u32(0)
    .u32(h.snapLen ?? 65535)
    .u32(h.linkTypeField ?? 1)
    .done();
}

export interface PcapRecordSpec {
  sec?: number;
  frac?: number;
  data?: Uint8Array;
  /** Overrides data.length in the header (damage). */
  capLen?: number;
  origLen?: number;
}

export function pcapRecord(r: PcapRecordSpec, le = true): Uint8Array {
  const data = r.data ?? payload(60);
  return new Bytes(le)
    .u32(r.sec ?? 1_700_000_000)
    .u32(r.frac ?? 0)
    .u32(r.capLen ?? data.length)
    .u32(r.origLen ?? data.length)
    .bytes(data)
    .done();
}

export function pcapFile(h: PcapHeaderSpec, records: PcapRecordSpec[]): Uint8Array {
  return concat(pcapHeader(h), ...records.map((r) => pcapRecord(r, h.le ?? true)));
}

// --- pcapng ---

export interface BlockSpec {
  le?: boolean;
  /** Overrides the leading total length. */
  len?: number;
  /** Overrides the trailing total length. */
  trailingLen?: number;
}

export function block(type: number, body: Uint8Array, spec: BlockSpec = {}): Uint8Array {
  const le = spec.le ?? true;
  const padded = new Bytes(le).bytes(body).pad4().done();
  const len = 12 + padded.length;
  return new Bytes(le)
    .u32(type)
    .u32(spec.len ?? len)
    .bytes(padded)
    .u32(spec.trailingLen ?? spec.len ?? len)
    .done();
}

export type Option = [code: number, value: Uint8Array];

export function options(le: boolean, opts: Option[]): Uint8Array {
  if (opts.length === 0) return new Uint8Array(0);
  const b = new Bytes(le);
  for (const [code, value] of opts) b.u16(code).u16(value.length).bytes(value).pad4();
  return b.u16(0).u16(0).done();
}

export function shb(spec: BlockSpec & { major?: number; bom?: number; opts?: Option[] } = {}): Uint8Array {
  const le = spec.le ?? true;
  const body = new Bytes(le)
    .u32(spec.bom ?? 0x1a2b3c4d)
    .u16(spec.major ?? 1)
    .u16(0)
    .u32(0xffffffff)
    .u32(0xffffffff)
    .bytes(options(le, spec.opts ?? []))
    .done();
  return block(0x0a0d0d0a, body, spec);
}

export function idb(spec: BlockSpec & { linkType?: number; snapLen?: number; opts?: Option[] } = {}): Uint8Array {
  const le = spec.le ?? true;
  const body = new Bytes(le)
    .u16(spec.linkType ?? 1)
    .u16(0)
    .u32(spec.snapLen ?? 0)
    .bytes(options(le, spec.opts ?? []))
    .done();
  return block(1, body, spec);
}

export interface PacketBlockSpec extends BlockSpec {
  iface?: number;
  tsHi?: number;
  tsLo?: number;
  data?: Uint8Array;
  capLen?: number;
  origLen?: number;
}

export function epb(spec: PacketBlockSpec = {}): Uint8Array {
  return packetBlock(6, spec);
}

/** The obsolete Packet Block: a 16-bit interface id and a drops count. */
export function pb(spec: PacketBlockSpec = {}): Uint8Array {
  return packetBlock(2, spec);
}

function packetBlock(type: 2 | 6, spec: PacketBlockSpec): Uint8Array {
  const b = new Bytes(spec.le ?? true);
  const data = spec.data ?? payload(60);
  if (type === 6) b.u32(spec.iface ?? 0);
  else b.u16(spec.iface ?? 0).u16(0);
  const body = b
    .u32(spec.tsHi ?? 0)
    .u32(spec.tsLo ?? 0)
    .u32(spec.capLen ?? data.length)
    .u32(spec.origLen ?? data.length)
    .bytes(data)
    .done();
  return block(type, body, spec);
}

export function spb(spec: BlockSpec & { data?: Uint8Array; origLen?: number } = {}): Uint8Array {
  const le = spec.le ?? true;
  const data = spec.data ?? payload(60);
  const body = new Bytes(le)
    .u32(spec.origLen ?? data.length)
    .bytes(data)
    .done();
  return block(3, body, spec);
}

export function u8(v: number): Uint8Array {
  return Uint8Array.of(v);
}

export function u64(v: bigint, le = true): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt.asUintN(64, v), le);
  return out;
}

export function text(s: string): Uint8Array {
  return new TextEncoder().encode(s);
}

// --- reading back ---

export interface ReadPacket {
  index: number;
  iface: number;
  capLen: number;
  origLen: number;
  /** Nanoseconds since 1970 as a string, or null without a timestamp. */
  tsNs: string | null;
  flags: number;
  hex: string;
}

export interface ReadResult {
  packets: ReadPacket[];
  error: unknown;
  reader: CaptureReader | undefined;
}

export function hex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.length).toString("hex");
}

/** The packets of a pcap file as strata writes them (little-endian), read here, not with strata's reader; none if there
 * is no file. */
export function pcapPackets(file: string): Buffer[] {
  if (!existsSync(file)) return [];
  const b = readFileSync(file);
  const out: Buffer[] = [];
  for (let at = 24; at + 16 <= b.length;) {
    const len = b.readUInt32LE(at + 8);
    out.push(b.subarray(at + 16, at + 16 + len));
    at += 16 + len;
  }
  return out;
}

/** Reads everything a reader yields, then the error it ends with (if any). */
export function drain(reader: CaptureReader): ReadResult {
  const packets: ReadPacket[] = [];
  let error: unknown;
  try {
    for (const b of reader.batches()) {
      for (let i = 0; i < b.count; i++) {
        const off = b.offset[i] ?? 0;
        const cap = b.capLen[i] ?? 0;
        const flags = b.flags[i] ?? 0;
        packets.push({
          index: b.firstIndex + i,
          iface: b.iface[i] ?? 0,
          capLen: cap,
          origLen: b.origLen[i] ?? 0,
          tsNs: flags & 1 ? null : String(BigInt(b.tsSec[i] ?? 0) * 1_000_000_000n + BigInt(b.tsNsec[i] ?? 0)),
          flags,
          hex: hex(b.data.subarray(off, off + cap)),
        });
      }
    }
  } catch (err) {
    error = err;
  } finally {
    reader.close();
  }
  return { packets, error, reader };
}

/** Opens bytes as a capture and drains it; an error at open lands in `error` too. */
export function readBytes(bytes: Uint8Array, options: ReaderOptions = {}, name = "test.cap"): ReadResult {
  let reader: CaptureReader;
  try {
    reader = openCaptureBytes(bytes, name, options);
  } catch (err) {
    return { packets: [], error: err, reader: undefined };
  }
  return drain(reader);
}
