// Where a replay's packets are written: DIR/links/<network>.<link>.pcap for
// every link that carried traffic (both directions of a two-way link in one
// file, like a tap on the wire) and DIR/delivered/<network>.<member>.pcap for
// every member that received packets. Files open on their first packet.
// DIR/.strata-output lists what strata wrote: the only files a later run deletes.

import { lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, type Stats, statSync, unlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve, sep } from "node:path";
import type { CompiledSpec } from "../control/compiled.js";
import { describeIoError, InputError } from "../errors.js";
import { PcapWriter } from "../pcap/index.js";
import type { DataPlane } from "../wasm/module.js";
import type { CaptureTargets } from "../wasm/runner.js";

export const LINKS_DIR = "links";
export const DELIVERED_DIR = "delivered";
export const SUMMARY_FILE = "summary.json";
export const TRACE_FILE = "trace.jsonl";
/** Beside the trace: where each packet's line starts (src/run/trace-file.ts). */
export const TRACE_INDEX_FILE = "trace.idx";
/** Marks a directory as strata's output and lists, one a line, the files strata wrote there. */
export const MARKER_FILE = ".strata-output";

const MARKER_HEADER = "# strata run wrote the files below; the next run into this directory replaces them, and no other file.";
/** What a marker may list: strata's own file names, nothing outside DIR. */
const OUTPUT_NAME = /^(summary\.json|trace\.jsonl|trace\.idx|(links|delivered)\/[^/\\]+\.pcap)$/;

export interface OutDirOptions {
  /** The files the replay reads (description, captures): never inside DIR. */
  readonly inputs: readonly string[];
  /** Write into a non-empty directory strata did not write (still never replacing a file there). */
  readonly force?: boolean;
  /** Every file the replay may write, relative to DIR. */
  readonly files: readonly string[];
}

/**
 * The output directory of a replay. strata deletes or replaces only files it wrote,
 * which the marker lists: it refuses a DIR that holds an input, a non-empty DIR
 * without a marker (unless forced), and any file in the way that it did not write.
 */
export class OutDir {
  readonly dir: string;
  readonly #files: readonly string[];

  private constructor(dir: string, files: readonly string[]) {
    this.dir = dir;
    this.#files = files;
  }

  /** Checks DIR, removes the files the previous run listed and marks DIR for this run; InputError if DIR is not strata's to write. */
  static claim(dir: string, options: OutDirOptions): OutDir {
    const refuse = (problem: string, fix: string): InputError => new InputError(dir, "", problem, fix);
    const target = realTarget(dir, refuse);
    for (const input of options.inputs) {
      const real = realOrResolved(input);
      if (real === target.real || real.startsWith(target.real.endsWith(sep) ? target.real : target.real + sep)) {
        throw refuse(`--out holds an input, ${input}`, "strata writes and removes files in --out: choose a directory that holds none of the inputs");
      }
    }
    const files = [...new Set([...options.files, MARKER_FILE])];
    const previous = target.exists ? guard(() => readMarker(dir), refuse) : undefined;
    if (target.exists && previous === undefined && guard(() => readdirSync(dir), refuse).length > 0 && options.force !== true) {
      throw refuse(
        `--out is not empty and has no ${MARKER_FILE}: strata did not write it`,
        "choose a new or empty directory, or add --force to write beside its files",
      );
    }
    // Every check comes before the first change: a refused run leaves DIR as it was.
    const ours = new Set(previous === undefined ? [] : [...previous, MARKER_FILE]);
    for (const f of [...files, LINKS_DIR, DELIVERED_DIR]) {
      const stat = lstatOrUndefined(join(dir, f));
      if (stat === undefined) continue;
      const isSubdir = f === LINKS_DIR || f === DELIVERED_DIR;
      if (isSubdir ? !stat.isDirectory() : !ours.has(f) || !stat.isFile()) {
        throw refuse(`${f} is already there and strata did not write it`, "strata replaces only files it wrote: move it away or choose another --out");
      }
    }
    const inputs = new Set(options.inputs.map(identity).filter((id) => id !== ""));
    const stale = (previous ?? []).filter((f) => lstatOrUndefined(join(dir, f))?.isFile() === true);
    for (const f of stale) {
      if (inputs.has(identity(join(dir, f)))) throw refuse(`${f} is an input (the same file)`, "choose an --out directory that holds none of the inputs");
    }
    const out = new OutDir(dir, files);
    guard(() => {
      for (const f of stale) unlinkSync(join(dir, f));
      makeDir(dir);
      for (const sub of [LINKS_DIR, DELIVERED_DIR]) makeDir(join(dir, sub));
      out.#mark(files);
    }, refuse);
    return out;
  }

