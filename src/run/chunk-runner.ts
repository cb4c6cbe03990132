// Running a part of a replay's packets on an engine of its own
// (src/engine/engine.ts): each worker thread has one (./worker.ts), and so does
// the main thread (./workers.ts has the model). It reads the inputs itself, as
// every data plane does, and runs the chunks of the replay's packets that are
// its own (claimed on demand: ChunkClaims; else chunkPlane()); the others it reads past. A chunk's recordings go to
// a buffer per recording that has records, in the order a one-thread replay
// writes them, and its trace lines to a text.

import { crc32 } from "node:zlib";
import type { CompiledSpec } from "../control/compiled.js";
import { sliceBatch } from "../engine/batches.js";
import { Engine } from "../engine/engine.js";
import type { RecordingSink } from "../engine/sinks.js";
import type { Counters } from "../engine/summary.js";
import type { TraceLines } from "../engine/trace-file.js";
import { DEFAULT_RUNNER, type PacketRanges } from "../wasm/runner.js";
import { BLOCK_PACKETS, BlockReader } from "./blocks.js";
import { type Inputs, openInputs } from "./inputs.js";

/** What a ChunkRunner needs: its data plane's index of how many, the description, the inputs and the run's options. */
export interface RunnerSetup {
  readonly index: number;
  readonly planes: number;
  readonly compiled: CompiledSpec;
  /** The --in endpoints as written, in order: injection k is endpoints[k]. */
  readonly endpoints: readonly string[];
  /** The --in files, in the same order. */
  readonly files: readonly string[];
  readonly trace: boolean;
  /** With trace, only these packets are traced. */
  readonly tracePackets?: PacketRanges;
  readonly hopLimit: number;
  readonly copyLimit: number;
  /** Packets per chunk (CHUNK_PACKETS unless a test asks for small ones). */
  readonly chunkPackets: number;
  /** Chunks after the first `planes` claimed on demand (ChunkClaims' words), else shared out by chunkPlane(). */
  readonly claims?: SharedArrayBuffer;
}

/** Packets per chunk: few messages per replay, few enough that reading, running and writing overlap. */
export const CHUNK_PACKETS = 16384;
/** Chunks of its own a data plane holds and the main thread has not written yet: each has a slot of its own. */
export const SLOTS = 4;

/**
 * Which data plane runs chunk `id`, of `planes`: in every WORKER_CHUNKS ×
 * threads + MAIN_CHUNKS, the worker threads (1 ..) WORKER_CHUNKS each, in
 * turn, then the main thread's (0) MAIN_CHUNKS: a smaller share, for it also
 * writes every file. The first goes to a worker thread: a replay of one chunk
 * runs there.
 */
export function chunkPlane(id: number, planes: number): number {
  if (planes === 1) return 0;
  const threads = planes - 1;
  const k = id % (WORKER_CHUNKS * threads + MAIN_CHUNKS);
  return k >= WORKER_CHUNKS * threads ? 0 : 1 + (k % threads);
}
const WORKER_CHUNKS = 2;
const MAIN_CHUNKS = 1;

/** The data plane of chunk `id` < planes, with ChunkClaims: worker threads 1, 2, … then the main thread's, 0. */
const firstOwner = (id: number, planes: number): number => (id + 1) % planes;

/** Chunks whose owner ChunkClaims remembers: more than the data planes hold unwritten (SLOTS each) and pass over. */
const OWNERS = 1024;

/**
 * Chunks claimed on demand, in shared memory: each of the first `planes` goes to a data plane of
 * its own (firstOwner: the first to a worker thread), so every data plane runs one; after those, the first data
 * plane to reach a chunk runs it. Every data plane reaches the chunks in order and claims or
 * passes each, so the next chunk not claimed is never behind the one a data plane reaches: a
 * claim is one compare-and-swap on it. A data plane that runs its chunks faster (or writes no
 * files) then takes more of them, whatever the pipeline's balance between reading and running.
 * ```
 * Int32 words: NEXT | owner's chunk id × OWNERS | owner's plane × OWNERS
 * ```
 */
export class ChunkClaims {
  static readonly BYTES = 4 * (1 + 2 * OWNERS);
  readonly #words: Int32Array;
  readonly #planes: number;

  constructor(buffer: SharedArrayBuffer, planes: number) {
    this.#words = new Int32Array(buffer);
    this.#planes = planes;
  }

