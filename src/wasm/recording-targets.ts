// What a Runner (./runner.ts) hands the records the data plane writes itself to: their targets, what is done with the
// data plane's memory while the records are read where they lie, and who may take the recording ring whole.

/**
 * Recordings the data plane writes itself (what a link carried, what a member got:
 * assembly/pipeline/recording.ts): the records of every recording c —
 * pcap records, nanosecond timestamps, little-endian — go to one ring, which is handed to
 * `write` a recording at a time when the pipeline needs room, and at flushRecordings(). The
 * runner sizes the ring to hold a record of the longest packet a packet buffer holds.
 */
export interface RecordingTargets {
  readonly count: number;
  /**
   * Records of recording c, in their order: data[start .. start+len), a view on linear memory, which stays as it is
   * until the next flush (the file writer may write it from there: src/engine/file-writer.ts lend()).
   * Called for the recordings that have records, in the order of their numbers.
   */
  write(c: number, data: Uint8Array, start: number, len: number): void;
  /** Without it, nothing reads the records after `write` returns. */
  readonly lender?: MemoryLender;
  /** With it, the ring may be handed off whole, to be grouped elsewhere (RingTaker). */
  readonly taker?: RingTaker;
}

/** The recording ring as it is, handed off at a pause: its records are grouped and written by another thread. */
export interface HandedRing {
  readonly memory: WebAssembly.Memory;
  /** The ring's records, as assembly/pipeline/recording.ts draws them: memory[start .. start+len). */
  readonly start: number;
  readonly len: number;
  /** Where they may be grouped, `len` bytes at most; the taker's until settled. */
  readonly gathered: number;
  /** The recordings, numbered 0 .. count−1, and those whose first record came since the last pause. */
  readonly count: number;
  readonly fresh: Uint32Array;
}

/**
 * Takes the recording ring whole at a pause (src/engine/recordings.ts: the file writer's thread groups it), leaving
 * the data plane to fill its other ring meanwhile.
 */
export interface RingTaker {
  /** A number to settleRing() on once the ring and the grouped area are let go, or −1: not taken (grouped here, as
   * without a taker). */
  takeRing(ring: HandedRing): number;
  /** Returns once the ring taken under `token` is let go. */
  settleRing(token: number): void;
}

/**
 * What is done with a data plane's memory around the records handed on (the engine's: its file writer, which may
 * write them where they lie, src/engine/file-writer.ts): lent while `write` is called, settled before the records are
 * grouped again or the rings re-made.
 */
export interface MemoryLender {
  lend(memory: WebAssembly.Memory): void;
  unlend(memory: WebAssembly.Memory): void;
  /** Returns once nothing reads the bytes lent any more. */
  settle(memory: WebAssembly.Memory): void;
}
