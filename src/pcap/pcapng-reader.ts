// Reads pcapng: sections (each with its own byte order and interface ids), interfaces
// with their own link type and timestamp resolution, and the three packet blocks.
//
// Interfaces are numbered across the whole file in the order their IDBs appear
// (InterfaceInfo.index, PacketBatch.iface); a packet block's section-local id is
// mapped through the section's first index. Blocks we do not use are skipped by length.

import type { ChunkBuffer } from "./byte-source.js";
import { PcapError, capLenOverLimit, truncatedHeader } from "./errors.js";
import { linkTypeName, maxCapLen } from "./link-types.js";
import { ReaderBase } from "./reader-base.js";
import {
  B_TOTAL_LEN,
  BLOCK_MAX_LEN,
  BLOCK_MIN_LEN,
  BLOCK_TRAILER_LEN,
  BT_EPB,
  BT_IDB,
  BT_PB,
  BT_SHB,
  BT_SPB,
  BYTE_ORDER_MAGIC,
  BYTE_ORDER_MAGIC_SWAPPED,
  EPB_CAP_LEN,
  EPB_DATA,
  EPB_IFACE,
  EPB_MIN_LEN,
  EPB_ORIG_LEN,
  EPB_TS_HI,
  EPB_TS_LO,
  IDB_LINK_TYPE,
  IDB_OPTIONS,
  IDB_SNAP_LEN,
  IF_FCSLEN,
  IF_NAME,
  IF_TSOFFSET,
  IF_TSRESOL,
  OPT_ENDOFOPT,
  OPT_LEN,
  OPT_VALUE,
  PB_IFACE,
  PCAPNG_VERSION_MAJOR,
  SHB_BYTE_ORDER,
  SHB_VERSION_MAJOR,
  SHB_VERSION_MINOR,
  SPB_DATA,
  SPB_MIN_LEN,
  SPB_ORIG_LEN,
  blockMinLen,
  blockName,
  pad4,
} from "./pcapng-layout.js";
import { TSRESOL_DEFAULT, TsConverter } from "./timestamp.js";
import { PACKET_NO_TIMESTAMP } from "./types.js";
import type { CaptureReader, InterfaceInfo, PacketBatch } from "./types.js";

const TWO_32 = 0x1_0000_0000;
const utf8 = new TextDecoder("utf-8");

export class PcapngReader extends ReaderBase implements CaptureReader {
  readonly format = "pcapng" as const;
  readonly interfaces: InterfaceInfo[] = [];
  readonly pcapHeader = undefined;
  // Per interface (file-wide index), for the packet path.
  readonly #capLimit: number[] = [];
  readonly #snapLen: number[] = [];
  readonly #tsOffset: number[] = [];
  readonly #conv: TsConverter[] = [];
  // The current section.
  #section = -1;
  #le = true;
  #sectionBase = 0;

  /** `chunks` holds at least the 4 magic bytes, which the caller has recognised as an SHB. */
  constructor(name: string, chunks: ChunkBuffer, fileSize: number, batchSize: number) {
    super(name, chunks, fileSize, batchSize);
    const truncated = (): PcapError =>
      new PcapError(
        name,
        0,
        "truncated-file-header",
        `the file ends inside the first section header block: ${chunks.available} bytes`,
      );
    if (!chunks.fill(BLOCK_MIN_LEN)) throw truncated();
    const le = this.#shbByteOrder(chunks.view, 0);
    const len = chunks.view.getUint32(B_TOTAL_LEN, le);
    this.#checkBlockLen(0, BT_SHB, len);
    if (!chunks.fill(len)) throw truncated();
    this.#checkTrailer(chunks.view, 0, len, le);
    this.#startSection(chunks.view, 0, le);
    chunks.pos = len;
  }

  get sections(): number {
    return this.#section + 1;
  }

