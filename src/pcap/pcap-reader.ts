// Reads classic pcap: the file header once, then records straight out of the chunk buffer.

import type { ChunkBuffer } from "./byte-source.js";
import { PcapError, capLenOverLimit, truncatedHeader } from "./errors.js";
import { linkTypeName, maxCapLen } from "./link-types.js";
import { ReaderBase } from "./reader-base.js";
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
  ltFcsLen,
  ltLinkType,
} from "./pcap-layout.js";
import type { CaptureReader, InterfaceInfo, PacketBatch, PcapBlocks, PcapFileHeader } from "./types.js";

export class PcapReader extends ReaderBase implements CaptureReader {
  readonly format = "pcap" as const;
  readonly interfaces: readonly InterfaceInfo[];
  readonly pcapHeader: PcapFileHeader;
  readonly sections = 1;
  /** The number of the next packet. */
  #index = 0;

  /** `chunks` holds at least the 4 magic bytes, which the caller has recognised as pcap. */
  constructor(name: string, chunks: ChunkBuffer, fileSize: number, batchSize: number) {
    super(name, chunks, fileSize, batchSize);
    if (!chunks.fill(FILE_HEADER_LEN)) {
      throw new PcapError(
        name,
        0,
        "truncated-file-header",
        `the file ends inside the pcap file header: ${chunks.available} of ${FILE_HEADER_LEN} bytes`,
      );
    }
    const view = chunks.view;
    const magic = view.getUint32(F_MAGIC, false);
    const le = magic !== MAGIC_MICRO && magic !== MAGIC_NANO;
    const field = view.getUint32(F_LINK_TYPE, le);
    this.pcapHeader = {
      bigEndian: !le,
      nanosecond: view.getUint32(F_MAGIC, le) === MAGIC_NANO,
      versionMajor: view.getUint16(F_VERSION_MAJOR, le),
      versionMinor: view.getUint16(F_VERSION_MINOR, le),
      thisZone: view.getInt32(F_THIS_ZONE, le),
      sigFigs: view.getUint32(F_SIG_FIGS, le),
      snapLen: view.getUint32(F_SNAP_LEN, le),
      linkTypeField: field,
    };
    if (this.pcapHeader.versionMajor !== VERSION_MAJOR) {
      throw new PcapError(
        name,
        F_VERSION_MAJOR,
        "unsupported-version",
        `pcap version ${this.pcapHeader.versionMajor}.${this.pcapHeader.versionMinor} is not one we read`,
        "only version 2.x exists in practice; the header is probably damaged",
      );
    }
    const linkType = ltLinkType(field);
    this.interfaces = [
      {
        index: 0,
        section: 0,
        idInSection: 0,
        linkType,
        linkTypeName: linkTypeName(linkType),
        snapLen: this.pcapHeader.snapLen,
        fcsLen: ltFcsLen(field),
        tsUnitsPerSec: this.pcapHeader.nanosecond ? 1e9 : 1e6,
        tsOffsetSec: 0,
      },
    ];
    chunks.pos = FILE_HEADER_LEN;
  }

