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

import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmdirSync,
  type Stats,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join, resolve, sep } from "node:path";
import { describeIoError, InputError } from "./errors.js";

/** Marks a directory as strata's output and lists, one a line, the files strata wrote there. */
export const MARKER_FILE = ".strata-output";
/** The marker being written: renamed over MARKER_FILE once it is whole. */
const MARKER_NEW = ".strata-output.new";
/** A claim's lock file: .strata-lock.PID.START.K (START: the process's start, /proc/PID/stat field 22). */
const LOCK = /^\.strata-lock\.([0-9]+)\.([0-9]+)\.[0-9]+$/;

/** The marker's first line: the command that wrote it, then the promise it keeps. */
const markerHeader = (command: string): string =>
  `# strata ${command} wrote the files below; the next run into this directory replaces them, and no other file.`;
const MARKER_HEADER =
  /^# strata [a-z0-9 ]+ wrote the files below; the next run into this directory replaces them, and no other file\.$/;

const { O_APPEND, O_CREAT, O_DIRECTORY, O_EXCL, O_NOFOLLOW, O_RDONLY, O_WRONLY } = constants;
/** A file made new: never one that is there, never through a link. */
const CREATE = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW;
const SUBDIR = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

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

/** An open directory: its descriptor, and its device and inode when opened. */
interface Handle {
  /** -1 while closed: a subdirectory's handle is closed when others were used since, and opened again when needed. */
  fd: number;
  readonly dev: number;
  readonly ino: number;
}

/** Subdirectory handles open at once, at most: export p4 makes a directory per machine, and a fleet of thousands of
 * machines would otherwise hold a descriptor for each. */
const OPEN_SUBDIRECTORIES = 64;

