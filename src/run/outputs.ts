// Where a replay's packets are written: DIR/links/<network>.<link>.pcap for
// every link that carried traffic (both directions of a two-way link in one
// file, like a tap on the wire) and DIR/delivered/<network>.<member>.pcap for
// every member that received packets. Files open on their first packet.

import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { CompiledSpec } from "../control/compiled.js";
import { PcapWriter } from "../pcap/index.js";
import type { CaptureWriter } from "../pcap/index.js";
import type { OutputSink } from "../wasm/runner.js";

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

export class CaptureOutputs implements OutputSink {
  readonly #dir: string;
  readonly #compiled: CompiledSpec;
  readonly #links = new Map<string, CaptureWriter>();
  readonly #members = new Map<number, CaptureWriter>();
  /** Packets written per capture file (relative path). */
  readonly files = new Map<string, number>();
  delivered = 0;

  constructor(dir: string, compiled: CompiledSpec) {
    this.#dir = dir;
    this.#compiled = compiled;
  }

  packet(kind: "link" | "deliver", target: number, data: Uint8Array, start: number, len: number, origLen: number, tsSec: number, tsNsec: number): void {
    let w: CaptureWriter | undefined;
    if (kind === "link") {
      const link = this.#compiled.links[target];
      if (link === undefined) return;
      w = this.#links.get(link.capture) ?? this.#open(this.#links, link.capture, LINKS_DIR, link.capture, link.network);
      this.#count(join(LINKS_DIR, `${link.capture}.pcap`));
    } else {
      const m = this.#compiled.members[target];
      if (m === undefined) return;
      w = this.#members.get(target) ?? this.#open(this.#members, target, DELIVERED_DIR, m.qualified, m.network);
      this.#count(join(DELIVERED_DIR, `${m.qualified}.pcap`));
      this.delivered++;
    }
    w.write(data, start, len, origLen, tsSec, tsNsec);
  }

  #count(file: string): void {
    this.files.set(file, (this.files.get(file) ?? 0) + 1);
  }

  #open<K>(map: Map<K, CaptureWriter>, key: K, sub: string, name: string, network: number): CaptureWriter {
    const design = this.#compiled.networks[network]?.spec.design;
    // Nanosecond timestamps: a replay keeps the input's times exactly.
    const w = new PcapWriter(join(this.#dir, sub, `${name}.pcap`), { linkType: design?.linkType ?? 1, nanosecond: true, snapLen: 262144 });
    map.set(key, w);
    return w;
  }

  close(): void {
    for (const w of [...this.#links.values(), ...this.#members.values()]) w.close();
  }
}