  /** Before a replay: no chunk claimed. */
  reset(): void {
    this.#words.fill(-1);
    Atomics.store(this.#words, 0, this.#planes);
  }

  /** Whether data plane `plane`, reaching chunk `id`, runs it (claiming it when no other has). */
  claim(id: number, plane: number): boolean {
    if (id < this.#planes) return firstOwner(id, this.#planes) === plane;
    if (Atomics.compareExchange(this.#words, 0, id, id + 1) !== id) return false;
    Atomics.store(this.#words, 1 + OWNERS + (id % OWNERS), plane);
    Atomics.store(this.#words, 1 + (id % OWNERS), id);
    return true;
  }

  /** The data plane that runs chunk `id`, or −1 while none has claimed it yet. */
  owner(id: number): number {
    if (id < this.#planes) return firstOwner(id, this.#planes);
    if (Atomics.load(this.#words, 1 + (id % OWNERS)) !== id) return -1;
    return Atomics.load(this.#words, 1 + OWNERS + (id % OWNERS));
  }
}

/**
 * A slot's records: per recording that has records in the chunk, a buffer (on shared memory in a
 * worker thread) and the bytes used. A recording's buffer is kept for the slot's next chunk only
 * if it has records in this one: memory follows the records, whatever the number of recordings.
 */
export interface SlotRecords {
  /** The recordings with records in the chunk, in the order of their first. */
  readonly active: number[];
  readonly used: Map<number, number>;
  /** The CRC-32 of each recording's records in the chunk: worked out here, not on the thread that writes them. */
  readonly crcs: Map<number, number>;
  readonly bytes: Map<number, Uint8Array>;
  /** Buffers made (grown) since the main thread last saw this slot, by recording. */
  fresh: { recording: number; bytes: Uint8Array }[];
}

/** A recording's first buffer in a slot: grown, by doubling, to what its chunks need. */
const FIRST_BYTES = 4096;

/** A slot's records, before its first chunk. */
export function slotRecords(): SlotRecords {
  return { active: [], used: new Map(), crcs: new Map(), bytes: new Map(), fresh: [] };
}

/** A slot starts a chunk: the buffers of recordings that had no records in its last chunk go (and the main thread was
 * told of any made since). */
function startSlot(s: SlotRecords): void {
  for (const c of s.bytes.keys()) if (!s.used.has(c)) s.bytes.delete(c);
  s.used.clear();
  s.crcs.clear();
  s.active.length = 0;
  s.fresh = [];
}

/** Where the engine's recordings go: the records of the chunk being run. */
class Records implements RecordingSink {
  readonly #shared: boolean;
  slot: SlotRecords | undefined;

  constructor(shared: boolean) {
    this.#shared = shared;
  }

  write(c: number, data: Uint8Array, start: number, len: number): void {
    const s = this.slot;
    if (s === undefined) throw new Error("records outside a chunk");
    let used = s.used.get(c);
    if (used === undefined) {
      s.active.push(c);
      used = 0;
    }
    let bytes = s.bytes.get(c);
    if (bytes === undefined || used + len > bytes.length) {
      const size = Math.max(FIRST_BYTES, 2 * (used + len), 2 * (bytes?.length ?? 0));
      const next = this.#shared ? new Uint8Array(new SharedArrayBuffer(size)) : new Uint8Array(size);
      if (bytes !== undefined) next.set(bytes.subarray(0, used));
      bytes = next;
      s.bytes.set(c, bytes);
      s.fresh.push({ recording: c, bytes });
    }
    const records = data.subarray(start, start + len);
    bytes.set(records, used);
    s.used.set(c, used + len);
    s.crcs.set(c, crc32(records, s.crcs.get(c) ?? 0));
  }
}

/** A chunk's trace lines: their text, and each line's packet and length in bytes (for trace.idx). */
export interface ChunkLines {
  readonly text: string;
  readonly packets: number[];
  readonly bytes: number[];
}

/** A chunk's trace lines as they come, taken whole at its end. */
class LineSink implements TraceLines {
  #lines: string[] = [];
  #packets: number[] = [];
  #bytes: number[] = [];

  line(packet: number, text: string, len: number): void {
    this.#lines.push(text);
    this.#packets.push(packet);
    this.#bytes.push(len);
  }

  take(): ChunkLines {
    const lines = { text: this.#lines.join(""), packets: this.#packets, bytes: this.#bytes };
    this.#lines = [];
    this.#packets = [];
    this.#bytes = [];
    return lines;
  }
}

/** A chunk run: where its records are, and its trace lines. */
export interface ChunkDone {
  readonly id: number;
  readonly slot: number;
  readonly records: SlotRecords;
  readonly lines: ChunkLines;
}

/**
 * Reads a replay's one regular pcap file, taken as it is, in blocks (./blocks.ts), never one across
 * two chunks, while it can: `take(n)` each block's n packets, the first numbered `number()`. Then
 * the inputs' batches go on where the blocks stopped.
 */
function readBlocks(
  engine: Engine,
  inputs: Inputs,
  chunkPackets: number,
  number: () => number,
  take: (n: number) => void,
): void {
  const direct = inputs.blocks();
  if (direct === undefined) return;
  const reader = new BlockReader(engine.inputArea, direct.blocks, direct.injection);
  for (;;) {
    const at = number();
    const n = reader.next(Math.min(BLOCK_PACKETS, (Math.floor(at / chunkPackets) + 1) * chunkPackets - at));
    if (n === 0) break;
    take(n);
  }
  direct.read(reader.offset, number());
}

/** Runs its own chunks of a replay on an engine of its own: in a worker thread, or on the main thread. */
export class ChunkRunner {
  readonly #setup: RunnerSetup;
  readonly #engine: Engine;
  readonly #records: Records;
  readonly #slots: SlotRecords[];
  readonly #claims: ChunkClaims | undefined;

  constructor(setup: RunnerSetup, shared: boolean) {
    this.#setup = setup;
    this.#claims = setup.claims === undefined ? undefined : new ChunkClaims(setup.claims, setup.planes);
    this.#engine = Engine.open({
      compiled: setup.compiled,
      endpoints: setup.endpoints,
      hopLimit: setup.hopLimit,
      copyLimit: setup.copyLimit,
    });
    this.#records = new Records(shared);
    this.#slots = Array.from({ length: SLOTS }, () => slotRecords());
  }

  /** Whether this data plane runs chunk `id`, reaching it (a claim, with ChunkClaims). */
  #mine(id: number): boolean {
    const s = this.#setup;
    return this.#claims === undefined ? chunkPlane(id, s.planes) === s.index : this.#claims.claim(id, s.index);
  }

  /** The replay's inputs, opened as the main thread opens them: every data plane reads the same batches. */
  openInputs(): Inputs {
    return openInputs(this.#engine.endpoints, this.#setup.files, DEFAULT_RUNNER.batchPackets);
  }

  /**
   * Reads `inputs` to the end and runs this data plane's chunks (counters
   * from zero). Before a chunk goes to a slot, `free(previous)` is called
   * with the id of the chunk the slot held (−1: none) and must return once
   * that one is written; after, `done`. Returns the packets it ran, and how
   * many the inputs held.
   */
  replay(
    inputs: Inputs,
    free: (previous: number) => void,
    done: (chunk: ChunkDone) => void,
  ): { ran: number; packets: number } {
    const s = this.#setup;
    const engine = this.#engine;
    const sink = new LineSink();
    engine.connect({
      recordings: this.#records,
      ...(s.trace
        ? { trace: { lines: sink, ...(s.tracePackets !== undefined ? { packets: s.tracePackets } : {}) } }
        : {}),
    });
    const chunkPackets = s.chunkPackets;
    const records = this.#records;
    const held = this.#slots.map(() => -1);
    let own = 0;
    let id = -1;
    let slot = -1;
    let ran = 0;
    const endChunk = (): void => {
      engine.settle();
      const r = records.slot;
      if (r === undefined) return;
      done({ id, slot, records: r, lines: sink.take() });
      records.slot = undefined;
    };
    const startChunk = (next: number): void => {
      id = next;
      if (!this.#mine(id)) return;
      slot = own++ % SLOTS;
      free(held[slot] ?? -1);
      held[slot] = id;
      const r = this.#slots[slot] as SlotRecords;
      startSlot(r);
      records.slot = r;
    };
    /** The replay's number of the next packet. */
    let number = 0;
    /** Takes the next `count` packets: `run(i, end)` runs those of this data plane's chunks, by index from `number`. */
    const take = (count: number, run: (i: number, end: number) => void): void => {
      for (let i = 0; i < count;) {
        const chunk = Math.floor((number + i) / chunkPackets);
        if (chunk !== id) {
          endChunk();
          startChunk(chunk);
        }
        const end = Math.min(count, (chunk + 1) * chunkPackets - number);
        if (records.slot !== undefined) {
          run(i, end);
          ran += end - i;
        }
        i = end;
      }
      number += count;
    };
    if (!s.trace)
      readBlocks(
        engine,
        inputs,
        chunkPackets,
        () => number,
        (n) => take(n, () => engine.run(n, number)),
      );
    for (const batch of inputs.batches()) {
      const count = batch.count;
      take(count, (i, end) => engine.run(i === 0 && end === count ? batch : sliceBatch(batch, i, end), number + i));
      // Up to this data plane's next chunk, the packets are only counted: passed over where the input allows it.
      // (Chunks claimed on demand: to the end of this one, and the next is claimed or passed as it comes.)
      if (records.slot === undefined) {
        let next = id + 1;
        if (this.#claims === undefined) while (chunkPlane(next, s.planes) !== s.index) next++;
        number += inputs.skip(next * chunkPackets - number);
      }
    }
    endChunk();
    engine.disconnect();
    return { ran, packets: number };
  }

  /** The counters since the last replay() began. */
  counters(): Counters {
    return this.#engine.counters();
  }
}
