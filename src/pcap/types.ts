// The capture API: what a reader yields and what a writer takes.
//
// Packets travel in batches, never one object per packet: a batch is a window on
// the reader's buffer plus parallel typed arrays, so a consumer can copy the
// whole span `data.subarray(offset[0], offset[n-1] + capLen[n-1])` into wasm
// memory with one set() and re-base the offsets. A batch is valid until the
// reader yields the next one (the buffer is reused).
//
// Timestamps on the hot path are (seconds, nanoseconds) pairs of plain numbers:
// exact (seconds < 2^53) and free of BigInt. `tsNs()` gives the bigint at the edges.

import type { AheadFile } from "./read-ahead.js";

export interface PacketBatch {
  /** The reader's buffer; packet i is data[offset[i] .. offset[i] + capLen[i]). */
  readonly data: Uint8Array;
  readonly count: number;
  readonly offset: Uint32Array;
  readonly capLen: Uint32Array;
  readonly origLen: Uint32Array;
  /** Interface index within the file (pcap: always 0; pcapng: numbered across sections). */
  readonly iface: Uint32Array;
  /** Whole seconds since 1970-01-01T00:00:00Z (with if_tsoffset applied). */
  readonly tsSec: Float64Array;
  /** Nanoseconds within the second, 0 ≤ tsNsec < 1e9. */
  readonly tsNsec: Uint32Array;
  /** Per-packet flags (PACKET_NO_TIMESTAMP, …). */
  readonly flags: Uint8Array;
  /** Index in the file of this batch's packet 0 (indices count from 0 per file). */
  readonly firstIndex: number;
}

/** The packet came from a block that carries no timestamp (pcapng SPB); tsSec/tsNsec are 0. */
export const PACKET_NO_TIMESTAMP = 1;

export type CaptureFormat = "pcap" | "pcapng";

export interface InterfaceInfo {
  /** Index within the file, as in PacketBatch.iface. */
  readonly index: number;
  /** pcapng section (0-based) the interface was declared in; 0 for pcap. */
  readonly section: number;
  /** The Interface ID blocks use for it: its place among its section's IDBs (pcapng restarts ids per section). */
  readonly idInSection: number;
  /** LINKTYPE_* value (the low 16 bits of the pcap header field). */
  readonly linkType: number;
  /** "ETHERNET", "RAW", "LINUX_SLL", … or "LINKTYPE_<n>" when unknown. */
  readonly linkTypeName: string;
  /** 0 = unlimited (pcapng allows it). */
  readonly snapLen: number;
  /** Bytes of frame check sequence at the end of each packet, when the file says so; else 0. */
  readonly fcsLen: number;
  /** Timestamp units per second (1e6, 1e9, 2^n …). */
  readonly tsUnitsPerSec: number;
  /** pcapng if_tsoffset, seconds; 0 for pcap. */
  readonly tsOffsetSec: number;
  /** pcapng if_name, when present. */
  readonly name?: string;
}

/** Seconds + nanoseconds to nanoseconds since 1970, exactly. */
export function tsNs(sec: number, nsec: number): bigint {
  return BigInt(sec) * 1_000_000_000n + BigInt(nsec);
}

/** A classic pcap file's header, as read; a writer given it reproduces the header byte for byte. */
export interface PcapFileHeader {
  readonly bigEndian: boolean;
  /** Magic 0xa1b23c4d (ns) rather than 0xa1b2c3d4 (µs). */
  readonly nanosecond: boolean;
  readonly versionMajor: number;
  readonly versionMinor: number;
  readonly thisZone: number;
  readonly sigFigs: number;
  readonly snapLen: number;
  /** The whole 32-bit link-type field: LINKTYPE_* in the low 16 bits, FCS bits above. */
  readonly linkTypeField: number;
}

/** How a classic pcap file's records read: byte order, timestamp unit, and the longest record allowed. */
export interface PcapFormat {
  readonly bigEndian: boolean;
  readonly nanosecond: boolean;
  readonly capLimit: number;
}

/** A classic pcap file's records for a caller that reads them in blocks of its own (PcapReader.blocks). */
export interface PcapBlocks {
  /** The file offset of the next record. */
  readonly offset: number;
  readonly format: PcapFormat;
  /** Reads up to `len` bytes at file offset `position` into buf[at …]; how many (0 at the end). */
  read(buf: Uint8Array, at: number, len: number, position: number): number;
  /** The file's size in bytes. */
  readonly size: number;
  /** The file, for a thread that reads it ahead (./read-ahead.ts). */
  readonly file?: AheadFile;
}

export interface ReaderOptions {
  /** Most packets per batch (default 256). */
  batchSize?: number;
  /** Bytes read from the file at a time (default 1 MiB). */
  chunkSize?: number;
}

/** A capture being read. Batches are windows on a reused buffer: see PacketBatch. */
export interface CaptureReader {
  /** The file name errors use. */
  readonly name: string;
  readonly format: CaptureFormat;
  /** Interfaces seen so far (pcap: one; pcapng: grows as IDBs are read). */
  readonly interfaces: readonly InterfaceInfo[];
  /** The pcap file header; undefined for pcapng. */
  readonly pcapHeader: PcapFileHeader | undefined;
  /** pcapng sections seen so far (pcap: 1). */
  readonly sections: number;
  /** Bytes of the file parsed so far, for progress. */
  readonly bytesRead: number;
  /** The file's size, or -1 when unknown (a pipe). */
  readonly fileSize: number;
  /** Every packet, in order; throws PcapError after the last good packet on damage. */
  batches(): Generator<PacketBatch, void, undefined>;
  /**
   * Passes over up to `n` whole packets after the last batch (which is then no
   * longer valid) without reading them into one; returns how many. It stops
   * early at the end, and before anything batches() would report as damage,
   * which the next batch then does. Only where the format allows it cheaply.
   */
  skip?(n: number): number;
  /** A regular pcap file's records, to read in blocks elsewhere; then seek() to go on where they stopped. */
  blocks?(): PcapBlocks | undefined;
  /** Goes on at the record at file offset `offset`, numbered `index` (after blocks()). */
  seek?(offset: number, index: number): void;
  close(): void;
}

/** A capture being written: pcap (one interface) or pcapng (interfaces added first). */
export interface CaptureWriter {
  /**
   * Appends one packet: data[start .. start+len) captured of origLen bytes on the wire,
   * at (tsSec, tsNsec). `iface` is the writer's interface index (pcap: ignored).
   */
  write(
    data: Uint8Array,
    start: number,
    len: number,
    origLen: number,
    tsSec: number,
    tsNsec: number,
    iface?: number,
  ): void;
  /** Appends every packet of a batch, keeping each packet's interface index. */
  writeBatch(batch: PacketBatch): void;
  /** Bytes handed to the file so far, including what is still buffered. */
  readonly bytesWritten: number;
  /** Writes out what is buffered and closes the file. */
  close(): void;
}
