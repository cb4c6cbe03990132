// A capture read in large blocks straight into the data plane's input area: one
// read call per block (BLOCK_BYTES), the record headers parsed in wasm
// (assembly/input.ts), no packet copied and nothing done per packet in
// JavaScript. A replay takes this road for its one input when it is a regular
// classic pcap file the network takes as it is (./inputs.ts, Inputs.blocks);
// where the blocks stop — the end of the file, or a record they leave alone (a
// length over the limit, a record cut short) — the capture reader goes on, and
// says what is wrong as it does alone. A one-thread replay can have the capture
// read ahead by a thread of its own (src/pcap/read-ahead.ts), the next block read
// while wasm runs this one: off unless STRATA_READER_THREAD_AFTER asks for it.

import type { Engine } from "../engine/engine.js";
import { type PcapBlocks, ReadAhead } from "../pcap/index.js";
import { R_CAP_LEN, RECORD_HEADER_LEN } from "../pcap/pcap-layout.js";
import { tunedBytes } from "../tuning.js";
import type { InputArea } from "../wasm/runner.js";

/** Bytes read at a time: the input area holds one block. */
export const BLOCK_BYTES = 1 << 20;
/** Packets a block may hold, at most (64-byte frames: 13,107 to a block). */
export const BLOCK_PACKETS = 16384;
/**
 * Bytes of capture from which a one-thread replay reads it ahead in a thread (STRATA_READER_THREAD_AFTER,
 * src/tuning.ts): never by default. On the 2-vCPU EPYC VM the copy out of the thread's ring, made while the thread
 * reads the next slot, costs the data plane's thread what the read call it saves did (~20 ns a 64-byte packet), and
 * the process 6-36 ns more (docs/architecture.md, Cost per packet).
 */
export const READ_AHEAD_AFTER = Infinity;

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
  /** Read calls made (the tests count them). */
  reads = 0;

  constructor(area: InputArea, blocks: PcapBlocks, endpoint: number) {
    this.#area = area;
    this.#blocks = blocks;
    this.#endpoint = endpoint;
    this.#base = blocks.offset;
    area.inputRoom(BLOCK_PACKETS, BLOCK_BYTES);
  }

  /** The file offset of the first record not parsed yet. */
  get offset(): number {
    return this.#base + this.#pos;
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

  /** Reads on after the unparsed bytes (moved to the front, the area grown for a long record); false when it cannot. */
  #fill(): boolean {
    if (this.#eof) return false;
    const left = this.#end - this.#pos;
    let cap = this.#area.inputRoom(BLOCK_PACKETS, BLOCK_BYTES);
    let bytes = this.#area.inputBytes();
    if (left >= RECORD_HEADER_LEN) {
      const view = new DataView(bytes.buffer, bytes.byteOffset + this.#pos, RECORD_HEADER_LEN);
      const need = RECORD_HEADER_LEN + view.getUint32(R_CAP_LEN, !this.#blocks.format.bigEndian);
      // A record the limit refuses is the reader's to report; one longer than the area, the area grows for.
      if (need - RECORD_HEADER_LEN > this.#blocks.format.capLimit) return false;
      if (need > cap) {
        this.#base += this.#pos;
        this.#pos = this.#end = 0; // read again after the growth, which loses what the area held
        cap = this.#area.inputRoom(BLOCK_PACKETS, need);
        bytes = this.#area.inputBytes();
      }
    }
    if (this.#pos > 0) {
      bytes.copyWithin(0, this.#pos, this.#end);
      this.#base += this.#pos;
      this.#end -= this.#pos;
      this.#pos = 0;
    }
    const n = this.#blocks.read(bytes, this.#end, cap - this.#end, this.#base + this.#end);
    this.reads++;
    if (n === 0) this.#eof = true;
    this.#end += n;
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
  const ahead = readAhead(input.blocks);
  const blocks = ahead === undefined ? input.blocks : { ...input.blocks, read: ahead.read.bind(ahead) };
  const reader = new BlockReader(engine.inputArea, blocks, input.injection);
  let packets = 0;
  try {
    for (let n = reader.next(BLOCK_PACKETS); n > 0; n = reader.next(BLOCK_PACKETS)) {
      engine.run(n, packets);
      packets += n;
      progress?.(packets, reader.offset);
    }
  } finally {
    ahead?.stop();
  }
  input.read(reader.offset, packets);
  return packets;
}

/** A thread reading `blocks`' file ahead, when it is a regular file of READ_AHEAD_AFTER bytes or more left (and the
 * process's reader thread is free). */
function readAhead(blocks: PcapBlocks): ReadAhead | undefined {
  const after = tunedBytes("STRATA_READER_THREAD_AFTER", READ_AHEAD_AFTER);
  if (blocks.file === undefined || blocks.size - blocks.offset < after) return undefined;
  return ReadAhead.open(blocks.file, blocks.offset);
}
