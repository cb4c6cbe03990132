// Where a replay's packets are written: DIR/links/<network>.<link>.pcap for
// every link that carried traffic (both directions of a two-way link in one
// file, like a tap on the wire) and DIR/delivered/<network>.<member>.pcap for
// every member that received packets. Files are made on their first packet.
// DIR/.strata-output lists what strata wrote: the only files a later run deletes
// (src/out-dir.ts, the guard every command that writes files goes through).

import { join } from "node:path";
import type { CompiledSpec } from "../control/compiled.js";
import { OutDir } from "../out-dir.js";
import { pcapFileHeader } from "../pcap/index.js";
import type { DataPlane } from "../wasm/module.js";
import type { CaptureTargets } from "../wasm/runner.js";
import { type CaptureFile, CaptureFiles } from "./capture-files.js";

export const LINKS_DIR = "links";
export const DELIVERED_DIR = "delivered";
export const SUMMARY_FILE = "summary.json";
export const TRACE_FILE = "trace.jsonl";
/** Beside the trace: where each packet's line starts (src/run/trace-file.ts). */
export const TRACE_INDEX_FILE = "trace.idx";
/** Claims DIR for a replay (strata run, strata serve) of `compiled` that reads `inputs`. */
export function claimReplayOut(dir: string, compiled: CompiledSpec, options: { command: string; inputs: readonly string[]; force: boolean; trace: boolean }): OutDir {
  return OutDir.claim(dir, { command: options.command, inputs: options.inputs, force: options.force, files: outputFiles(compiled, options.trace), dirs: [LINKS_DIR, DELIVERED_DIR] });
}

/** The files a replay of `compiled` may write, relative to DIR. */
export function outputFiles(compiled: CompiledSpec, trace: boolean): string[] {
  const captures = planCaptures(compiled).map((c) => `${c.sub}/${c.name}.pcap`);
  return [...captures, SUMMARY_FILE, ...(trace ? [TRACE_FILE, TRACE_INDEX_FILE] : [])];
}

interface PlannedCapture {
  readonly sub: string;
  readonly name: string;
  readonly network: number;
  /** The links it taps (both directions of a two-way link share a capture), or the member whose deliveries it holds. */
  readonly links: number[];
  readonly member?: number;
}

/** One capture per captured link name, then one per member with a receive table (only a receive table delivers). */
function planCaptures(compiled: CompiledSpec): PlannedCapture[] {
  const plan: PlannedCapture[] = [];
  const byName = new Map<string, PlannedCapture>();
  for (const l of compiled.links) {
    if (!l.captured) continue;
    let c = byName.get(l.capture);
    if (c === undefined) {
      c = { sub: LINKS_DIR, name: l.capture, network: l.network, links: [] };
      byName.set(l.capture, c);
      plan.push(c);
    }
    c.links.push(l.index);
  }
  for (const m of compiled.members) {
    if (m.tables.receive !== undefined) plan.push({ sub: DELIVERED_DIR, name: m.qualified, network: m.network, links: [], member: m.index });
  }
  return plan;
}

/** Numbers the captures of `compiled` in the data plane `dp` (capture c fills buffer c); returns them in that order. */
export function assignCaptures(compiled: CompiledSpec, dp: DataPlane): PlannedCapture[] {
  const x = dp.exports;
  const plan = planCaptures(compiled);
  for (const [c, planned] of plan.entries()) {
    for (const l of planned.links) x.linkSetCapture(l, c);
    if (planned.member !== undefined) x.memberSetCapture(planned.member, c);
  }
  return plan;
}

/**
 * The capture files of a replay. Each link capture (both directions of a
 * two-way link share one) and each member's deliveries is a capture of the
 * data plane's ring; this class makes a capture's file when it first has
 * records (its header first, then the records), and appends the rest. Files
 * are written through CaptureFiles: buffers and descriptors follow the files
 * that have packets, within bounds, whatever the number of captures.
 */
export class CaptureOutputs implements CaptureTargets {
  readonly count: number;
  readonly #dir: string;
  readonly #compiled: CompiledSpec;
  /** Per capture: its file (relative to `sub`) and network. */
  readonly #plan: readonly PlannedCapture[];
  /** Per capture, its file once it has records. */
  readonly #files: (CaptureFile | undefined)[] = [];
  readonly #written = new CaptureFiles();
  readonly #members = new Map<number, number>();

  constructor(dir: string, compiled: CompiledSpec, dp: DataPlane) {
    this.#dir = dir;
    this.#compiled = compiled;
    this.#plan = assignCaptures(compiled, dp);
    this.#plan.forEach((p, c) => {
      if (p.member !== undefined) this.#members.set(p.member, c);
    });
    this.count = this.#plan.length;
  }

  /** The capture that writes member `member`'s deliveries (−1: none). */
  memberCapture(member: number): number {
    return this.#members.get(member) ?? -1;
  }

  write(c: number, data: Uint8Array, start: number, len: number): void {
    let f = this.#files[c];
    if (f === undefined) {
      const p = this.#plan[c];
      if (p === undefined) return;
      const design = this.#compiled.networks[p.network]?.spec.design;
      // The data plane writes nanosecond, little-endian records: the header must say so.
      const header = pcapFileHeader({ linkType: design?.linkType ?? 1, nanosecond: true, snapLen: 262144 });
      f = this.#written.file(join(this.#dir, p.sub, `${p.name}.pcap`), header);
      this.#files[c] = f;
    }
    this.#written.append(f, data, start, len);
  }

  close(): void {
    this.#written.close();
  }
}
