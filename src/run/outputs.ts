// Where a replay's packets are written: DIR/links/<network>.<link>.pcap for
// every link that carried traffic (both directions of a two-way link in one
// file, like a tap on the wire) and DIR/delivered/<network>.<member>.pcap for
// every member that received packets. Files open on their first packet.
// DIR/.strata-output lists what strata wrote: the only files a later run deletes
// (src/out-dir.ts, the guard every command that writes files goes through).

import { join } from "node:path";
import type { CompiledSpec } from "../control/compiled.js";
import { OutDir } from "../out-dir.js";
import { PcapWriter } from "../pcap/index.js";
import type { DataPlane } from "../wasm/module.js";
import type { CaptureTargets } from "../wasm/runner.js";

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
 * two-way link share one) and each member's deliveries get a capture buffer in
 * the data plane, which fills it with pcap records; this class writes the
 * file header when a buffer first has something, then appends the records.
 */
export class CaptureOutputs implements CaptureTargets {
  readonly count: number;
  readonly #dir: string;
  readonly #compiled: CompiledSpec;
  /** Per capture: its file (relative to `sub`) and network, and its writer once open. */
  readonly #files: { sub: string; name: string; network: number }[] = [];
  readonly #writers: (PcapWriter | undefined)[] = [];
  readonly #members = new Map<number, number>();

  constructor(dir: string, compiled: CompiledSpec, dp: DataPlane) {
    this.#dir = dir;
    this.#compiled = compiled;
    const plan = assignCaptures(compiled, dp);
    this.#files.push(...plan);
    plan.forEach((p, c) => {
      if (p.member !== undefined) this.#members.set(p.member, c);
    });
    this.count = this.#files.length;
  }

  /** The capture that writes member `member`'s deliveries (−1: none). */
  memberCapture(member: number): number {
    return this.#members.get(member) ?? -1;
  }

  write(c: number, data: Uint8Array, start: number, len: number): void {
    let w = this.#writers[c];
    if (w === undefined) {
      const f = this.#files[c];
      if (f === undefined) return;
      const design = this.#compiled.networks[f.network]?.spec.design;
      // The data plane writes nanosecond, little-endian records: the header must say so.
      w = new PcapWriter(join(this.#dir, f.sub, `${f.name}.pcap`), { linkType: design?.linkType ?? 1, nanosecond: true, snapLen: 262144 });
      this.#writers[c] = w;
    }
    w.appendRecords(data, start, len);
  }

  close(): void {
    for (const w of this.#writers) w?.close();
  }
}
