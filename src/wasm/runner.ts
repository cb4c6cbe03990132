// Running batches through the data plane from the TypeScript side: the other
// half of assembly/pipeline/run.ts. A batch goes in with one set() per array;
// the data plane runs it to the end, pausing only when the recording ring or
// the trace ring fills; records and events come back as views on linear
// memory, valid until the next call.

import { R_CAP_LEN, RECORD_HEADER_LEN } from "../pcap/pcap-layout.js";
import type { PcapFormat } from "../pcap/types.js";
import { RECORDING_TAG_LEN, LAYOUTS, REGIONS } from "./abi.js";
import type { DataPlane } from "./module.js";

/** Packet numbers: ascending, disjoint ranges [first, last], both in (`--trace-packets`, src/run/trace-packets.ts). */
export type PacketRanges = readonly (readonly [number, number])[];

export interface RunnerOptions {
  /** Input packets per batch, and bytes of their data (grown on demand). */
  readonly batchPackets: number;
  readonly batchBytes: number;
  /** Packet buffers for copies that are written to (TTL, pushed headers). */
  readonly slots: number;
  readonly slotLen: number;
  /**
   * With it, packet buffers (and the recording ring) grow, up to this many bytes,
   * before a batch holding a packet longer than slotLen − headroom; without it
   * they keep slotLen.
   */
  readonly slotLenMax?: number;
  readonly headroom: number;
  /**
   * Bytes of the recording ring at least, shared by every recording (room for many records
   * between writes); always room for the largest record. It is allocated twice: the ring, and
   * its records grouped by recording when it is written out.
   */
  readonly recordingBytes: number;
  readonly traceEvents: number;
  readonly hopLimit: number;
  readonly copyLimit: number;
  readonly trace: boolean;
  /** With `trace`, only these packets are traced; all when not given. */
  readonly tracePackets?: PacketRanges;
  /** The most copies one step can make (CompiledSpec.maxFanout). */
  readonly maxFanout: number;
}

export const DEFAULT_RUNNER: RunnerOptions = {
  batchPackets: 256,
  batchBytes: 1 << 20,
  slots: 256,
  slotLen: 16384 + 256,
  headroom: 256,
  recordingBytes: 2 << 20,
  traceEvents: 1 << 15,
  hopLimit: 64,
  copyLimit: 4096,
  trace: false,
  maxFanout: 1,
};

/**
 * The most links one packet may cross: far beyond any description's diameter
 * (IP's TTL stops at 255), and it bounds what a loop costs before it is dropped.
 */
export const HOP_LIMIT_MAX = 1024;
/**
 * The most copies of one input packet: copies share a packet buffer, which
 * counts its holders in 16 bits (assembly/pipeline/packet.ts) — the copies and the original.
 */
export const COPY_LIMIT_MAX = 65534;

/** Throws a RangeError unless the limits are whole numbers the data plane can hold (0 allowed). */
export function checkLimits(options: {
  readonly hopLimit?: number | undefined;
  readonly copyLimit?: number | undefined;
}): void {
  const bounds = [
    ["hopLimit", options.hopLimit, HOP_LIMIT_MAX],
    ["copyLimit", options.copyLimit, COPY_LIMIT_MAX],
  ] as const;
  for (const [name, value, max] of bounds) {
    if (value !== undefined && !(Number.isInteger(value) && value >= 0 && value <= max)) {
      throw new RangeError(`${name} ${value} is not a whole number from 0 to ${max}`);
    }
  }
}

/** A batch of input packets; the layout of PacketBatch, plus where each packet enters. */
export interface InputBatch {
  readonly data: Uint8Array;
  readonly count: number;
  readonly offset: Uint32Array;
  readonly capLen: Uint32Array;
  readonly origLen: Uint32Array;
  readonly tsSec: Float64Array;
  readonly tsNsec: Uint32Array;
  /** The injection endpoint of every packet, or one for all. */
  readonly endpoint: number | Uint32Array;
}

/** A batch in linear memory, ready to run (see Runner.stage). */
export interface Staged {
  readonly count: number;
  /** The batch's offset of its first byte: inputs are re-based on it in wasm. */
  readonly base: number;
}

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

/** Where a traced run's events go, in the order the data plane wrote them. */
export interface TraceSink {
  event(e: TraceEvent): void;
}

export interface TraceEvent {
  readonly kind: number;
  readonly stage: number;
  readonly action: number;
  readonly reason: number;
  readonly packet: number;
  readonly copy: number;
  readonly member: number;
  readonly row: number;
  /** The in-link or out-link identifier (or the session) the step names. */
  readonly ident: number;
  readonly link: number;
  readonly arg: number;
}