  *batches(): Generator<PacketBatch, void, undefined> {
    const c = this.chunks;
    const b = this.batch;
    const max = b.offset.length;
    const capLimit = this.#capLimit;
    const tsOffset = this.#tsOffset;
    const conv = this.#conv;
    let index = 0;
    for (;;) {
      const view = c.view;
      const end = c.end;
      let pos = c.pos;
      let n = 0;
      let pending: PcapError | undefined;
      try {
        while (n < max && end - pos >= BLOCK_MIN_LEN) {
          let le = this.#le;
          const type = view.getUint32(pos, le);
          // The SHB type reads the same in both orders; its own magic gives the order of the rest.
          if (type === BT_SHB) le = this.#shbByteOrder(view, pos);
          const len = view.getUint32(pos + B_TOTAL_LEN, le);
          this.#checkBlockLen(c.base + pos, type, len);
          if (end - pos < len) break;
          this.#checkTrailer(view, pos, len, le);
          if (type === BT_EPB || type === BT_PB) {
            // The PB has the EPB's layout, its 32-bit interface id split into id u16 + drops u16.
            const local = type === BT_EPB ? view.getUint32(pos + EPB_IFACE, le) : view.getUint16(pos + PB_IFACE, le);
            const iface = this.#globalIface(local, c.base + pos, type);
            const capLen = view.getUint32(pos + EPB_CAP_LEN, le);
            const room = len - EPB_MIN_LEN;
            if (capLen > room || capLen > (capLimit[iface] ?? 0)) {
              throw this.#capLenTooLarge(c.base + pos, type, capLen, room, iface);
            }
            (conv[iface] as TsConverter).store(
              view.getUint32(pos + EPB_TS_HI, le),
              view.getUint32(pos + EPB_TS_LO, le),
              tsOffset[iface] ?? 0,
              b.tsSec,
              b.tsNsec,
              n,
            );
            b.offset[n] = pos + EPB_DATA;
            b.capLen[n] = capLen;
            b.origLen[n] = view.getUint32(pos + EPB_ORIG_LEN, le);
            b.iface[n] = iface;
            b.flags[n] = 0;
            n++;
          } else if (type === BT_SPB) {
            this.#storeSimplePacket(view, pos, len, le, c.base + pos, n);
            n++;
          } else if (type === BT_SHB) {
            this.#startSection(view, pos, le);
          } else if (type === BT_IDB) {
            this.#addInterface(view, pos, len, c.base + pos);
          }
          pos += len;
        }
      } catch (err) {
        // Damage: hand out the good packets before it first.
        if (!(err instanceof PcapError) || n === 0) throw err;
        pending = err;
      }
      c.pos = pos;
      if (n > 0) {
        yield this.publish(n, index);
        index += n;
      }
      if (pending !== undefined) throw pending;
      if (n > 0) continue;
      // The next block is not whole in the buffer: read on, or report what is missing.
      const need = end - pos < BLOCK_MIN_LEN ? BLOCK_MIN_LEN : this.#blockLenAt(view, pos);
      if (c.fill(need)) continue;
      if (c.available === 0) return;
      throw this.#truncated();
    }
  }

  /** An SPB's packet as the batch's n-th: no timestamp, its captured length implied; `at` is the block's offset in the
   * file. (The EPB's, far more common, is stored in the loop itself.) */
  #storeSimplePacket(view: DataView, pos: number, len: number, le: boolean, at: number, n: number): void {
    const b = this.batch;
    const iface = this.#globalIface(0, at, BT_SPB);
    const origLen = view.getUint32(pos + SPB_ORIG_LEN, le);
    const snap = this.#snapLen[iface] ?? 0;
    // Captured length is implicit: min(original, snaplen of the section's first interface), within the block.
    let capLen = Math.min(origLen, len - SPB_MIN_LEN);
    if (snap !== 0 && snap < capLen) capLen = snap;
    if (capLen > (this.#capLimit[iface] ?? 0)) {
      throw this.#capLenTooLarge(at, BT_SPB, capLen, len - SPB_MIN_LEN, iface);
    }
    b.offset[n] = pos + SPB_DATA;
    b.capLen[n] = capLen;
    b.origLen[n] = origLen;
    b.iface[n] = iface;
    b.tsSec[n] = 0;
    b.tsNsec[n] = 0;
    b.flags[n] = PACKET_NO_TIMESTAMP;
  }

