// What a run writes into --out (strata run, strata serve): the recordings
// (./recordings.ts), summary.json at the end, and with a trace trace.jsonl and
// trace.idx (./trace-file.ts). The directory is claimed by the rules every
// command that writes files goes through (src/out-dir.ts): DIR/.strata-output
// lists what strata wrote, the only files a later run deletes; DIR is locked
// until release(), and every file is made through the claim's handles.
// summary.json records the CRC-32 of every other file the run wrote, which
// strata trace and strata view --run check (./digests.ts).

import type { CompiledSpec } from "../control/compiled.js";
import { OutDir } from "../out-dir.js";
import { DELIVERED_DIR, LINKS_DIR, planRecordings, RecordingFiles } from "./recordings.js";
import type { Summary } from "./summary.js";
import { TRACE_FILE, TRACE_INDEX_FILE, TraceFile } from "./trace-file.js";

export const SUMMARY_FILE = "summary.json";

export interface OutputsOptions {
  /** The command that writes ("run", "serve"): named in the marker. */
  readonly command: string;
  /** The files the run reads: never inside DIR. */
  readonly inputs: readonly string[];
  /** Write into a non-empty directory strata did not write (never replacing its files). */
  readonly force: boolean;
  /** Write trace.jsonl and trace.idx too. */
  readonly trace: boolean;
}

/** The files a run of `compiled` may write, relative to DIR. */
export function outputFiles(compiled: CompiledSpec, trace: boolean): string[] {
  const recordings = planRecordings(compiled).map((r) => `${r.sub}/${r.name}.pcap`);
  return [...recordings, SUMMARY_FILE, ...(trace ? [TRACE_FILE, TRACE_INDEX_FILE] : [])];
}

/** The --out directory of a run: claimed when opened, its recording files and trace written as the packets run,
 * summary.json at finish(). */
export class Outputs {
  readonly dir: OutDir;
  readonly recordings: RecordingFiles;
  readonly trace: TraceFile | undefined;

  private constructor(dir: OutDir, recordings: RecordingFiles, trace: TraceFile | undefined) {
    this.dir = dir;
    this.recordings = recordings;
    this.trace = trace;
  }

  /** Claims DIR for a run of `compiled` (InputError if it is not strata's to write); the trace's files are made now,
   * the recordings' on their first records. */
  static open(dir: string, compiled: CompiledSpec, options: OutputsOptions): Outputs {
    const claimed = OutDir.claim(dir, {
      command: options.command,
      inputs: options.inputs,
      force: options.force,
      files: outputFiles(compiled, options.trace),
      dirs: [LINKS_DIR, DELIVERED_DIR],
    });
    try {
      return new Outputs(
        claimed,
        new RecordingFiles(claimed, compiled),
        options.trace ? new TraceFile(claimed) : undefined,
      );
    } catch (err) {
      claimed.release();
      throw err;
    }
  }

  /** Writes what the recordings and the trace hold and closes their files (again: nothing). */
  close(): void {
    try {
      this.recordings.close();
    } finally {
      this.trace?.close();
    }
  }

  /** Closes the files, writes summary.json (`summary` with the CRC-32 of each file written), and lists in the marker
   * what the run wrote; returns the summary written. */
  finish(summary: Summary): Summary {
    this.close();
    const written: Summary = {
      ...summary,
      crc32: {
        ...this.recordings.digests(),
        ...(this.trace !== undefined ? { [TRACE_FILE]: this.trace.digest() } : {}),
      },
    };
    this.dir.write(SUMMARY_FILE, `${JSON.stringify(written, null, 2)}\n`);
    this.dir.seal();
    return written;
  }

  /** Lets DIR go (its lock), once the run is over, finished or not (again: nothing). */
  release(): void {
    this.dir.release();
  }
}