/** The input arrays in linear memory: a byte address for the data, element indices for the rest. */
interface InputRegions {
  readonly data: number;
  readonly offset: number;
  readonly len: number;
  readonly origLen: number;
  readonly nsec: number;
  readonly sec: number;
  readonly endpoint: number;
}

/** The first `n` elements of `a`: `a` itself when that is all of it (no view made). */
function first<A extends Uint32Array | Float64Array>(a: A, n: number): A {
  return a.length === n ? a : (a.subarray(0, n) as A);
}

/** Each data plane's input arrays, as last made by inputInit (every call of which is here, and forgets them). */
const inputRegions = new WeakMap<DataPlane, InputRegions>();

/** region(R("in-data")) …: the area's index in the ABI. */
const R = (name: (typeof REGIONS)[number]): number => REGIONS.indexOf(name);
const C = LAYOUTS.RINGREC;
const E = LAYOUTS.EVENT;

/** The input area, for captures read straight into linear memory in blocks (src/run/blocks.ts). */
export interface InputArea {
  inputRoom(packets: number, bytes: number): number;
  inputBytes(): Uint8Array;
  parsePcap(
    start: number,
    end: number,
    format: PcapFormat,
    max: number,
    endpoint: number,
  ): { count: number; end: number };
}

export class Runner implements InputArea {
  readonly #dp: DataPlane;
  readonly #options: RunnerOptions;
  #dataCap: number;
  /** Input packets the input arrays hold now: batchPackets, or more for blocks read in place. */
  #packetCap: number;
  /** Bytes per packet buffer now: slotLen, or more once grown. */
  #slotLen: number;
  readonly #paused: number;
  readonly #recordings: RecordingTargets | undefined;
  /** The recordings with records, sorted, at each flush (grown as needed). */
  #active = new Uint32Array(0);

  /** Link crossings and deliveries are recorded (to `recordings`, a recording each) only with `recordings`. */
  constructor(dp: DataPlane, options: Partial<RunnerOptions> = {}, recordings?: RecordingTargets) {
    this.#dp = dp;
    const o = { ...DEFAULT_RUNNER, ...options };
    checkLimits(o);
    this.#options = o;
    const x = dp.exports;
    x.inputInit(o.batchPackets, o.batchBytes);
    inputRegions.delete(dp);
    this.#dataCap = o.batchBytes;
    this.#packetCap = o.batchPackets;
    this.#slotLen = o.slotLen;
    this.#recordings = recordings;
    this.#buffers();
    x.setTracing(o.trace ? 1 : 0);
    if (o.trace && o.tracePackets !== undefined) {
      x.traceOnly();
      for (const [first, last] of o.tracePackets) x.traceRange(first, last);
    }
    x.stackInit(Math.max(64, o.copyLimit + 1), o.copyLimit);
    x.setHopLimit(o.hopLimit);
    x.setMaxFanout(o.maxFanout);
    this.#paused = dp.constant("STATUS_PAUSED");
  }

  #locateInputs(): InputRegions {
    const x = this.#dp.exports;
    const inputs: InputRegions = {
      // Addresses come back as i32: one past 2 GiB would be negative.
      data: x.region(R("in-data")) >>> 0,
      offset: x.region(R("in-offset")) >>> 2,
      len: x.region(R("in-len")) >>> 2,
      origLen: x.region(R("in-orig-len")) >>> 2,
      nsec: x.region(R("in-nsec")) >>> 2,
      sec: x.region(R("in-sec")) >>> 2,
      endpoint: x.region(R("in-endpoint")) >>> 2,
    };
    inputRegions.set(this.#dp, inputs);
    return inputs;
  }

  /** Bytes per packet buffer now (see slotLenMax). */
  get slotLen(): number {
    return this.#slotLen;
  }

