// A capture read in large blocks straight into the data plane's input area: one
// read call per block (BLOCK_BYTES), the record headers parsed in wasm
// (assembly/input.ts), no packet copied and nothing done per packet in
// JavaScript. A replay takes this road for its one input when it is a regular
// classic pcap file the network takes as it is (./inputs.ts, Inputs.blocks);
// where the blocks stop — the end of the file, or a record they leave alone (a
// length over the limit, a record cut short) — the capture reader goes on, and
// says what is wrong as it does alone. A one-thread replay can have the capture
// read ahead by a thread of its own (src/pcap/read-ahead.ts; READ_AHEAD_AFTER) straight into the
// input area, which then holds two blocks' places used in turn: wasm runs one
// while the thread reads the next into the other, and the part of a record a
// block leaves cut is copied into the room in front of the next (a record longer
// than that room ends the reading ahead: the rest is read here, as without it).

import { availableParallelism } from "node:os";
import type { Engine } from "../engine/engine.js";
import { type AheadSlots, type PcapBlocks, ReadAhead } from "../pcap/index.js";
import { R_CAP_LEN, RECORD_HEADER_LEN } from "../pcap/pcap-layout.js";
import { tunedBytes } from "../tuning.js";
import type { InputArea } from "../wasm/runner.js";

/** Bytes read at a time: the input area holds one block (two when read ahead). */
export const BLOCK_BYTES = 1 << 20;
/** Packets a block may hold, at most (64-byte frames: 13,107 to a block). */
export const BLOCK_PACKETS = 16384;
/** Read ahead, the room in front of each block's place for the part of a record the block before left cut. */
export const BLOCK_FRONT = 64 << 10;
/**
 * Bytes of capture from which a one-thread replay reads it ahead in a thread (STRATA_READER_THREAD_AFTER,
 * src/tuning.ts), where the process has two CPUs or more. On the 2-vCPU EPYC VM it takes 6-20 ns a packet off the data
 * plane's thread (the read call, ~0.1 ns a byte of capture) and costs the process about what it saves there; starting
 * a thread costs the starting thread ~3 ms (the file writer's, measured), what reading ~32 MiB on it costs
 * (docs/architecture.md, Cost per packet).
 */
export const READ_AHEAD_AFTER = 32 << 20;

/** Opens a reading ahead of the blocks into `slots` from file offset `position`, when one can be had. */
export type AheadOpener = (slots: AheadSlots, position: number) => ReadAhead | undefined;

export class BlockReader {
  readonly #area: InputArea;
  readonly #blocks: PcapBlocks;
  readonly #endpoint: number;
  /** The file offset of the area's first byte. */
  #base: number;
  /** The area's unparsed bytes: [#pos, #end). */
  #pos = 0;
  #end = 0;
  #eof = false;
  /** The thread reading ahead, while it does, and the block place it filled last (0 or 1; −1 before the first). */
  #ahead: ReadAhead | undefined;
  /** Read calls made, or blocks taken from the thread (the tests count them). */
  reads = 0;

  constructor(area: InputArea, blocks: PcapBlocks, endpoint: number, ahead?: AheadOpener) {
    this.#area = area;
    this.#blocks = blocks;
    this.#endpoint = endpoint;
    this.#base = blocks.offset;
    if (ahead === undefined) area.inputRoom(BLOCK_PACKETS, BLOCK_BYTES);
    else {
      area.inputRoom(BLOCK_PACKETS, 2 * (BLOCK_FRONT + BLOCK_BYTES));
      const bytes = area.inputBytes();
      if (bytes.buffer instanceof SharedArrayBuffer) {
        const at = [0, 1].map((k) => bytes.byteOffset + BLOCK_FRONT + k * (BLOCK_FRONT + BLOCK_BYTES));
        this.#ahead = ahead({ buffer: bytes.buffer, at, bytes: BLOCK_BYTES }, blocks.offset);
      }
    }
  }

  /** The file offset of the first record not parsed yet. */
  get offset(): number {
    return this.#base + this.#pos;
  }

  /** Whether a thread reads the blocks ahead (until a record longer than a block's front room). */
  get readingAhead(): boolean {
    return this.#ahead !== undefined;
  }