/** The claims this process holds: released when it exits, whatever ends it. */
const held = new Set<OutDir>();
/** Lock files made by this process so far (their K). */
let locks = 0;
/** Whether the claims are released at exit (hooked once). */
let hooked = false;
/** This process's start (startOf), read once. */
let ownStart: string | undefined;

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
  readonly #handles = new Map<string, Handle>();
  /** Whether files are reached through /proc/self/fd; without it (not Linux) by path, checked after. */
  #proc = false;
  #lock: string | undefined;
  /** Directories this claim made (DIR, its parents, subdirectories), outermost first: removed if it is refused. */
  #made: string[] = [];
  #released = false;

  private constructor(dir: string, command: string, files: readonly string[]) {
    this.dir = dir;
    this.#command = command;
    this.#files = files;
    this.#refuse = refusal(dir);
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
        const fd = openSync(dir, O_RDONLY | O_DIRECTORY | (out.#made.length > 0 ? O_NOFOLLOW : 0));
        out.#handles.set("", handle(fd));
        out.#proc = sameFile(statOrUndefined(`/proc/self/fd/${fd}`), fstatSync(fd));
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
    return this.#open(file, CREATE);
  }

  /** Opens `file`, made by create(), to append to it. */
  append(file: string): number {
    return this.#open(file, O_WRONLY | O_APPEND | O_NOFOLLOW);
  }

  /** Writes `file` (one of the claimed files), created new; a failure is one line (InputError). */
  write(file: string, data: string | Uint8Array): void {
    guard(() => {
      const fd = this.create(file);
      try {
        writeAll(fd, data);
      } finally {
        closeSync(fd);
      }
    }, this.#refuse);
  }

  /** Lists in the marker the files this command wrote (until now it listed every file it might write); InputError if a
   * subdirectory was moved or replaced meanwhile (its files are then not where their names lead). */
  seal(): void {
    for (const sub of this.#handles.keys()) if (sub !== "") this.#pinned(sub);
    guard(() => {
      const there = this.#listed(this.#files.flatMap(parentOf));
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
    if (lock !== undefined) ignoreFailure(() => unlinkSync(this.#at("", lock)));
    for (const h of this.#handles.values()) if (h.fd >= 0) ignoreFailure(() => closeSync(h.fd));
    this.#handles.clear();
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
    ownStart ??= startOf(process.pid) ?? "0";
    const name = `.strata-lock.${process.pid}.${ownStart}.${++locks}`;
    guard(() => {
      const fd = openSync(this.#at("", name), CREATE, 0o644);
      this.#lock = name;
      try {
        writeAll(fd, `strata ${this.#command}, pid ${process.pid}, writes here until it ends\n`);
      } finally {
        closeSync(fd);
      }
    }, this.#refuse);
    for (const other of guard(() => readdirSync(this.#dirPath("")), this.#refuse)) {
      const m = LOCK.exec(other);
      if (m === null || other === name) continue;
      const pid = Number(m[1]);
      if (alive(pid, m[2] ?? "")) {
        throw this.#refuse(
          `--out is being written by another strata (pid ${pid})`,
          "wait for it to end, or choose another --out",
        );
      }
      ignoreFailure(() => unlinkSync(this.#at("", other)));
    }
  }

  /** Every check, through DIR's handle and under the lock; then the changes: the marker, the previous files removed,
   * the subdirectories made and opened. */
  #prepare(options: OutDirOptions): void {
    const refuse = this.#refuse;
    const files = this.#files;
    const dirs = [...new Set([...(options.dirs ?? []), ...files.flatMap(parentOf)])];
    const names = guard(() => readdirSync(this.#dirPath("")), refuse);
    const previous = guard(() => readMarker(this.#at("", MARKER_FILE)), refuse);
    if (options.force !== true) this.#notOurs(names, () => previous);
    const ours = new Set(previous === undefined ? [] : [...previous, MARKER_FILE]);
    for (const d of dirs) {
      const stat = lstatOrUndefined(this.#at("", d));
      if (stat !== undefined && !stat.isDirectory())
        throw refuse(
          `${d} is already there and strata did not write it`,
          "strata replaces only files it wrote: move it away or choose another --out",
        );
    }
    // Only what is there is looked at closer: a description of 20,000 recorded links may write 40,000 files.
    const there = this.#listed([...dirs, ...(previous ?? []).flatMap(parentOf)]);
    for (const f of files) {
      const stat = there.has(f) ? lstatOrUndefined(this.#at("", f)) : undefined;
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
        parentOf(f).every((d) => lstatOrUndefined(this.#at("", d))?.isDirectory() === true) &&
        lstatOrUndefined(this.#at("", f))?.isFile() === true,
    );
    const inputs = new Set(options.inputs.map(identity).filter((id) => id !== ""));
    for (const f of stale) {
      if (inputs.has(identity(this.#at("", f))))
        throw refuse(`${f} is an input (the same file)`, "choose an --out directory that holds none of the inputs");
    }
    // Every check comes before the first change. The marker first, listing the previous files and this command's: a
    // failure from here on leaves a DIR the next run accepts.
    guard(() => {
      this.#mark([...new Set([...(previous ?? []), ...files])]);
      for (const [sub, names] of bySubdirectory(stale)) {
        if (sub === "") {
          for (const n of names) unlinkSync(this.#at("", n));
          continue;
        }
        const fd = openSync(this.#at("", sub), SUBDIR);
        try {
          for (const n of names) unlinkSync(this.#proc ? `/proc/self/fd/${fd}/${n}` : join(this.dir, sub, n));
        } finally {
          closeSync(fd);
        }
        // A subdirectory only an earlier command used goes too, when nothing else is left in it.
        if (!dirs.includes(sub)) ignoreFailure(() => rmdirSync(this.#at("", sub)));
      }
      for (const d of dirs) this.#subdirectory(d);
    }, refuse);
  }

  /** Makes subdirectory `d` if it is not there, and opens it: a directory, not a link to one. */
  #subdirectory(d: string): void {
    const path = this.#at("", d);
    let made: Stats | undefined;
    try {
      mkdirSync(path);
      made = lstatSync(path);
      this.#made.push(join(this.dir, d));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    let fd: number;
    try {
      fd = openSync(path, SUBDIR);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "ENOTDIR" && code !== "ELOOP") throw err;
      throw this.#refuse(
        `${d} is already there and strata did not write it`,
        "strata replaces only files it wrote: move it away or choose another --out",
      );
    }
    const h = handle(fd);
    this.#handles.set(d, h);
    if (made !== undefined && !sameFile(made, h)) throw this.#replaced(d);
    this.#closeIdle();
  }

  /** Closes the least recently used subdirectory handles past OPEN_SUBDIRECTORIES (the map's order is use). */
  #closeIdle(): void {
    let open = 0;
    for (const h of this.#handles.values()) if (h.fd >= 0) open++;
    for (const [sub, h] of this.#handles) {
      if (open <= OPEN_SUBDIRECTORIES + 1) return;
      if (sub === "" || h.fd < 0) continue;
      closeSync(h.fd);
      h.fd = -1;
      open--;
    }
  }

  /** Subdirectory `sub`'s handle, opened again if it was closed: through DIR's handle, never through a link, and the
   * directory it opened before (device and inode), or InputError. */
  #opened(sub: string): Handle {
    const h = this.#handles.get(sub);
    if (h === undefined) throw new Error(`${sub} is not open in ${this.dir}`);
    if (sub === "") return h;
    this.#handles.delete(sub);
    this.#handles.set(sub, h);
    if (h.fd < 0) {
      let fd: number;
      try {
        fd = openSync(this.#at("", sub), SUBDIR);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP") throw this.#replaced(sub);
        throw err;
      }
      if (!sameFile(fstatSync(fd), h)) {
        closeSync(fd);
        throw this.#replaced(sub);
      }
      h.fd = fd;
      this.#closeIdle();
    }
    return h;
  }

  /** A file's path through its directory's handle. */
  #at(sub: string, name: string): string {
    const slash = name.indexOf("/");
    if (sub === "" && slash >= 0 && this.#handles.has(name.slice(0, slash)))
      return this.#at(name.slice(0, slash), name.slice(slash + 1));
    return this.#proc ? `${this.#dirPath(sub)}/${name}` : join(this.dir, sub, name);
  }

  /** A directory's path through its handle. */
  #dirPath(sub: string): string {
    if (!this.#proc) {
      if (!this.#handles.has(sub)) throw new Error(`${sub} is not open in ${this.dir}`);
      return join(this.dir, sub);
    }
    return `/proc/self/fd/${this.#opened(sub).fd}`;
  }

  /** Opens a claimed file with `flags` through its directory's handle; where there is no /proc, by path, its directory
   * checked before and after to be the one opened (a file made through another is removed again). */
  #open(file: string, flags: number): number {
    this.path(file);
    const path = this.#at("", file);
    if (this.#proc) return openSync(path, flags, 0o666);
    const pinned = (): void => {
      this.#pinned("");
      for (const sub of parentOf(file)) this.#pinned(sub);
    };
    pinned();
    const fd = openSync(path, flags, 0o666);
    try {
      pinned();
    } catch (err) {
      closeSync(fd);
      if ((flags & O_CREAT) !== 0) ignoreFailure(() => unlinkSync(path));
      throw err;
    }
    return fd;
  }

  /** InputError unless `sub` (or DIR, "") still names the directory opened. */
  #pinned(sub: string): void {
    const h = this.#handles.get(sub);
    const path = sub === "" ? this.dir : join(this.dir, sub);
    const now = sub === "" ? statOrUndefined(path) : lstatOrUndefined(this.#proc ? this.#at("", sub) : path);
    if (h === undefined || !sameFile(now, h)) throw this.#replaced(sub === "" ? "--out" : sub);
  }

  #replaced(what: string): InputError {
    return this.#refuse(
      `${what} was moved or replaced while strata wrote in it: nothing is written through what replaced it`,
      "write into a directory nothing else changes meanwhile, and run again",
    );
  }

  /** What DIR and its subdirectories `subs` hold, as paths relative to DIR (a link to a directory is not listed). */
  #listed(subs: readonly string[]): Set<string> {
    const there = new Set<string>();
    for (const sub of ["", ...new Set(subs)]) {
      if (sub !== "" && lstatOrUndefined(this.#at("", sub))?.isDirectory() !== true) continue;
      let names: string[];
      try {
        names = readdirSync(sub === "" ? this.#dirPath("") : this.#at("", sub));
      } catch {
        continue;
      }
      for (const name of names) there.add(sub === "" ? name : `${sub}/${name}`);
    }
    return there;
  }

  /** Writes the marker whole under MARKER_NEW, then renames it over the old one. */
  #mark(files: readonly string[]): void {
    const text = `${[markerHeader(this.#command), ...files.filter((f) => f !== MARKER_FILE)].join("\n")}\n`;
    const next = this.#at("", MARKER_NEW);
    ignoreFailure(() => unlinkSync(next)); // left by a strata that was killed while it wrote one
    const fd = openSync(next, CREATE, 0o644);
    try {
      writeAll(fd, text);
    } catch (err) {
      closeSync(fd);
      ignoreFailure(() => unlinkSync(next));
      throw err;
    }
    closeSync(fd);
    renameSync(next, this.#at("", MARKER_FILE));
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

/** Files relative to DIR by their subdirectory ("" for DIR's own), each as its name there. */
function bySubdirectory(files: readonly string[]): Map<string, string[]> {
  const by = new Map<string, string[]>();
  for (const f of files) {
    const sub = parentOf(f)[0] ?? "";
    const list = by.get(sub) ?? [];
    list.push(sub === "" ? f : f.slice(sub.length + 1));
    by.set(sub, list);
  }
  return by;
}

/** The marker's size at most: it names its files, a few MiB for the largest run; one larger is not strata's. */
const MARKER_MAX = 64 * 1024 * 1024;

/** The files the marker at `path` lists, or undefined when there is none or it is not one strata wrote. */
function readMarker(path: string): string[] | undefined {
  let fd: number;
  try {
    fd = openSync(path, O_RDONLY | O_NOFOLLOW);
  } catch {
    return undefined; // none, or a link
  }
  let text: string;
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size > MARKER_MAX) return undefined;
    text = readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
  const [header, ...lines] = text.split("\n");
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

/** mkdir -p one level at a time (Node's recursive mkdir never returns under /proc: ENOENT from a parent that exists);
 * returns the directories it made, outermost first. */
function makeDirs(path: string, made: string[] = []): string[] {
  try {
    mkdirSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST" && statOrUndefined(path)?.isDirectory() === true) return made;
    if (code !== "ENOENT" || dirname(path) === path) throw err;
    makeDirs(dirname(path), made);
    mkdirSync(path);
  }
  made.push(path);
  return made;
}

/** Writes all of `data` to `fd`. */
function writeAll(fd: number, data: string | Uint8Array): void {
  const bytes = typeof data === "string" ? Buffer.from(data) : data;
  for (let done = 0; done < bytes.length;) done += writeSync(fd, bytes, done, bytes.length - done);
}

/**
 * A process's start, in clock ticks after boot (/proc/PID/stat, field 22): with its pid, it
 * names one process, even once the pid is used again. Undefined when there is no such process,
 * or no /proc (then "0" is written, and only the pid is checked).
 */
function startOf(pid: number): string | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // Field 2, the command's name, is in parentheses and may hold spaces and parentheses: count from the last ")".
  return text.slice(text.lastIndexOf(")") + 2).split(" ")[19];
}

/** Whether the process that made a lock file (pid, start) still runs. */
function alive(pid: number, start: string): boolean {
  if (existsSync("/proc/self/stat") && start !== "0") return startOf(pid) === start;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function handle(fd: number): Handle {
  const stat = fstatSync(fd);
  return { fd, dev: stat.dev, ino: stat.ino };
}

function sameFile(a: { dev: number; ino: number } | undefined, b: { dev: number; ino: number }): boolean {
  return a !== undefined && a.dev === b.dev && a.ino === b.ino;
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

function ignoreFailure(step: () => void): void {
  try {
    step();
  } catch {
    // Gone already, or not empty: left as it is.
  }
}

function readdirOr(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
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
