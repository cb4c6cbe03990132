// Where a replay's packets are written: DIR/links/<network>.<link>.pcap for
// every link that carried traffic (both directions of a two-way link in one
// file, like a tap on the wire) and DIR/delivered/<network>.<member>.pcap for
// every member that received packets. Files open on their first packet.

import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { CompiledSpec } from "../control/compiled.js";
import { PcapWriter } from "../pcap/index.js";
import type { DataPlane } from "../wasm/module.js";
import type { CaptureTargets } from "../wasm/runner.js";

export const LINKS_DIR = "links";
export const DELIVERED_DIR = "delivered";

/** Makes DIR and empties the parts of it a replay writes, so no file from an older run remains. */
export function prepareOutDir(dir: string): void {
  mkdirSync(dir, { recursive: true });
  for (const sub of [LINKS_DIR, DELIVERED_DIR]) {
    const path = join(dir, sub);
    mkdirSync(path, { recursive: true });
    for (const f of readdirSync(path)) if (f.endsWith(".pcap")) rmSync(join(path, f));
  }
  for (const f of ["summary.json", "trace.jsonl"]) rmSync(join(dir, f), { force: true });
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

  constructor(dir: string, compiled: CompiledSpec, dp: DataPlane) {
    this.#dir = dir;
    this.#compiled = compiled;
    const x = dp.exports;
    const byName = new Map<string, number>();
    for (const l of compiled.links) {
      if (!l.captured) continue;
      let c = byName.get(l.capture);
      if (c === undefined) {
        c = this.#files.push({ sub: LINKS_DIR, name: l.capture, network: l.network }) - 1;
        byName.set(l.capture, c);
      }
      x.linkSetCapture(l.index, c);
    }
    for (const m of compiled.members) {
      if (m.tables.receive === undefined) continue; // only a receive table delivers
      x.memberSetCapture(m.index, this.#files.push({ sub: DELIVERED_DIR, name: m.qualified, network: m.network }) - 1);
    }
    this.count = this.#files.length;
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
