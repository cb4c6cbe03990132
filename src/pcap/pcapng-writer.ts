// Writes pcapng: one section, interfaces as the caller adds them, packets as EPBs.

import { writeBatchTo } from "./batch.js";
import { type ByteSink, OutputBuffer, checkSpan, copyInto } from "./byte-sink.js";
import {
  B_TOTAL_LEN,
  B_TYPE,
  BLOCK_TRAILER_LEN,
  BT_EPB,
  BT_IDB,
  BT_SHB,
  BYTE_ORDER_MAGIC,
  EPB_CAP_LEN,
  EPB_DATA,
  EPB_IFACE,
  EPB_MIN_LEN,
  EPB_ORIG_LEN,
  EPB_TS_HI,
  EPB_TS_LO,
  IDB_LINK_TYPE,
  IDB_OPTIONS,
  IDB_RESERVED,
  IDB_SNAP_LEN,
  IF_FCSLEN,
  IF_NAME,
  IF_TSRESOL,
  OPT_ENDOFOPT,
  OPT_LEN,
  OPT_VALUE,
  PCAPNG_VERSION_MAJOR,
  PCAPNG_VERSION_MINOR,
  SHB_BYTE_ORDER,
  SHB_MIN_LEN,
  SHB_OPTIONS,
  SHB_SECTION_LEN,
  SHB_VERSION_MAJOR,
  SHB_VERSION_MINOR,
  pad4,
} from "./pcapng-layout.js";
import {
  TSRESOL_DEFAULT,
  type TsResolution,
  tsResolCode,
  tsResolution,
  unitsFromTs,
  unitsHi,
  unitsLo,
} from "./timestamp.js";
import type { CaptureWriter, InterfaceInfo, PacketBatch } from "./types.js";

export interface PcapngWriterOptions {
  /** Default little-endian. */
  bigEndian?: boolean;
  /** Bytes buffered before a write to the file (default 1 MiB). */
  bufferSize?: number;
}

export interface PcapngInterfaceOptions {
  linkType: number;
  /** 0 = unlimited (the default). */
  snapLen?: number;
  /** The if_tsresol byte: n for 10^-n s (n ≤ 9), 0x80|n for 2^-n s (n ≤ 29); default 6 (µs). */
  tsResol?: number;
  /** if_name. */
  name?: string;
  /** FCS bytes at the end of each packet (if_fcslen, written in bits). */
  fcsLen?: number;
}

/** Interface options that describe an interface read from a file. */
export function pcapngInterfaceOptionsFrom(info: InterfaceInfo): PcapngInterfaceOptions {
  const options: PcapngInterfaceOptions = {
    linkType: info.linkType,
    snapLen: info.snapLen,
    // Resolutions finer than 1 ns were truncated when read; ns keeps all that is left.
    tsResol: tsResolCode(info.tsUnitsPerSec) ?? 9,
  };
  if (info.name !== undefined) options.name = info.name;
  if (info.fcsLen !== 0) options.fcsLen = info.fcsLen;
  return options;
}

const utf8 = new TextEncoder();

export class PcapngWriter implements CaptureWriter {
  readonly #out: OutputBuffer;
  readonly #le: boolean;
  readonly #resolutions: TsResolution[] = [];

  constructor(target: string | ByteSink, options: PcapngWriterOptions = {}) {
    this.#out = new OutputBuffer(target, options.bufferSize);
    this.#le = options.bigEndian !== true;
    const o = this.#out;
    const le = this.#le;
    o.reserve(SHB_MIN_LEN);
    o.view.setUint32(B_TYPE, BT_SHB, le);
    o.view.setUint32(B_TOTAL_LEN, SHB_MIN_LEN, le);
    o.view.setUint32(SHB_BYTE_ORDER, BYTE_ORDER_MAGIC, le);
    o.view.setUint16(SHB_VERSION_MAJOR, PCAPNG_VERSION_MAJOR, le);
    o.view.setUint16(SHB_VERSION_MINOR, PCAPNG_VERSION_MINOR, le);
    // Section length unknown: -1.
    o.view.setInt32(SHB_SECTION_LEN, -1, le);
    o.view.setInt32(SHB_SECTION_LEN + 4, -1, le);
    o.view.setUint32(SHB_OPTIONS, SHB_MIN_LEN, le);
    o.pos = SHB_MIN_LEN;
  }

