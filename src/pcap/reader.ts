// Opening a capture: look at the magic, then hand the buffer to the pcap or pcapng reader.

import { batchSizeOption } from "./batch.js";
import { type ByteSource, ChunkBuffer, fileSource, memorySource } from "./byte-source.js";
import { PcapError } from "./errors.js";
import { MAGIC_MICRO, MAGIC_MICRO_SWAPPED, MAGIC_NANO, MAGIC_NANO_SWAPPED } from "./pcap-layout.js";
import { PcapReader } from "./pcap-reader.js";
import { BT_SHB } from "./pcapng-layout.js";
import { PcapngReader } from "./pcapng-reader.js";
import type { CaptureReader, ReaderOptions } from "./types.js";

const MAGIC_LEN = 4;

/**
 * Opens a pcap or pcapng file and reads its header (the first SHB for pcapng).
 * Throws InputError if the file cannot be opened, PcapError if it is not a capture.
 */
export function openCapture(path: string, options: ReaderOptions & { name?: string } = {}): CaptureReader {
  return openSource(fileSource(path, options.name ?? path), options.name ?? path, options);
}

/** The same over bytes in memory; `name` is what errors call the file. */
export function openCaptureBytes(bytes: Uint8Array, name: string, options: ReaderOptions = {}): CaptureReader {
  return openSource(memorySource(bytes), name, options);
}

/** The same over any source of bytes (a range of a file: src/queue/shared-input.ts); `name` is what errors call it. */
export function openSource(source: ByteSource, name: string, options: ReaderOptions = {}): CaptureReader {
  const batchSize = batchSizeOption(options.batchSize);
  const chunks = new ChunkBuffer(source, options.chunkSize);
  try {
    if (!chunks.fill(MAGIC_LEN)) {
      throw new PcapError(
        name,
        0,
        "truncated-file-header",
        chunks.available === 0
          ? "the file is empty"
          : `the file has only ${chunks.available} bytes, too few for a capture`,
        "expected a pcap or pcapng file",
      );
    }
    const magic = chunks.view.getUint32(0, false);
    switch (magic) {
      case MAGIC_MICRO:
      case MAGIC_NANO:
      case MAGIC_MICRO_SWAPPED:
      case MAGIC_NANO_SWAPPED:
        return new PcapReader(name, chunks, source.size, batchSize);
      case BT_SHB:
        return new PcapngReader(name, chunks, source.size, batchSize);
      default:
        throw badMagic(name, chunks.buf.subarray(0, MAGIC_LEN));
    }
  } catch (err) {
    chunks.close();
    throw err;
  }
}

function badMagic(name: string, first: Uint8Array): PcapError {
  const hex = Array.from(first, (b) => b.toString(16).padStart(2, "0")).join(" ");
  return new PcapError(
    name,
    0,
    "bad-magic",
    `not a pcap or pcapng file: it starts with ${hex}${knownFormat(first)}`,
    "expected pcap magic a1 b2 c3 d4 or a1 b2 3c 4d (either byte order) or pcapng 0a 0d 0d 0a",
  );
}

/** A hint for formats people commonly mistake for captures. */
function knownFormat(first: Uint8Array): string {
  const [a, b, c, d] = first;
  if (a === 0x1f && b === 0x8b) return " (gzip: decompress it first)";
  if (a === 0x28 && b === 0xb5 && c === 0x2f && d === 0xfd) return " (zstd: decompress it first)";
  if (a === 0xa1 && b === 0xb2 && c === 0xcd && d === 0x34) return " (Kuznetzov's modified pcap, not supported)";
  if (a === 0x34 && b === 0xcd && c === 0xb2 && d === 0xa1) return " (Kuznetzov's modified pcap, not supported)";
  return "";
}