  *batches(): Generator<PacketBatch, void, undefined> {
    const c = this.chunks;
    const b = this.batch;
    // One interface, every packet timed: iface and flags stay 0 (the batch's arrays start so).
    const max = b.offset.length;
    const le = !this.pcapHeader.bigEndian;
    const nsPerFrac = this.pcapHeader.nanosecond ? 1 : 1000;
    const fracPerSec = this.pcapHeader.nanosecond ? 1e9 : 1e6;
    const capLimit = maxCapLen(this.interfaces[0]?.linkType ?? 0);
    for (;;) {
      const view = c.view;
      const end = c.end;
      let pos = c.pos;
      let n = 0;
      while (n < max && end - pos >= RECORD_HEADER_LEN) {
        const capLen = view.getUint32(pos + R_CAP_LEN, le);
        if (capLen > capLimit) {
          if (n > 0) break;
          throw this.#capLenTooLarge(c.base + pos, capLen, capLimit);
        }
        if (end - pos < RECORD_HEADER_LEN + capLen) break;
        let sec = view.getUint32(pos + R_TS_SEC, le);
        let frac = view.getUint32(pos + R_TS_FRAC, le);
        // Some writers let the fraction reach a whole second; carry it rather than break tsNsec < 1e9.
        if (frac >= fracPerSec) {
          sec += Math.floor(frac / fracPerSec);
          frac %= fracPerSec;
        }
        b.offset[n] = pos + RECORD_HEADER_LEN;
        b.capLen[n] = capLen;
        b.origLen[n] = view.getUint32(pos + R_ORIG_LEN, le);
        b.tsSec[n] = sec;
        b.tsNsec[n] = frac * nsPerFrac;
        pos += RECORD_HEADER_LEN + capLen;
        n++;
      }
      c.pos = pos;
      if (n > 0) {
        const first = this.#index;
        this.#index += n;
        yield this.publish(n, first);
        continue;
      }
      // The next record is not whole in the buffer: read on, or report what is missing.
      const headerWhole = end - pos >= RECORD_HEADER_LEN;
      const need = headerWhole ? RECORD_HEADER_LEN + view.getUint32(pos + R_CAP_LEN, le) : RECORD_HEADER_LEN;
      if (c.fill(need)) continue;
      if (c.available === 0) return;
      throw this.#truncated();
    }
  }

  /**
   * Where the next record starts and how records read, for a caller that reads the file's records
   * in blocks of its own (src/run/blocks.ts) and then seek()s to where it stopped; not for a pipe.
   */
  blocks(): PcapBlocks | undefined {
    const c = this.chunks;
    if (this.fileSize < 0) return undefined; // a pipe is read in order, not by position
    return {
      offset: c.offset,
      format: {
        bigEndian: this.pcapHeader.bigEndian,
        nanosecond: this.pcapHeader.nanosecond,
        capLimit: maxCapLen(this.interfaces[0]?.linkType ?? 0),
      },
      read: (buf, at, len, position) => c.readAt(buf, at, len, position),
      size: this.fileSize,
      ...(c.file !== undefined ? { file: c.file } : {}),
    };
  }

  /** Goes on at the record at file offset `offset`, packet number `index` (after blocks() read up to it). */
  seek(offset: number, index: number): void {
    this.chunks.seek(offset);
    this.#index = index;
  }

  skip(n: number): number {
    const c = this.chunks;
    const le = !this.pcapHeader.bigEndian;
    const capLimit = maxCapLen(this.interfaces[0]?.linkType ?? 0);
    let done = 0;
    while (done < n) {
      const view = c.view;
      const end = c.end;
      let pos = c.pos;
      while (done < n && end - pos >= RECORD_HEADER_LEN) {
        const capLen = view.getUint32(pos + R_CAP_LEN, le);
        if (capLen > capLimit || end - pos < RECORD_HEADER_LEN + capLen) break;
        pos += RECORD_HEADER_LEN + capLen;
        done++;
      }
      c.pos = pos;
      if (done === n) break;
      const headerWhole = end - pos >= RECORD_HEADER_LEN;
      const capLen = headerWhole ? view.getUint32(pos + R_CAP_LEN, le) : 0;
      if (capLen > capLimit || !c.fill(RECORD_HEADER_LEN + capLen)) break; // batches() says what is wrong
    }
    this.#index += done;
    return done;
  }

  #capLenTooLarge(offset: number, capLen: number, limit: number): PcapError {
    return capLenOverLimit(
      this.name,
      offset,
      `record says caplen ${capLen}`,
      limit,
      this.interfaces[0]?.linkTypeName ?? "?",
    );
  }

  #truncated(): PcapError {
    const c = this.chunks;
    const left = c.available;
    if (left < RECORD_HEADER_LEN) return truncatedHeader(this.name, c.offset, "record header", left, RECORD_HEADER_LEN);
    const capLen = c.view.getUint32(c.pos + R_CAP_LEN, !this.pcapHeader.bigEndian);
    return new PcapError(
      this.name,
      c.offset,
      "truncated-record-data",
      `record says caplen ${capLen} but only ${left - RECORD_HEADER_LEN} bytes remain`,
      "the capture was cut short or the record header is damaged",
    );
  }
}