  /** (Re)makes the packet buffers and the rings for #slotLen: only while no packet is in flight. */
  #buffers(): void {
    const o = this.#options;
    const x = this.#dp.exports;
    const slotLen = this.#slotLen;
    x.poolInit(o.slots, slotLen, o.headroom);
    // A step writes at most 4 + maxFanout events (assembly/pipeline/run.ts).
    x.traceInit(o.trace ? Math.max(o.traceEvents, 4 * (o.maxFanout + 8)) : 1);
    const recordings = this.#recordings;
    recordings?.lender?.settle(x.memory); // the grouped records the file writer may still be writing are let go
    // The recording ring must hold the largest record: a full buffer's packet (tagged, RECORDING_TAG_LEN more).
    if (recordings !== undefined)
      x.recordingsInit(
        recordings.count,
        Math.max(o.recordingBytes, C.SIZE[0] + RECORD_HEADER_LEN + RECORDING_TAG_LEN + slotLen),
      );
  }

  /** Grows the buffers, between batches, for a packet of `len` bytes; at slotLenMax they stay. */
  #grow(len: number): void {
    const o = this.#options;
    const max = o.slotLenMax ?? o.slotLen;
    if (this.#slotLen >= max) return;
    this.#slotLen = Math.min(max, Math.max(2 * this.#slotLen, len + o.headroom));
    this.flushRecordings(); // what the recording ring holds goes to the files before it is re-made
    this.#buffers();
  }

  /** Traces no more packets from the next one on (the rings stay as they are). */
  stopTracing(): void {
    this.#dp.exports.setTracing(0);
  }

  get options(): RunnerOptions {
    return this.#options;
  }

  /** Runs `batch`'s packets, numbered from `first`, to the end; trace events go to `sink`. */
  run(batch: InputBatch, first: number, sink: TraceSink | null): void {
    this.go(this.stage(batch), first, sink);
  }

  /** Copies a batch into linear memory: one set() per array. Returns what go() needs. */
  stage(batch: InputBatch): Staged {
    const n = batch.count;
    if (n > this.#options.batchPackets)
      throw new Error(`batch of ${n} packets; the runner takes ${this.#options.batchPackets}`);
    let base = n === 0 ? 0 : (batch.offset[0] ?? 0);
    let end = base;
    let longest = 0;
    // Packets in order, none overlapping the one before (so none another): each may be written in place.
    let apart = true;
    for (let i = 0; i < n; i++) {
      const start = batch.offset[i] ?? 0;
      const len = batch.capLen[i] ?? 0;
      if (start < end) apart = false;
      if (start + len > end) end = start + len;
      if (start < base) base = start;
      if (len > longest) longest = len;
    }
    if (longest + this.#options.headroom > this.#slotLen) this.#grow(longest);
    const span = end - base;
    const x = this.#dp.exports;
    if (span > this.#dataCap) {
      this.#dataCap = Math.max(span, 2 * this.#dataCap);
      x.inputInit(this.#packetCap, this.#dataCap);
      inputRegions.delete(this.#dp);
    }
    const mem = this.#dp.mem;
    const at = inputRegions.get(this.#dp) ?? this.#locateInputs();
    mem.u8.set(base === 0 && end === batch.data.length ? batch.data : batch.data.subarray(base, end), at.data);
    const u32 = mem.u32;
    u32.set(first(batch.offset, n), at.offset);
    u32.set(first(batch.capLen, n), at.len);
    u32.set(first(batch.origLen, n), at.origLen);
    u32.set(first(batch.tsNsec, n), at.nsec);
    u32.set(first(batch.tsSec, n), at.sec); // whole seconds, as pcap's ts_sec (u32)
    if (typeof batch.endpoint === "number") u32.fill(batch.endpoint, at.endpoint, at.endpoint + n);
    else u32.set(first(batch.endpoint, n), at.endpoint);
    x.setInputWritable(apart ? 1 : 0);
    return { count: n, base };
  }

  /**
   * Makes the input area hold `packets` packets and `bytes` bytes of their data at least, for
   * blocks read in place (what it held is lost when it grows); returns its bytes' capacity.
   */
  inputRoom(packets: number, bytes: number): number {
    if (packets > this.#packetCap || bytes > this.#dataCap) {
      this.#packetCap = Math.max(packets, this.#packetCap);
      this.#dataCap = Math.max(bytes, this.#dataCap);
      this.#dp.exports.inputInit(this.#packetCap, this.#dataCap);
      inputRegions.delete(this.#dp);
    }
    return this.#dataCap;
  }

  /** The input area's bytes: a view on linear memory, to read a block into; valid until the next call into wasm. */
  inputBytes(): Uint8Array {
    const at = inputRegions.get(this.#dp) ?? this.#locateInputs();
    return this.#dp.mem.u8.subarray(at.data, at.data + this.#dataCap);
  }

  /**
   * Fills the input arrays from the pcap records in the input area's bytes [start, end)
   * (assembly/input.ts), at most `max` (up to inputRoom's packets), each entering at `endpoint`:
   * how many, and the byte after the last. It stops before a record that is not whole or is
   * longer than `capLimit`; the packet buffers grow first for a longer packet than they hold.
   */
  parsePcap(
    start: number,
    end: number,
    format: PcapFormat,
    max: number,
    endpoint: number,
  ): { count: number; end: number } {
    const x = this.#dp.exports;
    const o = this.#options;
    const dp = this.#dp;
    const flags =
      (format.bigEndian ? dp.constant("PCAP_BIG_ENDIAN") : 0) |
      (format.nanosecond ? dp.constant("PCAP_NANOSECOND") : 0);
    const limit = format.capLimit;
    for (;;) {
      // Records longer than the packet buffers hold stop the pass while the buffers can grow (as stage() grows them).
      const room = this.#slotLen < (o.slotLenMax ?? o.slotLen) ? this.#slotLen - o.headroom : limit;
      const count = x.inputPcap(start, end, flags, Math.min(limit, room), Math.min(max, this.#packetCap), endpoint);
      const stop = x.inputPcapEnd() >>> 0;
      if (count > 0 || end - stop < RECORD_HEADER_LEN) return { count, end: stop };
      const bytes = this.inputBytes();
      const len = new DataView(bytes.buffer, bytes.byteOffset + stop, RECORD_HEADER_LEN).getUint32(
        R_CAP_LEN,
        !format.bigEndian,
      );
      if (len <= room || len > limit) return { count, end: stop };
      this.#grow(len);
    }
  }

  /**
   * Runs the staged batch to the end. With a null sink the trace ring is only
   * emptied; the recordings are written at every pause (flushRecordings).
   */
  go(staged: Staged, first: number, sink: TraceSink | null): void {
    if (staged.count === 0) return;
    const x = this.#dp.exports;
    let status = x.run(staged.count, first, staged.base);
    while (status === this.#paused) {
      if (sink === null) x.drained();
      else this.#drain(sink);
      this.flushRecordings();
      status = x.resume();
    }
    if (sink === null) x.drained();
    else this.#drain(sink);
  }

  /** Hands the recording ring's records to their targets, a recording at a time, and empties it; call at the end. */
  flushRecordings(): void {
    const recordings = this.#recordings;
    const x = this.#dp.exports;
    // Without targets, records a data plane still makes (recordings numbered for an earlier runner) are let go: kept,
    // they would fill the ring, and the run would pause for room forever.
    if (recordings === undefined) return x.recordingsDrained();
    // The records grouped last time may still be being written where they lie: they are grouped again only after.
    const lender = recordings.lender;
    lender?.settle(x.memory);
    const n = x.recordingsGather();
    if (n > 0) {
      lender?.lend(x.memory);
      try {
        const mem = this.#dp.mem;
        if (this.#active.length < n) this.#active = new Uint32Array(Math.max(n, 2 * this.#active.length));
        const active = this.#active.subarray(0, n);
        const from = x.region(R("recording-active")) >>> 2;
        active.set(mem.u32.subarray(from, from + n));
        active.sort();
        const ends = x.region(R("recording-span-ends")) >>> 2;
        const lens = x.region(R("recording-span-lens")) >>> 2;
        for (const c of active) {
          // Views taken again for each: a target may call into the data plane, which may grow its memory.
          const u32 = mem.u32;
          const len = u32[lens + c] ?? 0;
          recordings.write(c, mem.u8, (u32[ends + c] ?? 0) - len, len);
        }
      } finally {
        lender?.unlend(x.memory);
      }
    }
    x.recordingsDrained();
  }

  /** Hands the trace ring's events to `sink` and empties it. */
  #drain(sink: TraceSink): void {
    const x = this.#dp.exports;
    const mem = this.#dp.mem;
    const u8 = mem.u8;
    const view = mem.view;
    const base = x.region(R("trace-base")) >>> 0;
    const count = x.region(R("trace-pos"));
    for (let k = 0; k < count; k++) {
      const e = base + k * E.SIZE[0];
      sink.event({
        kind: u8[e + E.KIND[0]] ?? 0,
        stage: u8[e + E.STAGE[0]] ?? 0,
        action: u8[e + E.ACTION[0]] ?? 0,
        reason: u8[e + E.REASON[0]] ?? 0,
        packet: view.getUint32(e + E.PACKET[0], true),
        copy: view.getUint32(e + E.COPY[0], true),
        member: view.getInt32(e + E.MEMBER[0], true),
        row: view.getInt32(e + E.ROW[0], true),
        ident: view.getUint32(e + E.IDENT[0], true),
        link: view.getInt32(e + E.LINK[0], true),
        arg: view.getUint32(e + E.ARG[0], true),
      });
    }
    x.drained();
  }
}
