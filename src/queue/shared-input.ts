// --shared DIR for inputs: a chunk's packets as a byte range of a capture on storage every worker mounts, not its
// bytes. The coordinator cuts the range where a one-thread replay's blocks would run (src/run/blocks.ts: a regular
// classic pcap file the network takes as it is, the replay's one input, under DIR); a worker reads the range itself
// (one read), checks the file's pcap header is the one the coordinator read, and runs its records: in blocks straight
// into the engine's input area, or as batches when the run is traced (the trace takes batches), as the threads do.

import { closeSync, openSync, readSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { sliceBatch } from "../engine/batches.js";
import type { Engine } from "../engine/engine.js";
import { openCaptureBytes } from "../pcap/index.js";
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

/** The range's bytes behind the file's header, read from `path`: RangeUnreadable if they cannot be. */
function readRange(path: string, range: InputRange): Uint8Array {
  const bytes = Buffer.allocUnsafe(PCAP_HEADER_LEN + range.length);
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (err) {
    throw new RangeUnreadable(`cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    const full = (at: number, len: number, position: number): boolean => {
      for (let done = 0; done < len;) {
        const n = readSync(fd, bytes, at + done, len - done, position + done);
        if (n === 0) return false;
        done += n;
      }
      return true;
    };
    if (!full(0, PCAP_HEADER_LEN, 0) || bytes.toString("hex", 0, PCAP_HEADER_LEN) !== range.header)
      throw new RangeUnreadable(`${path} is not the coordinator's capture: its pcap header differs`);
    if (!full(PCAP_HEADER_LEN, range.length, range.offset))
      throw new RangeUnreadable(
        `${path} ends before byte ${range.offset + range.length}: not the coordinator's capture`,
      );
  } catch (err) {
    if (err instanceof RangeUnreadable) throw err;
    throw new RangeUnreadable(`cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    closeSync(fd);
  }
  return bytes;
}

/**
 * The range's packets for ChunkEngine.run, read from `shared` at once (RangeUnreadable if they cannot be); while they
 * run, RangeUnreadable if the records are not the range's (damaged, or fewer).
 */
export function rangeParts(shared: string, range: InputRange, traced: boolean): ChunkParts {
  const path = join(shared, range.file);
  const bytes = readRange(path, range);
  return function* (engine: Engine): Generator<InputBatch | number> {
    let left = range.packets;
    try {
      const reader = openCaptureBytes(bytes, path);
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
    }
    if (left !== 0)
      throw new RangeUnreadable(`${path}: the range holds ${range.packets - left} packets, not ${range.packets}`);
  };
}
