// Errors in a description, collected rather than thrown one at a time, so that a
// user sees every mistake of a file in one run, in the order they appear in it.

import { InputError } from "../errors.js";
import type { SourceRef } from "./types.js";

/** A place inside the parsed document: keys and list indices from the root. */
export type Path = readonly (string | number)[];

/** Where a path sits in the text; implemented over the YAML syntax tree. */
export interface Locator {
  /** 1-based line and column of the value at `path` (of its key with `key`), or of the nearest enclosing node found. */
  locate(path: Path, key: boolean): { readonly line: number; readonly column: number };
}

/** At most this many errors are reported; a file with more has a deeper problem. */
export const MAX_ERRORS = 50;

/** One error: an InputError that also keeps its path and position apart for sorting and JSON output. */
export class SpecIssue extends InputError {
  readonly path: string;
  readonly line: number;
  readonly column: number;

  constructor(ref: SourceRef, problem: string, fix = "") {
    super(ref.file, whereOf(ref), problem, fix);
    this.name = "SpecIssue";
    this.path = ref.path;
    this.line = ref.line;
    this.column = ref.column;
  }
}

/** All the errors of a description; its message is the first, `errors` holds each (in source order). */
export class SpecError extends InputError {
  readonly errors: readonly SpecIssue[];
  /** Errors beyond MAX_ERRORS that were left out. */
  readonly omitted: number;

  constructor(errors: readonly SpecIssue[], omitted = 0) {
    const first = errors[0];
    if (first === undefined) throw new Error("SpecError needs at least one error");
    super(first.file, first.where, first.problem, first.fix);
    this.name = "SpecError";
    this.errors = errors;
    this.omitted = omitted;
  }

  /** One line per error, as the CLI prints them (without the "strata: " prefix). */
  lines(): string[] {
    const lines = this.errors.map((e) => e.message);
    if (this.omitted > 0)
      lines.push(`${this.file}: ${this.omitted} more error${this.omitted === 1 ? "" : "s"} not shown`);
    return lines;
  }
}

/** "12:7 networks.lanA.links[2].from", or whichever half is known. */
function whereOf(ref: SourceRef): string {
  const pos = ref.line > 0 ? `${ref.line}:${ref.column}` : "";
  return [pos, ref.path].filter((s) => s !== "").join(" ");
}

/** The most characters of one key in a path. */
const KEY_LEN = 32;

/** "networks.lanA.links[2].from"; keys that are not plain names are quoted: links["a b"]. */
export function formatPath(path: Path): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") {
      out += `[${seg}]`;
      continue;
    }
    // A key is source text: a long one is cut, shorter than a quoted value since a path may hold several.
    const key = seg.length > KEY_LEN ? `${seg.slice(0, KEY_LEN - 1)}…` : seg;
    if (/^[A-Za-z0-9_-]+$/.test(seg)) out += out === "" ? key : `.${key}`;
    else out += `[${JSON.stringify(key)}]`;
  }
  return out;
}

export class Problems {
  readonly file: string;
  readonly #locator: Locator | undefined;
  readonly #issues: SpecIssue[] = [];
  readonly #notes: SpecIssue[] = [];

  constructor(file: string, locator?: Locator) {
    this.file = file;
    this.#locator = locator;
  }

  /** Where `path` is in the file (its key with `key`: for unknown or misnamed keys). */
  ref(path: Path, key = false): SourceRef {
    const pos = this.#locator?.locate(path, key) ?? { line: 0, column: 0 };
    return { file: this.file, path: formatPath(path), line: pos.line, column: pos.column };
  }

  add(path: Path, problem: string, fix = "", key = false): void {
    this.#issues.push(new SpecIssue(this.ref(path, key), problem, fix));
  }

  /** An error at a place already resolved (a row's `at`): checks that run over the whole description. */
  addRef(ref: SourceRef, problem: string, fix = ""): void {
    this.#issues.push(new SpecIssue(ref, problem, fix));
  }

  /** An error at a known line and column with no path (syntax errors). */
  addAt(line: number, column: number, problem: string, fix = ""): void {
    this.#issues.push(new SpecIssue({ file: this.file, path: "", line, column }, problem, fix));
  }

  /**
   * A note that is no error (a key written in its old name): at `path`, placed at the key `key` inside it, so a reader
   * sees both the element and the word.
   */
  note(path: Path, key: string, problem: string, fix = ""): void {
    const place = this.ref([...path, key], true);
    this.#notes.push(new SpecIssue({ ...place, path: formatPath(path) }, problem, fix));
  }

  /** The notes so far, in source order. */
  get notes(): readonly SpecIssue[] {
    return [...this.#notes].sort((a, b) => rank(a) - rank(b) || a.column - b.column);
  }

  get count(): number {
    return this.#issues.length;
  }

  /** Throws a SpecError with every error so far, in source order, when there is any. */
  throwIfAny(): void {
    if (this.#issues.length === 0) return;
    // Stable sort: errors at the same place keep the order the checks found them; unplaced ones go last.
    const sorted = [...this.#issues].sort((a, b) => rank(a) - rank(b) || a.column - b.column);
    throw new SpecError(sorted.slice(0, MAX_ERRORS), Math.max(0, sorted.length - MAX_ERRORS));
  }
}

function rank(issue: SpecIssue): number {
  return issue.line > 0 ? issue.line : Number.MAX_SAFE_INTEGER;
}
