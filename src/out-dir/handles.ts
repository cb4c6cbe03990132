// An --out directory's open handles: DIR and each subdirectory are opened once, as directories (a subdirectory never
// through a link), and every file is reached through them (/proc/self/fd/N/NAME, openat's equivalent in Node), so a
// name swapped for a link after the checks is never written through. At most OPEN_SUBDIRECTORIES subdirectory handles
// are open at once: one closed is opened again through DIR's handle when needed, and must be the same directory.

import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  type Stats,
  unlinkSync,
} from "node:fs";
import { join } from "node:path";
import type { InputError } from "../errors.js";
import { ignoreFailure, lstatOrUndefined, type Refuse, statOrUndefined } from "./fs-steps.js";
import { parentOf } from "./marker.js";

const { O_CREAT, O_DIRECTORY, O_NOFOLLOW, O_RDONLY } = constants;
const SUBDIR = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

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

/** DIR ("") and its subdirectories, open; files named relative to DIR are reached through them. */
export class DirHandles {
  readonly #dir: string;
  readonly #refuse: Refuse;
  readonly #handles = new Map<string, Handle>();
  /** Whether files are reached through /proc/self/fd; without it (not Linux) by path, checked after. */
  #proc = false;

  constructor(dir: string, refuse: Refuse) {
    this.#dir = dir;
    this.#refuse = refuse;
  }

  /** Takes DIR's descriptor, `fd`, as DIR's handle. */
  openDir(fd: number): void {
    this.#handles.set("", handle(fd));
    this.#proc = sameFile(statOrUndefined(`/proc/self/fd/${fd}`), fstatSync(fd));
  }

  /** Makes subdirectory `d` if it is not there (adding its path to `made`), and opens it: a directory, not a link to
   * one. */
  subdirectory(d: string, made: string[]): void {
    const path = this.at("", d);
    let madeHere: Stats | undefined;
    try {
      mkdirSync(path);
      madeHere = lstatSync(path);
      made.push(join(this.#dir, d));
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
    if (madeHere !== undefined && !sameFile(madeHere, h)) throw this.replaced(d);
    this.#closeIdle();
  }

  /** Removes `names` from subdirectory `sub` (not one of the handles), opened for it as a directory, not a link. */
  unlinkIn(sub: string, names: readonly string[]): void {
    const fd = openSync(this.at("", sub), SUBDIR);
    try {
      for (const n of names) unlinkSync(this.#proc ? `/proc/self/fd/${fd}/${n}` : join(this.#dir, sub, n));
    } finally {
      closeSync(fd);
    }
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
    if (h === undefined) throw new Error(`${sub} is not open in ${this.#dir}`);
    if (sub === "") return h;
    this.#handles.delete(sub);
    this.#handles.set(sub, h);
    if (h.fd < 0) {
      let fd: number;
      try {
        fd = openSync(this.at("", sub), SUBDIR);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP") throw this.replaced(sub);
        throw err;
      }
      if (!sameFile(fstatSync(fd), h)) {
        closeSync(fd);
        throw this.replaced(sub);
      }
      h.fd = fd;
      this.#closeIdle();
    }
    return h;
  }

  /** A file's path through its directory's handle. */
  at(sub: string, name: string): string {
    const slash = name.indexOf("/");
    if (sub === "" && slash >= 0 && this.#handles.has(name.slice(0, slash)))
      return this.at(name.slice(0, slash), name.slice(slash + 1));
    return this.#proc ? `${this.dirPath(sub)}/${name}` : join(this.#dir, sub, name);
  }

  /** A directory's path through its handle. */
  dirPath(sub: string): string {
    if (!this.#proc) {
      if (!this.#handles.has(sub)) throw new Error(`${sub} is not open in ${this.#dir}`);
      return join(this.#dir, sub);
    }
    return `/proc/self/fd/${this.#opened(sub).fd}`;
  }

  /** Opens `file` with `flags` through its directory's handle; where there is no /proc, by path, its directory
   * checked before and after to be the one opened (a file made through another is removed again). */
  open(file: string, flags: number): number {
    const path = this.at("", file);
    if (this.#proc) return openSync(path, flags, 0o666);
    const pinned = (): void => {
      this.pinned("");
      for (const sub of parentOf(file)) this.pinned(sub);
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

  /** InputError unless every subdirectory opened still names the directory it opened. */
  pinnedAll(): void {
    for (const sub of this.#handles.keys()) if (sub !== "") this.pinned(sub);
  }

  /** InputError unless `sub` (or DIR, "") still names the directory opened. */
  pinned(sub: string): void {
    const h = this.#handles.get(sub);
    const path = sub === "" ? this.#dir : join(this.#dir, sub);
    const now = sub === "" ? statOrUndefined(path) : lstatOrUndefined(this.#proc ? this.at("", sub) : path);
    if (h === undefined || !sameFile(now, h)) throw this.replaced(sub === "" ? "--out" : sub);
  }

  replaced(what: string): InputError {
    return this.#refuse(
      `${what} was moved or replaced while strata wrote in it: nothing is written through what replaced it`,
      "write into a directory nothing else changes meanwhile, and run again",
    );
  }

  /** What DIR and its subdirectories `subs` hold, as paths relative to DIR (a link to a directory is not listed). */
  listed(subs: readonly string[]): Set<string> {
    const there = new Set<string>();
    for (const sub of ["", ...new Set(subs)]) {
      if (sub !== "" && lstatOrUndefined(this.at("", sub))?.isDirectory() !== true) continue;
      let names: string[];
      try {
        names = readdirSync(sub === "" ? this.dirPath("") : this.at("", sub));
      } catch {
        continue;
      }
      for (const name of names) there.add(sub === "" ? name : `${sub}/${name}`);
    }
    return there;
  }

  /** Closes every handle (again: nothing). */
  close(): void {
    for (const h of this.#handles.values()) if (h.fd >= 0) ignoreFailure(() => closeSync(h.fd));
    this.#handles.clear();
  }
}

function handle(fd: number): Handle {
  const stat = fstatSync(fd);
  return { fd, dev: stat.dev, ino: stat.ino };
}

function sameFile(a: { dev: number; ino: number } | undefined, b: { dev: number; ino: number }): boolean {
  return a !== undefined && a.dev === b.dev && a.ino === b.ino;
}
