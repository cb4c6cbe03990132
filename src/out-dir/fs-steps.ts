// The file-system steps an --out directory's claim is made of: each failure of DIR's (permission, read-only, full,
// gone) one line of bad input, and the small reads that answer "not there" rather than throw.

import { closeSync, lstatSync, mkdirSync, readdirSync, realpathSync, type Stats, statSync, writeSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { describeIoError, type InputError } from "../errors.js";

/** A refusal of DIR: the problem, and what to do instead. */
export type Refuse = (problem: string, fix: string) => InputError;

/** Runs a file-system step on DIR; its failure (permission, read-only, full, gone) is bad input. */
export function guard<T>(step: () => T, refuse: Refuse): T {
  try {
    return step();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === undefined) throw err;
    throw refuse(`cannot write in --out: ${describeIoError(err)}`, "choose a directory you can write to");
  }
}

export function ignoreFailure(step: () => void): void {
  try {
    step();
  } catch {
    // Gone already, or not empty: left as it is.
  }
}

/** Writes all of `data` to `fd`. */
export function writeAll(fd: number, data: string | Uint8Array): void {
  const bytes = typeof data === "string" ? Buffer.from(data) : data;
  for (let done = 0; done < bytes.length;) done += writeSync(fd, bytes, done, bytes.length - done);
}

/** Writes all of `data` to `fd` and closes it, whatever happens. */
export function writeAndClose(fd: number, data: string | Uint8Array): void {
  try {
    writeAll(fd, data);
  } finally {
    closeSync(fd);
  }
}

/** mkdir -p one level at a time (Node's recursive mkdir never returns under /proc: ENOENT from a parent that exists);
 * returns the directories it made, outermost first. */
export function makeDirs(path: string, made: string[] = []): string[] {
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

export function readdirOr(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

export function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

export function statOrUndefined(path: string): Stats | undefined {
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
export function identity(path: string): string {
  const stat = statOrUndefined(path);
  return stat === undefined ? "" : `${stat.dev}:${stat.ino}`;
}
