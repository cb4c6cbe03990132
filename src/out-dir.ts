// The one guard for every command that writes files into a directory (`--out`): strata run
// and serve (recordings, summary, trace), strata export p4 (a directory per machine).
//
// strata deletes or replaces only files it wrote, which DIR/.strata-output lists. It refuses,
// before it changes anything: a DIR that holds an input (compared as real paths and as
// files), a non-empty DIR without a marker (unless forced), anything in the way it did not
// write (a symbolic link included: nothing is ever written through one), a DIR that is a file
// or lies under one, and a DIR it cannot make or write in. Files are created exclusively, so
// a name that appears between the check and the write is never written through either.

import {
  lstatSync,
  mkdirSync,
  readdirSync,
  realpathSync,
  rmdirSync,
  type Stats,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join, resolve, sep } from "node:path";
import { describeIoError, InputError } from "./errors.js";
import { readUpTo } from "./read-file.js";

/** Marks a directory as strata's output and lists, one a line, the files strata wrote there. */
export const MARKER_FILE = ".strata-output";

/** The marker's first line: the command that wrote it, then the promise it keeps. */
const markerHeader = (command: string): string =>
  `# strata ${command} wrote the files below; the next run into this directory replaces them, and no other file.`;
const MARKER_HEADER =
  /^# strata [a-z0-9 ]+ wrote the files below; the next run into this directory replaces them, and no other file\.$/;

export interface OutDirOptions {
  /** The command that writes ("run", "export p4"): named in the marker. */
  readonly command: string;
  /** The files the command reads (description, captures, profiles): never inside DIR. */
  readonly inputs: readonly string[];
  /** Write into a non-empty directory strata did not write (still never replacing a file there). */
  readonly force?: boolean;
  /** Every file the command may write, relative to DIR: a name, or a subdirectory and a name. */
  readonly files: readonly string[];
  /** Subdirectories made even when no file of theirs is written (strata run's links/ and delivered/). */
  readonly dirs?: readonly string[];
}

/**
 * An output directory claimed for one command. Every file it writes goes through write()
 * or path(), and seal() lists in the marker what was written.
 */
export class OutDir {
  readonly dir: string;
  readonly #command: string;
  readonly #files: readonly string[];

  private constructor(dir: string, command: string, files: readonly string[]) {
    this.dir = dir;
    this.#command = command;
    this.#files = files;
  }

  /** Checks DIR, removes the files the previous command listed and marks DIR for this one; InputError if DIR is not
   * strata's to write. */
  static claim(dir: string, options: OutDirOptions): OutDir {
    const refuse = refusal(dir);
    for (const f of options.files)
      if (!isOutputName(f)) throw new Error(`${f}: not a file name strata may write in --out`);
    const target = realTarget(dir, refuse);
    for (const input of options.inputs) {
      const real = realOrResolved(input);
      if (real === target.real || real.startsWith(target.real.endsWith(sep) ? target.real : target.real + sep)) {
        throw refuse(
          `--out holds an input, ${input}`,
          "strata writes and removes files in --out: choose a directory that holds none of the inputs",
        );
      }
    }
    const files = [...new Set([...options.files, MARKER_FILE])];
    const dirs = [...new Set([...(options.dirs ?? []), ...files.flatMap(parentOf)])];
    const previous = target.exists ? guard(() => readMarker(dir), refuse) : undefined;
    if (
      target.exists &&
      previous === undefined &&
      guard(() => readdirSync(dir), refuse).length > 0 &&
      options.force !== true
    ) {
      throw refuse(
        `--out is not empty and has no ${MARKER_FILE}: strata did not write it`,
        "choose a new or empty directory, or add --force to write beside its files",
      );
    }
    // Every check comes before the first change: a refused command leaves DIR as it was.
    const ours = new Set(previous === undefined ? [] : [...previous, MARKER_FILE]);
    for (const d of dirs) {
      const stat = lstatOrUndefined(join(dir, d));
      if (stat !== undefined && !stat.isDirectory())
        throw refuse(
          `${d} is already there and strata did not write it`,
          "strata replaces only files it wrote: move it away or choose another --out",
        );
    }
    // Only what is there is looked at closer: a description of 20,000 recorded links may write 40,000 files.
    const there = target.exists ? listed(dir, [...dirs, ...(previous ?? []).flatMap(parentOf)]) : new Set<string>();
    for (const f of files) {
      const stat = there.has(f) ? lstatOrUndefined(join(dir, f)) : undefined;
      if (stat !== undefined && (!ours.has(f) || !stat.isFile())) {
        throw refuse(
          `${f} is already there and strata did not write it`,
          "strata replaces only files it wrote: move it away or choose another --out",
        );
      }
    }
    // A listed file is removed only where it is a file in a real directory of DIR's: never through a link.
    const stale = (previous ?? []).filter(
      (f) =>
        there.has(f) &&
        parentOf(f).every((d) => lstatOrUndefined(join(dir, d))?.isDirectory() === true) &&
        lstatOrUndefined(join(dir, f))?.isFile() === true,
    );
    const inputs = new Set(options.inputs.map(identity).filter((id) => id !== ""));
    for (const f of stale) {
      if (inputs.has(identity(join(dir, f))))
        throw refuse(`${f} is an input (the same file)`, "choose an --out directory that holds none of the inputs");
    }
    const out = new OutDir(dir, options.command, files);
    guard(() => {
      for (const f of stale) unlinkSync(join(dir, f));
      // A subdirectory only an earlier command used goes too, when nothing else is left in it.
      for (const d of new Set(stale.flatMap(parentOf))) if (!dirs.includes(d)) removeIfEmpty(join(dir, d));
      makeDir(dir);
      for (const d of dirs) makeDir(join(dir, d));
      out.#mark(files);
    }, refuse);
    return out;
  }

