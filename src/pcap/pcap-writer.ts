// Writes classic pcap: one link type, µs or ns timestamps, either byte order.

import { writeBatchTo } from "./batch.js";
import { type ByteSink, OutputBuffer, checkSpan, copyInto } from "./byte-sink.js";
import { MAX_CAP_LEN_DEFAULT } from "./link-types.js";
import {
  F_LINK_TYPE,
  F_MAGIC,
  F_SIG_FIGS,
  F_SNAP_LEN,
  F_THIS_ZONE,
  F_VERSION_MAJOR,
  F_VERSION_MINOR,
  FILE_HEADER_LEN,
  MAGIC_MICRO,
  MAGIC_NANO,
  R_CAP_LEN,
  R_ORIG_LEN,
  R_TS_FRAC,
  R_TS_SEC,
  RECORD_HEADER_LEN,
  VERSION_MAJOR,
  VERSION_MINOR,
  ltField,
} from "./pcap-layout.js";
import type { CaptureWriter, PacketBatch, PcapFileHeader } from "./types.js";

export interface PcapWriterOptions {
  linkType: number;
  /** Default 262144. */
  snapLen?: number;
  /** ns magic 0xa1b23c4d; default µs (timestamps rounded down to the µs). */
  nanosecond?: boolean;
  /** Default little-endian. */
  bigEndian?: boolean;
  /** FCS bytes per packet to announce in the link-type field (even, ≤ 30). */
  fcsLen?: number;
  /** The whole link-type field, overriding linkType and fcsLen (byte-exact rewrites). */
  linkTypeField?: number;
  versionMajor?: number;
  versionMinor?: number;
  thisZone?: number;
  sigFigs?: number;
  /** Bytes buffered before a write to the file (default 1 MiB). */
  bufferSize?: number;
}

/** Writer options that reproduce a file header read by PcapReader byte for byte. */
export function pcapWriterOptionsFrom(header: PcapFileHeader): PcapWriterOptions {
  return {
    linkType: header.linkTypeField & 0xffff,
    linkTypeField: header.linkTypeField,
    snapLen: header.snapLen,
    nanosecond: header.nanosecond,
    bigEndian: header.bigEndian,
    versionMajor: header.versionMajor,
    versionMinor: header.versionMinor,
    thisZone: header.thisZone,
    sigFigs: header.sigFigs,
  };
}

const MAX_U32 = 0xffff_ffff;

/** The file header a writer with `options` starts its file with. */
export function pcapFileHeader(options: PcapWriterOptions): Uint8Array {
  const header = new Uint8Array(FILE_HEADER_LEN);
  const view = new DataView(header.buffer);
  const le = options.bigEndian !== true;
  view.setUint32(F_MAGIC, options.nanosecond === true ? MAGIC_NANO : MAGIC_MICRO, le);
  view.setUint16(F_VERSION_MAJOR, options.versionMajor ?? VERSION_MAJOR, le);
  view.setUint16(F_VERSION_MINOR, options.versionMinor ?? VERSION_MINOR, le);
  view.setInt32(F_THIS_ZONE, options.thisZone ?? 0, le);
  view.setUint32(F_SIG_FIGS, options.sigFigs ?? 0, le);
  view.setUint32(F_SNAP_LEN, options.snapLen ?? MAX_CAP_LEN_DEFAULT, le);
  view.setUint32(F_LINK_TYPE, options.linkTypeField ?? ltField(options.linkType, options.fcsLen ?? 0), le);
  return header;
}

export class PcapWriter implements CaptureWriter {
  readonly #out: OutputBuffer;
  readonly #le: boolean;
  readonly #nanosecond: boolean;

  constructor(target: string | ByteSink, options: PcapWriterOptions) {
    this.#out = new OutputBuffer(target, options.bufferSize);
    this.#le = options.bigEndian !== true;
    this.#nanosecond = options.nanosecond === true;
    const o = this.#out;
    o.reserve(FILE_HEADER_LEN);
    o.buf.set(pcapFileHeader(options), 0);
    o.pos = FILE_HEADER_LEN;
  }

  get bytesWritten(): number {
    return this.#out.bytesWritten;
  }

  write(data: Uint8Array, start: number, len: number, origLen: number, tsSec: number, tsNsec: number): void {
    checkSpan(data, start, len, origLen);
    if (!(tsSec >= 0 && tsSec <= MAX_U32))
      throw new RangeError(`timestamp ${tsSec} s does not fit in pcap's 32-bit seconds`);
    const o = this.#out;
    const le = this.#le;
    o.reserve(RECORD_HEADER_LEN + len);
    const at = o.pos;
    o.view.setUint32(at + R_TS_SEC, tsSec, le);
    o.view.setUint32(at + R_TS_FRAC, this.#nanosecond ? tsNsec : Math.floor(tsNsec / 1000), le);
    o.view.setUint32(at + R_CAP_LEN, len, le);
    o.view.setUint32(at + R_ORIG_LEN, origLen, le);
    copyInto(o.buf, at + RECORD_HEADER_LEN, data, start, len);
    o.pos = at + RECORD_HEADER_LEN + len;
  }

  /**
   * Appends records already in this file's format (its byte order and
   * timestamp unit), as a data plane that writes captures itself produces them.
   */
  appendRecords(data: Uint8Array, start: number, len: number): void {
    checkSpan(data, start, len, 0);
    this.#out.append(data.subarray(start, start + len));
  }

  writeBatch(batch: PacketBatch): void {
    writeBatchTo(this, batch);
  }

  close(): void {
    this.#out.close();
  }
}
