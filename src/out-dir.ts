// The one guard for every command that writes files into a directory (`--out`): strata run
// and serve (recordings, summary, trace), strata export p4 (a directory per machine).
//
// strata deletes or replaces only files it wrote, which DIR/.strata-output lists. It refuses,
// before it changes anything: a DIR that holds an input (compared as real paths and as
// files), a non-empty DIR without a marker (unless forced), anything in the way it did not
// write (a symbolic link included: nothing is ever written through one), a DIR that is a file
// or lies under one, a DIR it cannot make or write in, and a DIR another strata is writing.
//
// A claim holds DIR until release(): a lock file of its own in DIR (.strata-lock.PID.START.K,
// made exclusively), and every other strata that finds a live one refuses. DIR and each
// subdirectory are opened once, as directories (a subdirectory never through a link), and every
// file is made and opened through those handles (/proc/self/fd/N/NAME, openat's equivalent in
// Node), created exclusively: a name swapped for a link after the checks is never written
// through. The marker is written whole under another name and renamed over the old one, so a
// write that fails (a full disk) leaves the old marker, which lists every file that may be there.
//
// This file is the claim and its checks; the marker is out-dir/marker.ts, the directory handles
// out-dir/handles.ts, the lock files' owners out-dir/locks.ts, the file-system steps out-dir/fs-steps.ts.

import { constants, openSync, readdirSync, realpathSync, rmdirSync, statSync, unlinkSync } from "node:fs";
import { basename, dirname, join, resolve, sep } from "node:path";
import { describeIoError, InputError } from "./errors.js";
import {
  guard,
  identity,
  ignoreFailure,
  lstatOrUndefined,
  makeDirs,
  readdirOr,
  realOrResolved,
  type Refuse,
  writeAndClose,
} from "./out-dir/fs-steps.js";
import { DirHandles } from "./out-dir/handles.js";
import { LOCK, liveHolder, nextLockName } from "./out-dir/locks.js";
import {
  bySubdirectory,
  CREATE,
  isOutputName,
  MARKER_FILE,
  MARKER_NEW,
  parentOf,
  readMarker,
  writeMarker,
} from "./out-dir/marker.js";

export { MARKER_FILE } from "./out-dir/marker.js";
export { realOrResolved } from "./out-dir/fs-steps.js";

const { O_APPEND, O_DIRECTORY, O_NOFOLLOW, O_RDONLY, O_WRONLY } = constants;

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

/** Where files are made: named relative to a directory (OutDir; tests may give another). */
export interface FilePlace {
  /** The file's path for a person (messages): DIR/name. */
  path(name: string): string;
  /** Makes `name` new and opens it to write: never a file that is there, never through a link. */
  create(name: string): number;
  /** Opens `name`, made by create(), to append to it: never through a link. */
  append(name: string): number;
}

/** The claims this process holds: released when it exits, whatever ends it. */
const held = new Set<OutDir>();
/** Whether the claims are released at exit (hooked once). */
let hooked = false;

/**
 * An output directory claimed for one command. Every file it writes goes through write(),
 * create() or append(), seal() lists in the marker what was written, and release() lets DIR go.
 */
export class OutDir implements FilePlace {
  readonly dir: string;
  readonly #command: string;
  readonly #files: readonly string[];
  readonly #refuse: (problem: string, fix: string) => InputError;
  /** DIR ("") and its subdirectories, open. */
  readonly #dirs: DirHandles;
  #lock: string | undefined;
  /** Directories this claim made (DIR, its parents, subdirectories), outermost first: removed if it is refused. */
  #made: string[] = [];
  #released = false;

  private constructor(dir: string, command: string, files: readonly string[]) {
    this.dir = dir;
    this.#command = command;
    this.#files = files;
    this.#refuse = refusal(dir);
    this.#dirs = new DirHandles(dir, this.#refuse);
  }