  /** Where `file` (one of the claimed files) goes. */
  path(file: string): string {
    if (!this.#files.includes(file)) throw new Error(`${file} was not claimed in ${this.dir}`);
    return join(this.dir, file);
  }

  /** Writes `file` (one of the claimed files), created new; a failure is one line (InputError). */
  write(file: string, data: string | Uint8Array): void {
    const path = this.path(file);
    guard(() => writeFileSync(path, data, { flag: "wx" }), refusal(this.dir));
  }

  /** Lists in the marker the files this command wrote (until now it listed every file it might write). */
  seal(): void {
    const there = listed(this.dir, this.#files.flatMap(parentOf));
    guard(() => this.#mark(this.#files.filter((f) => there.has(f))), refusal(this.dir));
  }

  #mark(files: readonly string[]): void {
    const path = join(this.dir, MARKER_FILE);
    // Unlinked first and created exclusively: a marker that is a symbolic link is never written through.
    if (lstatOrUndefined(path) !== undefined) unlinkSync(path);
    writeFileSync(path, `${[markerHeader(this.#command), ...files.filter((f) => f !== MARKER_FILE)].join("\n")}\n`, {
      flag: "wx",
    });
  }
}

const refusal =
  (dir: string) =>
  (problem: string, fix: string): InputError =>
    new InputError(dir, "", problem, fix);

/**
 * The names of the files strata writes in an output directory: strata run's and serve's
 * (summary, trace, a recording per link and per member) and strata export p4's (a directory per
 * machine). A marker lists only such names, so a forged one cannot make strata remove another
 * file, inside DIR or out of it.
 */
const OUTPUT_NAMES = [
  /^(summary\.json|trace\.jsonl|trace\.idx)$/,
  /^(links|delivered)\/[^/\\\0\n]+\.pcap$/,
  /^[^/\\\0\n]+\/(main\.p4|p4info\.json|p4info\.txtpb|entries\.json|entries\.bin|runtime_cli\.txt|manifest\.json)$/,
];

/** Whether `f` is one of strata's output names, none of its parts `.` or `..`. */
function isOutputName(f: string): boolean {
  return OUTPUT_NAMES.some((n) => n.test(f)) && f.split("/").every((p) => p !== "." && p !== "..");
}

/** The subdirectory `f` lies in, if any. */
const parentOf = (f: string): string[] => (f.includes("/") ? [f.slice(0, f.indexOf("/"))] : []);

/**
 * What DIR and its subdirectories `subs` hold, as paths relative to DIR: a listing of each, not a
 * look-up per file. What cannot be listed counts as not there, as lstatOrUndefined has it.
 */
function listed(dir: string, subs: readonly string[]): Set<string> {
  const there = new Set<string>();
  for (const sub of ["", ...new Set(subs)]) {
    let names: string[];
    try {
      names = readdirSync(sub === "" ? dir : join(dir, sub));
    } catch {
      continue;
    }
    for (const name of names) there.add(sub === "" ? name : `${sub}/${name}`);
  }
  return there;
}

/** The files the marker in `dir` lists, or undefined when there is no marker or it is not one strata wrote. */
function readMarker(dir: string): string[] | undefined {
  const path = join(dir, MARKER_FILE);
  if (lstatOrUndefined(path)?.isFile() !== true) return undefined;
  // A marker strata wrote names its files, a few MiB for the largest run: one larger is not strata's.
  const { bytes, over } = readUpTo(path, 64 * 1024 * 1024, { what: "the marker", noun: "marker", fix: "" });
  if (over) return undefined;
  const [header, ...lines] = bytes.toString().split("\n");
  const files = lines.filter((l) => l !== "");
  return header !== undefined && MARKER_HEADER.test(header) && files.every(isOutputName) ? files : undefined;
}

/** DIR's real path (through symbolic links, from the deepest part that exists), and whether it exists. */
function realTarget(
  dir: string,
  refuse: (problem: string, fix: string) => InputError,
): { real: string; exists: boolean } {
  const fix = "choose a new or empty directory for --out";
  let head = resolve(dir);
  const tail: string[] = [];
  for (;;) {
    let real: string | undefined;
    try {
      real = realpathSync(head);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if ((code !== "ENOENT" && code !== "ENOTDIR") || dirname(head) === head)
        throw refuse(`cannot use --out: ${describeIoError(err)}`, fix);
      tail.unshift(basename(head));
      head = dirname(head);
      continue;
    }
    if (!statSync(real).isDirectory()) {
      throw tail.length === 0
        ? refuse("--out must be a directory, and this is a file", fix)
        : refuse(`--out cannot be made: ${head} is a file`, fix);
    }
    return { real: join(real, ...tail), exists: tail.length === 0 };
  }
}

/** mkdir -p one level at a time: Node's recursive mkdir never returns under /proc (ENOENT from a parent that exists).
 * */
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

function removeIfEmpty(path: string): void {
  try {
    rmdirSync(path);
  } catch {
    // Not empty (files strata did not write), or gone: it stays as it is.
  }
}

/** Runs a file-system step on DIR; its failure (permission, read-only, full, gone) is bad input. */
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

/** The real path of `path`, or, when it does not exist, the path resolved. */
export function realOrResolved(path: string): string {
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