  /** The byte order of the section whose SHB starts at pos (true = little-endian). */
  #shbByteOrder(view: DataView, pos: number): boolean {
    const magic = view.getUint32(pos + SHB_BYTE_ORDER, true);
    if (magic === BYTE_ORDER_MAGIC) return true;
    if (magic === BYTE_ORDER_MAGIC_SWAPPED) return false;
    throw new PcapError(
      this.name,
      this.chunks.base + pos + SHB_BYTE_ORDER,
      "bad-byte-order-magic",
      `section header block has byte-order magic 0x${magic.toString(16).padStart(8, "0")}, expected 0x1a2b3c4d ` +
        `in either byte order`,
    );
  }

  #blockLenAt(view: DataView, pos: number): number {
    const le = view.getUint32(pos, true) === BT_SHB ? this.#shbByteOrder(view, pos) : this.#le;
    return view.getUint32(pos + B_TOTAL_LEN, le);
  }

  #checkBlockLen(offset: number, type: number, len: number): void {
    const min = blockMinLen(type);
    let problem = "";
    if (len % 4 !== 0) problem = "is not a multiple of 4";
    else if (len < min) problem = `is below the ${min}-byte minimum for its type`;
    else if (len > BLOCK_MAX_LEN) problem = `is more than the ${BLOCK_MAX_LEN} bytes any block may have`;
    if (problem === "") return;
    throw new PcapError(
      this.name,
      offset,
      "bad-block-length",
      `${blockName(type)} total length ${len} ${problem}`,
      "the block header is damaged",
    );
  }

  #checkTrailer(view: DataView, pos: number, len: number, le: boolean): void {
    const trailing = view.getUint32(pos + len - BLOCK_TRAILER_LEN, le);
    if (trailing === len) return;
    const type = view.getUint32(pos, le);
    throw new PcapError(
      this.name,
      this.chunks.base + pos,
      "block-length-mismatch",
      `${blockName(type)} total length ${len} at its start but ${trailing} at its end`,
      "the block is damaged",
    );
  }

  #startSection(view: DataView, pos: number, le: boolean): void {
    const major = view.getUint16(pos + SHB_VERSION_MAJOR, le);
    if (major !== PCAPNG_VERSION_MAJOR) {
      const minor = view.getUint16(pos + SHB_VERSION_MINOR, le);
      throw new PcapError(
        this.name,
        this.chunks.base + pos + SHB_VERSION_MAJOR,
        "unsupported-version",
        `pcapng section version ${major}.${minor} is not one we read`,
        "only version 1.x exists",
      );
    }
    this.#section++;
    this.#le = le;
    this.#sectionBase = this.interfaces.length;
  }

  #globalIface(local: number, offset: number, type: number): number {
    const count = this.interfaces.length - this.#sectionBase;
    if (local < count) return this.#sectionBase + local;
    const declared = count === 0 ? "declares no interface" : `declares interfaces 0 to ${count - 1}`;
    throw new PcapError(
      this.name,
      offset,
      "undeclared-interface",
      `${blockName(type)} names interface ${local}, but section ${this.#section} ${declared}`,
      "an IDB must come before the packets that use it",
    );
  }

  #addInterface(view: DataView, pos: number, len: number, offset: number): void {
    const le = this.#le;
    const linkType = view.getUint16(pos + IDB_LINK_TYPE, le);
    const snapLen = view.getUint32(pos + IDB_SNAP_LEN, le);
    let tsResol = TSRESOL_DEFAULT;
    let tsOffsetSec = 0;
    let fcsLen = 0;
    let name: string | undefined;
    const optEnd = pos + len - BLOCK_TRAILER_LEN;
    for (let o = pos + IDB_OPTIONS; o + OPT_VALUE <= optEnd;) {
      const code = view.getUint16(o, le);
      const optLen = view.getUint16(o + OPT_LEN, le);
      if (code === OPT_ENDOFOPT) break;
      const v = o + OPT_VALUE;
      if (v + optLen > optEnd) {
        throw this.#badOption(offset + (o - pos), `option ${code} of length ${optLen} runs past the end of its IDB`);
      }
      const wantLen = code === IF_TSRESOL || code === IF_FCSLEN ? 1 : code === IF_TSOFFSET ? 8 : optLen;
      if (optLen !== wantLen) {
        throw this.#badOption(offset + (o - pos), `IDB option ${code} has length ${optLen}, expected ${wantLen}`);
      }
      if (code === IF_TSRESOL) tsResol = view.getUint8(v);
      else if (code === IF_FCSLEN) fcsLen = fcsLenFromOption(view.getUint8(v));
      else if (code === IF_NAME) name = utf8.decode(new Uint8Array(view.buffer, view.byteOffset + v, optLen));
      else if (code === IF_TSOFFSET) {
        const hi = view.getInt32(le ? v + 4 : v, le);
        const lo = view.getUint32(le ? v : v + 4, le);
        tsOffsetSec = hi * TWO_32 + lo;
      }
      o = v + optLen + pad4(optLen);
    }
    const conv = new TsConverter(tsResol);
    const base = {
      index: this.interfaces.length,
      section: this.#section,
      idInSection: this.interfaces.length - this.#sectionBase,
      linkType,
      linkTypeName: linkTypeName(linkType),
      snapLen,
      fcsLen,
      tsUnitsPerSec: conv.resolution.unitsPerSec,
      tsOffsetSec,
    };
    this.interfaces.push(name === undefined ? base : { ...base, name });
    this.#capLimit.push(maxCapLen(linkType));
    this.#snapLen.push(snapLen);
    this.#tsOffset.push(tsOffsetSec);
    this.#conv.push(conv);
  }

  #badOption(offset: number, problem: string): PcapError {
    return new PcapError(this.name, offset, "bad-option", problem, "the IDB is damaged");
  }

  #capLenTooLarge(offset: number, type: number, capLen: number, room: number, iface: number): PcapError {
    const what = type === BT_SPB ? "packet" : `caplen ${capLen}`;
    if (capLen > room) {
      return new PcapError(
        this.name,
        offset,
        "caplen-too-large",
        `${blockName(type)} says ${what} but its block holds only ${room} bytes of data`,
        "the block is damaged",
      );
    }
    const lt = this.interfaces[iface]?.linkTypeName ?? "?";
    return capLenOverLimit(this.name, offset, `${blockName(type)} says ${what}`, this.#capLimit[iface] ?? 0, lt);
  }

  #truncated(): PcapError {
    const c = this.chunks;
    const left = c.available;
    if (left < BLOCK_MIN_LEN) return truncatedHeader(this.name, c.offset, "block header", left, BLOCK_MIN_LEN);
    const len = this.#blockLenAt(c.view, c.pos);
    const type = c.view.getUint32(c.pos, this.#le);
    return new PcapError(
      this.name,
      c.offset,
      "truncated-record-data",
      `${blockName(type)} says total length ${len} but only ${left} bytes remain`,
      "the capture was cut short or the block header is damaged",
    );
  }
}

/** if_fcslen: the draft says bits but its example (and Wireshark) use bytes; 8, 16, 32… are bits. */
function fcsLenFromOption(value: number): number {
  return value >= 8 && value % 8 === 0 ? value / 8 : value;
}