  /**
   * Parses up to `max` next packets into the input arrays (run them before the next call);
   * returns how many: 0 where the blocks stop (see the module comment).
   */
  next(max: number): number {
    for (;;) {
      const { count, end } = this.#area.parsePcap(this.#pos, this.#end, this.#blocks.format, max, this.#endpoint);
      this.#pos = end;
      if (count > 0 || max <= 0) return count;
      if (!this.#fill()) return 0;
    }
  }

  /** Lets the thread reading ahead go (before the input area is used for anything else). */
  stop(): void {
    this.#ahead?.stop();
    this.#ahead = undefined;
  }

  /** Reads on after the unparsed bytes (moved to the front, the area grown for a long record); false when it cannot. */
  #fill(): boolean {
    if (this.#eof) return false;
    const left = this.#end - this.#pos;
    let need = 0;
    if (left >= RECORD_HEADER_LEN) {
      const bytes = this.#area.inputBytes();
      const view = new DataView(bytes.buffer, bytes.byteOffset + this.#pos, RECORD_HEADER_LEN);
      need = RECORD_HEADER_LEN + view.getUint32(R_CAP_LEN, !this.#blocks.format.bigEndian);
      // A record the limit refuses is the reader's to report; one longer than the area, the area grows for.
      if (need - RECORD_HEADER_LEN > this.#blocks.format.capLimit) return false;
    }
    if (this.#ahead !== undefined) {
      if (left <= BLOCK_FRONT) return this.#fillAhead(this.#ahead, left);
      this.stop(); // a record longer than the room in front of a block: read here from now on
    }
    let cap = this.#area.inputRoom(BLOCK_PACKETS, BLOCK_BYTES);
    let bytes = this.#area.inputBytes();
    if (need > cap) {
      this.#base += this.#pos;
      this.#pos = this.#end = 0; // read again after the growth, which loses what the area held
      cap = this.#area.inputRoom(BLOCK_PACKETS, need);
      bytes = this.#area.inputBytes();
    }
    if (this.#pos > 0) {
      bytes.copyWithin(0, this.#pos, this.#end);
      this.#base += this.#pos;
      this.#end -= this.#pos;
      this.#pos = 0;
    }
    // A block at a time, as without the thread, in an area that may have room for two.
    const room = Math.min(cap, Math.max(BLOCK_BYTES, need));
    const n = this.#blocks.read(bytes, this.#end, room - this.#end, this.#base + this.#end);
    this.reads++;
    if (n === 0) this.#eof = true;
    this.#end += n;
    return n > 0;
  }

  /** Takes the next block the thread read, the `left` unparsed bytes copied in front of it first. */
  #fillAhead(ahead: ReadAhead, left: number): boolean {
    const slot = ahead.slot === 0 ? 1 : 0; // the place the block after the one taken is read into
    const to = BLOCK_FRONT + slot * (BLOCK_FRONT + BLOCK_BYTES);
    // The thread reads only the blocks' places, never the room in front of them: a view taken again (wasm may have
    // grown its memory since).
    if (left > 0) this.#area.inputBytes().copyWithin(to - left, this.#pos, this.#end);
    this.#base += this.#pos - (to - left);
    this.#pos = to - left;
    const n = ahead.next(); // gives the block run back to the thread, takes the next
    this.reads++;
    if (n < BLOCK_BYTES) this.#eof = true;
    this.#end = to + n;
    return n > 0;
  }
}

/** What a replay's one input gives to be read in blocks (Inputs.blocks). */
export interface BlockInput {
  readonly blocks: PcapBlocks;
  readonly injection: number;
  /** Where the blocks stopped: the batches go on from the record at `offset`, after `packets` packets. */
  read(offset: number, packets: number): void;
}

/**
 * Runs `input`'s packets on `engine` in blocks, numbered from 0, up to where the blocks stop;
 * `progress` hears the packets run and the bytes read after each block. Returns the packets run.
 */
export function replayBlocks(
  engine: Engine,
  input: BlockInput,
  progress?: (packets: number, bytes: number) => void,
): number {
  const reader = new BlockReader(engine.inputArea, input.blocks, input.injection, readAhead(input.blocks));
  let packets = 0;
  try {
    for (let n = reader.next(BLOCK_PACKETS); n > 0; n = reader.next(BLOCK_PACKETS)) {
      engine.run(n, packets);
      packets += n;
      progress?.(packets, reader.offset);
    }
  } finally {
    reader.stop();
  }
  input.read(reader.offset, packets);
  return packets;
}

/** A thread to read `blocks`' file ahead, when it is a regular file of READ_AHEAD_AFTER bytes or more left (and the
 * process's reader thread is free when the blocks start). */
function readAhead(blocks: PcapBlocks): AheadOpener | undefined {
  const after = tunedBytes("STRATA_READER_THREAD_AFTER", availableParallelism() > 1 ? READ_AHEAD_AFTER : Infinity);
  const file = blocks.file;
  if (file === undefined || blocks.size - blocks.offset < after) return undefined;
  return (slots, position) => ReadAhead.open(file, position, slots);
}