  /** Checks DIR, locks it, removes the files the previous command listed and marks DIR for this one; InputError if DIR
   * is not strata's to write, or another strata is writing it. */
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
    const out = new OutDir(dir, options.command, files);
    // A directory strata did not write is refused untouched: no lock is made in it (the check is made again under the
    // lock).
    if (target.exists && options.force !== true) out.#notOurs(readdirOr(dir), () => readMarker(join(dir, MARKER_FILE)));
    try {
      guard(() => {
        out.#made = makeDirs(dir);
        out.#dirs.openDir(openSync(dir, O_RDONLY | O_DIRECTORY | (out.#made.length > 0 ? O_NOFOLLOW : 0)));
      }, refuse);
      out.#lockDir();
      out.#prepare(options);
    } catch (err) {
      out.#abandon();
      throw err;
    }
    if (!hooked) process.once("exit", releaseAll);
    hooked = true;
    held.add(out);
    return out;
  }

  /** Where `file` (one of the claimed files) is, for a person. */
  path(file: string): string {
    if (!this.#files.includes(file)) throw new Error(`${file} was not claimed in ${this.dir}`);
    return join(this.dir, file);
  }

  /** Makes `file` (one of the claimed files) new, through DIR's handles, and opens it to write. */
  create(file: string): number {
    this.path(file);
    return this.#dirs.open(file, CREATE);
  }

  /** Opens `file`, made by create(), to append to it. */
  append(file: string): number {
    this.path(file);
    return this.#dirs.open(file, O_WRONLY | O_APPEND | O_NOFOLLOW);
  }

  /** Writes `file` (one of the claimed files), created new; a failure is one line (InputError). */
  write(file: string, data: string | Uint8Array): void {
    guard(() => writeAndClose(this.create(file), data), this.#refuse);
  }

  /** Lists in the marker the files this command wrote (until now it listed every file it might write); InputError if a
   * subdirectory was moved or replaced meanwhile (its files are then not where their names lead). */
  seal(): void {
    this.#dirs.pinnedAll();
    guard(() => {
      const there = this.#dirs.listed(this.#files.flatMap(parentOf));
      this.#mark(this.#files.filter((f) => there.has(f)));
    }, this.#refuse);
  }

  /** Lets DIR go: removes the lock and closes the handles (again: nothing). */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    held.delete(this);
    const lock = this.#lock;
    this.#lock = undefined;
    if (lock !== undefined) ignoreFailure(() => unlinkSync(this.#dirs.at("", lock)));
    this.#dirs.close();
  }

  /** Refuses a DIR with other files and no marker strata wrote. */
  #notOurs(names: readonly string[], previous: () => string[] | undefined): void {
    if (names.some((n) => !LOCK.test(n) && n !== MARKER_NEW) && previous() === undefined) {
      throw this.#refuse(
        `--out is not empty and has no ${MARKER_FILE}: strata did not write it`,
        "choose a new or empty directory, or add --force to write beside its files",
      );
    }
  }

  /**
   * Makes this claim's lock file, then looks at every other: a live strata's is a refusal (of
   * this claim: of two that start at once, each may see the other's and both refuse, never
   * neither); one whose process is gone is removed. Each lock is made before its owner looks,
   * so of two claims the one that looks last sees the other's.
   */
  #lockDir(): void {
    const name = nextLockName();
    guard(() => {
      const fd = openSync(this.#dirs.at("", name), CREATE, 0o644);
      this.#lock = name;
      writeAndClose(fd, `strata ${this.#command}, pid ${process.pid}, writes here until it ends\n`);
    }, this.#refuse);
    for (const other of guard(() => readdirSync(this.#dirs.dirPath("")), this.#refuse)) {
      if (!LOCK.test(other) || other === name) continue;
      const pid = liveHolder(other);
      if (pid !== undefined) {
        throw this.#refuse(
          `--out is being written by another strata (pid ${pid})`,
          "wait for it to end, or choose another --out",
        );
      }
      ignoreFailure(() => unlinkSync(this.#dirs.at("", other)));
    }
  }

  /** Every check, through DIR's handle and under the lock; then the changes: the marker, the previous files removed,
   * the subdirectories made and opened. */
  #prepare(options: OutDirOptions): void {
    const refuse = this.#refuse;
    const files = this.#files;
    const dirs = [...new Set([...(options.dirs ?? []), ...files.flatMap(parentOf)])];
    const names = guard(() => readdirSync(this.#dirs.dirPath("")), refuse);
    const previous = guard(() => readMarker(this.#dirs.at("", MARKER_FILE)), refuse);
    if (options.force !== true) this.#notOurs(names, () => previous);
    const ours = new Set(previous === undefined ? [] : [...previous, MARKER_FILE]);
    for (const d of dirs) {
      const stat = lstatOrUndefined(this.#dirs.at("", d));
      if (stat !== undefined && !stat.isDirectory())
        throw refuse(
          `${d} is already there and strata did not write it`,
          "strata replaces only files it wrote: move it away or choose another --out",
        );
    }
    // Only what is there is looked at closer: a description of 20,000 recorded links may write 40,000 files.
    const there = this.#dirs.listed([...dirs, ...(previous ?? []).flatMap(parentOf)]);
    for (const f of files) {
      const stat = there.has(f) ? lstatOrUndefined(this.#dirs.at("", f)) : undefined;
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
        parentOf(f).every((d) => lstatOrUndefined(this.#dirs.at("", d))?.isDirectory() === true) &&
        lstatOrUndefined(this.#dirs.at("", f))?.isFile() === true,
    );
    const inputs = new Set(options.inputs.map(identity).filter((id) => id !== ""));
    for (const f of stale) {
      if (inputs.has(identity(this.#dirs.at("", f))))
        throw refuse(`${f} is an input (the same file)`, "choose an --out directory that holds none of the inputs");
    }
    // Every check comes before the first change. The marker first, listing the previous files and this command's: a
    // failure from here on leaves a DIR the next run accepts.
    guard(() => {
      this.#mark([...new Set([...(previous ?? []), ...files])]);
      for (const [sub, names] of bySubdirectory(stale)) {
        if (sub === "") {
          for (const n of names) unlinkSync(this.#dirs.at("", n));
          continue;
        }
        this.#dirs.unlinkIn(sub, names);
        // A subdirectory only an earlier command used goes too, when nothing else is left in it.
        if (!dirs.includes(sub)) ignoreFailure(() => rmdirSync(this.#dirs.at("", sub)));
      }
      for (const d of dirs) this.#dirs.subdirectory(d, this.#made);
    }, refuse);
  }

  /** Writes the marker, listing `files`. */
  #mark(files: readonly string[]): void {
    writeMarker((name) => this.#dirs.at("", name), this.#command, files);
  }

  /** A refused claim: its lock goes, and the directories it made, as far as they are empty. */
  #abandon(): void {
    this.release();
    for (const d of [...this.#made].reverse()) ignoreFailure(() => rmdirSync(d));
  }
}

function releaseAll(): void {
  for (const out of held) out.release();
}

const refusal =
  (dir: string): Refuse =>
  (problem: string, fix: string): InputError =>
    new InputError(dir, "", problem, fix);

/** DIR's real path (through symbolic links, from the deepest part that exists), and whether it exists. */
function realTarget(dir: string, refuse: Refuse): { real: string; exists: boolean } {
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
