// --shared DIR for inputs: a chunk's packets as a byte range of a capture on storage every worker mounts, not its
// bytes. The coordinator cuts the range where a one-thread replay's blocks would run (src/run/blocks.ts: a regular
// classic pcap file the network takes as it is, the replay's one input, under DIR); a worker checks the file's pcap
// header is the one the coordinator read, and reads the range itself and runs its records: in blocks read straight into
// the engine's input area (no copy of the range made first), or as batches when the run is traced (the trace takes
// batches), as the threads do.

import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { sliceBatch } from "../engine/batches.js";
import type { Engine } from "../engine/engine.js";
import type { ByteSource } from "../pcap/byte-source.js";
import { openSource } from "../pcap/reader.js";
import { BLOCK_PACKETS, BlockReader } from "../run/blocks.js";
import type { InputBatch } from "../wasm/runner.js";
import type { ChunkParts } from "./chunk-engine.js";
import type { InputRange } from "./protocol.js";

/** Bytes of a classic pcap file's header. */
export const PCAP_HEADER_LEN = 24;

/** A range that cannot be run as the job says: the file missing, unreadable, changed or damaged. */
export class RangeUnreadable extends Error {}

/** `file`'s path under `shared`, or undefined when it is not under it. */
export function underShared(shared: string, file: string): string | undefined {
  const rel = relative(resolve(shared), resolve(file));
  return rel === "" || rel.startsWith("..") || isAbsolute(rel) ? undefined : rel;
}

/** `err`, met reading `path`, as a RangeUnreadable. */
function unreadable(path: string, err: unknown): RangeUnreadable {
  if (err instanceof RangeUnreadable) return err;
  return new RangeUnreadable(`cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`);
}

/** Whether `fd` holds `len` bytes at `position`, read into buf[at …]. */
function readFull(fd: number, buf: Uint8Array, at: number, len: number, position: number): boolean {
  for (let done = 0; done < len;) {
    const n = readSync(fd, buf, at + done, len - done, position + done);
    if (n === 0) return false;
    done += n;
  }
  return true;
}

/** Checks that `path` is the range's capture: its pcap header the job's, its bytes reaching the range's end. */
function checkRange(path: string, range: InputRange): void {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (err) {
    throw unreadable(path, err);
  }
  try {
    const header = Buffer.alloc(PCAP_HEADER_LEN);
    if (!readFull(fd, header, 0, PCAP_HEADER_LEN, 0) || header.toString("hex") !== range.header)
      throw new RangeUnreadable(`${path} is not the coordinator's capture: its pcap header differs`);
    if (fstatSync(fd).size < range.offset + range.length)
      throw new RangeUnreadable(
        `${path} ends before byte ${range.offset + range.length}: not the coordinator's capture`,
      );
  } catch (err) {
    throw unreadable(path, err);
  } finally {
    closeSync(fd);
  }
}

/**
 * The range as a capture of its own, read where it lies in `fd` (no copy of it made first): the job's pcap header, then
 * the range's bytes, and nothing after them.
 */
function rangeSource(fd: number, range: InputRange): ByteSource {
  const header = Buffer.from(range.header, "hex");
  const size = PCAP_HEADER_LEN + range.length;
  return {
    size,
    read(buf, at, len, position) {
      let n = 0;
      if (position < PCAP_HEADER_LEN) {
        n = Math.min(len, PCAP_HEADER_LEN - position);
        buf.set(header.subarray(position, position + n), at);
      }
      const want = Math.min(len - n, size - (position + n));
      if (want <= 0) return n;
      return n + readSync(fd, buf, at + n, want, range.offset + position + n - PCAP_HEADER_LEN);
    },
    close() {},
  };
}

/**
 * The range's packets for ChunkEngine.run, read from `shared` at once (RangeUnreadable if they cannot be); while they
 * run, RangeUnreadable if the records are not the range's (damaged, or fewer).
 */
export function rangeParts(shared: string, range: InputRange, traced: boolean): ChunkParts {
  const path = join(shared, range.file);
  checkRange(path, range);
  return function* (engine: Engine): Generator<InputBatch | number> {
    let left = range.packets;
    let fd = -1;
    try {
      fd = openSync(path, "r");
      // Read in blocks straight into the engine's input area: the reader's own buffer holds the header only.
      const reader = openSource(rangeSource(fd, range), path, traced ? {} : { chunkSize: PCAP_HEADER_LEN });
      const blocks = traced ? undefined : reader.blocks?.();
      if (blocks !== undefined) {
        const r = new BlockReader(engine.inputArea, blocks, 0);
        for (let n = r.next(Math.min(BLOCK_PACKETS, left)); n > 0; n = r.next(Math.min(BLOCK_PACKETS, left))) {
          left -= n;
          yield n;
        }
      } else
        for (const b of reader.batches()) {
          if (left === 0) break;
          const n = Math.min(left, b.count);
          left -= n;
          yield sliceBatch({ ...b, endpoint: 0 }, 0, n);
        }
    } catch (err) {
      throw new RangeUnreadable(`${path}: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      if (fd >= 0) closeSync(fd);
    }
    if (left !== 0)
      throw new RangeUnreadable(`${path}: the range holds ${range.packets - left} packets, not ${range.packets}`);
  };
}
