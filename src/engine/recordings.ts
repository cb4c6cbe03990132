// Recordings: what strata writes of the packets (its inputs are captures).
// DIR/links/<network>.<link>.pcap for every recorded link that carried traffic
// (both directions of a two-way link in one file, like a tap on the wire) and
// DIR/delivered/<network>.<member>.pcap for every member that received
// packets, each made on its first packet. The data plane writes the records
// itself, a ring for all recordings; RecordingFiles puts each recording's in
// its file. ./outputs.ts has the rest of --out.

import type { CompiledSpec } from "../control/compiled.js";
import type { FilePlace } from "../out-dir.js";
import { pcapFileHeader } from "../pcap/index.js";
import type { DataPlane } from "../wasm/module.js";
import type { RecordingTargets } from "../wasm/runner.js";
import { type BufferedFile, BufferedFiles } from "./buffered-files.js";

export const LINKS_DIR = "links";
export const DELIVERED_DIR = "delivered";

/** A recording: its file (DIR/sub/name.pcap), and what it records. */
export interface PlannedRecording {
  readonly sub: string;
  readonly name: string;
  readonly network: number;
  /** The links it taps (both directions of a two-way link share a recording), or the member whose deliveries it holds.
   * */
  readonly links: number[];
  readonly member?: number;
}

/**
 * The recordings of `compiled`, numbered as the data plane numbers them: one per recorded link
 * name, then one per member with a receive table (only a receive table delivers).
 */
export function planRecordings(compiled: CompiledSpec): PlannedRecording[] {
  const plan: PlannedRecording[] = [];
  const byName = new Map<string, PlannedRecording>();
  for (const l of compiled.links) {
    if (!l.recorded) continue;
    let r = byName.get(l.qualified);
    if (r === undefined) {
      r = { sub: LINKS_DIR, name: l.qualified, network: l.network, links: [] };
      byName.set(l.qualified, r);
      plan.push(r);
    }
    r.links.push(l.index);
  }
  for (const m of compiled.members) {
    if (m.tables.receive !== undefined)
      plan.push({ sub: DELIVERED_DIR, name: m.qualified, network: m.network, links: [], member: m.index });
  }
  return plan;
}

/** Numbers the recordings of `compiled` in the data plane `dp` (recording c fills buffer c); returns them in that
 * order. */
export function assignRecordings(compiled: CompiledSpec, dp: DataPlane): PlannedRecording[] {
  const x = dp.exports;
  const plan = planRecordings(compiled);
  for (const [c, planned] of plan.entries()) {
    for (const l of planned.links) x.linkSetRecording(l, c);
    if (planned.member !== undefined) x.memberSetRecording(planned.member, c);
  }
  return plan;
}

/**
 * The recording files of a run. Each link recording (both directions of a
 * two-way link share one) and each member's deliveries is a recording of the
 * data plane's ring; this class makes a recording's file when it first has
 * records (its header first, then the records), and appends the rest. Files
 * are written through BufferedFiles: buffers and descriptors follow the files
 * that have packets, within bounds, whatever the number of recordings.
 */
export class RecordingFiles implements RecordingTargets {
  readonly count: number;
  readonly #compiled: CompiledSpec;
  /** Per recording: its file (relative to `sub`) and network. */
  readonly #plan: readonly PlannedRecording[];
  /** Per recording, its file once it has records. */
  readonly #files: (BufferedFile | undefined)[] = [];
  readonly #written: BufferedFiles;

  /** `place`: --out, claimed for the files of planRecordings(compiled). */
  constructor(place: FilePlace, compiled: CompiledSpec) {
    this.#written = new BufferedFiles(place);
    this.#compiled = compiled;
    this.#plan = planRecordings(compiled);
    this.count = this.#plan.length;
  }

  /** `crc`: the records' CRC-32, when the thread that made them worked it out (a worker's chunk). */
  write(c: number, data: Uint8Array, start: number, len: number, crc?: number): void {
    let f = this.#files[c];
    if (f === undefined) {
      const p = this.#plan[c];
      if (p === undefined) return;
      const design = this.#compiled.networks[p.network]?.spec.design;
      // The data plane writes nanosecond, little-endian records: the header must say so.
      const header = pcapFileHeader({ linkType: design?.linkType ?? 1, nanosecond: true, snapLen: 262144 });
      f = this.#written.file(`${p.sub}/${p.name}.pcap`, header);
      this.#files[c] = f;
    }
    this.#written.append(f, data, start, len, crc);
  }

  close(): void {
    this.#written.close();
  }

  /** Each recording file's CRC-32 (hex), by its name relative to DIR, in the recordings' order; after close(). */
  digests(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const f of this.#files) if (f !== undefined) out[f.name] = f.check.hex();
    return out;
  }
}