  /** Lists in the marker the files this replay wrote (until now it listed every file the replay might write). */
  seal(): void {
    const refuse = (problem: string, fix: string): InputError => new InputError(this.dir, "", problem, fix);
    guard(() => this.#mark(this.#files.filter((f) => lstatOrUndefined(join(this.dir, f)) !== undefined)), refuse);
  }

  #mark(files: readonly string[]): void {
    const path = join(this.dir, MARKER_FILE);
    // Unlinked first and created exclusively: a marker that is a symbolic link is never written through.
    if (lstatOrUndefined(path) !== undefined) unlinkSync(path);
    writeFileSync(path, `${[MARKER_HEADER, ...files.filter((f) => f !== MARKER_FILE)].join("\n")}\n`, { flag: "wx" });
  }
}

/** The files the marker in `dir` lists, or undefined when there is no marker or it is not one strata wrote. */
function readMarker(dir: string): string[] | undefined {
  const path = join(dir, MARKER_FILE);
  if (lstatOrUndefined(path)?.isFile() !== true) return undefined;
  const [header, ...lines] = readFileSync(path, "utf8").split("\n");
  const files = lines.filter((l) => l !== "");
  return header === MARKER_HEADER && files.every((f) => OUTPUT_NAME.test(f)) ? files : undefined;
}

/** DIR's real path (through symbolic links, from the deepest part that exists), and whether it exists. */
function realTarget(dir: string, refuse: (problem: string, fix: string) => InputError): { real: string; exists: boolean } {
  const fix = "choose a new or empty directory for --out";
  let head = resolve(dir);
  const tail: string[] = [];
  for (;;) {
    let real: string | undefined;
    try {
      real = realpathSync(head);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if ((code !== "ENOENT" && code !== "ENOTDIR") || dirname(head) === head) throw refuse(`cannot use --out: ${describeIoError(err)}`, fix);
      tail.unshift(basename(head));
      head = dirname(head);
      continue;
    }
    if (!statSync(real).isDirectory()) {
      throw tail.length === 0 ? refuse("--out must be a directory, and this is a file", fix) : refuse(`--out cannot be made: ${head} is a file`, fix);
    }
    return { real: join(real, ...tail), exists: tail.length === 0 };
  }
}

/** mkdir -p one level at a time: Node's recursive mkdir never returns under /proc (ENOENT from a parent that exists). */
function makeDir(path: string): void {
  try {
    mkdirSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST" && statOrUndefined(path)?.isDirectory() === true) return;
    if (code !== "ENOENT" || dirname(path) === path) throw err;
    makeDir(dirname(path));
    mkdirSync(path);
  }
}

/** Runs a file-system step on DIR; its failure (permission, read-only, full) is bad input. */
function guard<T>(step: () => T, refuse: (problem: string, fix: string) => InputError): T {
  try {
    return step();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === undefined) throw err;
    throw refuse(`cannot write in --out: ${describeIoError(err)}`, "choose a directory you can write to");
  }
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function realOrResolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** A file's identity (device and inode): the same for every name of it, hard links too; "" if it cannot be read. */
function identity(path: string): string {
  const stat = statOrUndefined(path);
  return stat === undefined ? "" : `${stat.dev}:${stat.ino}`;
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
