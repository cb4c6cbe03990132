// DIR/.strata-output, the marker: its first line says which strata command wrote the directory, the rest list, one a
// line, the files it wrote there, which are the only ones the next command into DIR removes or replaces. Only strata's
// own output names are listed, so a forged marker cannot make strata remove another file. It is written whole under
// another name and renamed over the old one: a write that fails (a full disk) leaves the old marker.

import { closeSync, constants, fstatSync, openSync, readFileSync, renameSync, unlinkSync } from "node:fs";
import { ignoreFailure, writeAll } from "./fs-steps.js";

/** Marks a directory as strata's output and lists, one a line, the files strata wrote there. */
export const MARKER_FILE = ".strata-output";
/** The marker being written: renamed over MARKER_FILE once it is whole. */
export const MARKER_NEW = ".strata-output.new";

/** The marker's first line: the command that wrote it, then the promise it keeps. */
const markerHeader = (command: string): string =>
  `# strata ${command} wrote the files below; the next run into this directory replaces them, and no other file.`;
const MARKER_HEADER =
  /^# strata [a-z0-9 ]+ wrote the files below; the next run into this directory replaces them, and no other file\.$/;

const { O_CREAT, O_EXCL, O_NOFOLLOW, O_RDONLY, O_WRONLY } = constants;
/** A file made new: never one that is there, never through a link. */
export const CREATE = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW;

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
export function isOutputName(f: string): boolean {
  return OUTPUT_NAMES.some((n) => n.test(f)) && f.split("/").every((p) => p !== "." && p !== "..");
}

/** The subdirectory `f` lies in, if any. */
export const parentOf = (f: string): string[] => (f.includes("/") ? [f.slice(0, f.indexOf("/"))] : []);

/** Files relative to DIR by their subdirectory ("" for DIR's own), each as its name there. */
export function bySubdirectory(files: readonly string[]): Map<string, string[]> {
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
export function readMarker(path: string): string[] | undefined {
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

/** Writes the marker of `command`, listing `files`, whole under MARKER_NEW, then renames it over the old one; `at`
 * gives a name's path in DIR. */
export function writeMarker(at: (name: string) => string, command: string, files: readonly string[]): void {
  const text = `${[markerHeader(command), ...files.filter((f) => f !== MARKER_FILE)].join("\n")}\n`;
  const next = at(MARKER_NEW);
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
  renameSync(next, at(MARKER_FILE));
}
