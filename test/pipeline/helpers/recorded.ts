// What strata writes of the packets, kept in memory: each recording's pcap
// records, by the file strata run writes them to ("links/lan.h1.1-sw.1",
// "delivered/lan.h2"). A recording sink for an Engine (its connect()), or, with
// recordIn(), the recording targets of a bare data plane's Runner.

import type { CompiledSpec } from "../../../src/control/compiled.js";
import { assignRecordings, planRecordings } from "../../../src/engine/recordings.js";
import type { DataPlane } from "../../../src/wasm/module.js";
import type { RecordingTargets } from "../../../src/wasm/runner.js";

/** One pcap record: nanosecond timestamp, the length on the wire, the bytes kept. */
export interface Rec {
  readonly tsSec: number;
  readonly tsNsec: number;
  readonly origLen: number;
  readonly bytes: Uint8Array;
}

/** A pcap record's header: ts_sec, ts_nsec, incl_len, orig_len, each u32 little-endian (nanosecond pcap). */
const HEADER_LEN = 16;

export class Recorded implements RecordingTargets {
  readonly count: number;
  /** Records by file, each file's in the order written. */
  readonly files = new Map<string, Rec[]>();
  readonly #names: readonly string[];

  constructor(compiled: CompiledSpec) {
    this.#names = planRecordings(compiled).map((p) => `${p.sub}/${p.name}`);
    this.count = this.#names.length;
  }

  write(c: number, data: Uint8Array, start: number, len: number): void {
    const name = this.#names[c];
    if (name === undefined) throw new Error(`records for recording ${c}, of ${this.count}`);
    let list = this.files.get(name);
    if (list === undefined) {
      list = [];
      this.files.set(name, list);
    }
    const view = new DataView(data.buffer, data.byteOffset);
    const end = start + len;
    for (let r = start; r < end;) {
      if (r + HEADER_LEN > end) throw new Error(`recording ${name}: a record header cut at ${r - start} of ${len}`);
      const capLen = view.getUint32(r + 8, true);
      if (r + HEADER_LEN + capLen > end) throw new Error(`recording ${name}: a record cut at ${r - start} of ${len}`);
      list.push({
        tsSec: view.getUint32(r, true),
        tsNsec: view.getUint32(r + 4, true),
        origLen: view.getUint32(r + 12, true),
        bytes: data.slice(r + HEADER_LEN, r + HEADER_LEN + capLen),
      });
      r += HEADER_LEN + capLen;
    }
  }

  /** The records of one file (none: []). */
  of(file: string): readonly Rec[] {
    return this.files.get(file) ?? [];
  }
}

/** Recording targets for a Runner on `dp`, where `compiled` is installed: the recordings numbered as strata run
 * numbers them. */
export function recordIn(dp: DataPlane, compiled: CompiledSpec): Recorded {
  assignRecordings(compiled, dp);
  return new Recorded(compiled);
}

/** The file a link's crossings are recorded in (undefined: the link is not recorded), and a member's deliveries. */
export const linkFile = (c: CompiledSpec, link: number): string | undefined => {
  const l = c.links[link];
  return l?.recorded === true ? `links/${l.qualified}` : undefined;
};
export const deliveredFile = (c: CompiledSpec, member: number): string =>
  `delivered/${c.members[member]?.qualified ?? `member ${member}`}`;