  get bytesWritten(): number {
    return this.#out.bytesWritten;
  }

  /** Writes an IDB; returns the interface index to pass to write(). */
  addInterface(options: PcapngInterfaceOptions): number {
    const tsResol = options.tsResol ?? TSRESOL_DEFAULT;
    const resolution = tsResolution(tsResol);
    // Refuse resolutions that cannot hold what TsConverter reads, so rewrites stay exact.
    unitsFromTs(0, 0, resolution);
    const opts: [number, Uint8Array][] = [];
    if (options.name !== undefined) opts.push([IF_NAME, utf8.encode(options.name)]);
    if (tsResol !== TSRESOL_DEFAULT) opts.push([IF_TSRESOL, Uint8Array.of(tsResol)]);
    if (options.fcsLen !== undefined && options.fcsLen !== 0) opts.push([IF_FCSLEN, Uint8Array.of(options.fcsLen * 8)]);
    let optionsLen = 0;
    for (const [, value] of opts) optionsLen += OPT_VALUE + value.length + pad4(value.length);
    if (opts.length > 0) optionsLen += OPT_VALUE;
    const len = IDB_OPTIONS + optionsLen + BLOCK_TRAILER_LEN;
    const o = this.#out;
    const le = this.#le;
    o.reserve(len);
    const at = o.pos;
    o.buf.fill(0, at, at + len);
    o.view.setUint32(at + B_TYPE, BT_IDB, le);
    o.view.setUint32(at + B_TOTAL_LEN, len, le);
    o.view.setUint16(at + IDB_LINK_TYPE, options.linkType, le);
    o.view.setUint16(at + IDB_RESERVED, 0, le);
    o.view.setUint32(at + IDB_SNAP_LEN, options.snapLen ?? 0, le);
    let p = at + IDB_OPTIONS;
    for (const [code, value] of opts) {
      o.view.setUint16(p, code, le);
      o.view.setUint16(p + OPT_LEN, value.length, le);
      o.buf.set(value, p + OPT_VALUE);
      p += OPT_VALUE + value.length + pad4(value.length);
    }
    if (opts.length > 0) {
      o.view.setUint16(p, OPT_ENDOFOPT, le);
      o.view.setUint16(p + OPT_LEN, 0, le);
    }
    o.view.setUint32(at + len - BLOCK_TRAILER_LEN, len, le);
    o.pos = at + len;
    this.#resolutions.push(resolution);
    return this.#resolutions.length - 1;
  }

  write(data: Uint8Array, start: number, len: number, origLen: number, tsSec: number, tsNsec: number, iface = 0): void {
    checkSpan(data, start, len, origLen);
    const resolution = this.#resolutions[iface];
    if (resolution === undefined) {
      throw new RangeError(`interface ${iface} was not added (${this.#resolutions.length} interfaces)`);
    }
    unitsFromTs(tsSec, tsNsec, resolution);
    const padded = len + pad4(len);
    const blockLen = EPB_MIN_LEN + padded;
    const o = this.#out;
    const le = this.#le;
    o.reserve(blockLen);
    const at = o.pos;
    const v = o.view;
    v.setUint32(at + B_TYPE, BT_EPB, le);
    v.setUint32(at + B_TOTAL_LEN, blockLen, le);
    v.setUint32(at + EPB_IFACE, iface, le);
    v.setUint32(at + EPB_TS_HI, unitsHi, le);
    v.setUint32(at + EPB_TS_LO, unitsLo, le);
    v.setUint32(at + EPB_CAP_LEN, len, le);
    v.setUint32(at + EPB_ORIG_LEN, origLen, le);
    copyInto(o.buf, at + EPB_DATA, data, start, len);
    for (let i = at + EPB_DATA + len; i < at + EPB_DATA + padded; i++) o.buf[i] = 0;
    v.setUint32(at + blockLen - BLOCK_TRAILER_LEN, blockLen, le);
    o.pos = at + blockLen;
  }

  /** Packets keep their batch interface index: add the reader's interfaces in the same order. */
  writeBatch(batch: PacketBatch): void {
    writeBatchTo(this, batch);
  }

  close(): void {
    this.#out.close();
  }
}
