// Errors that are values at the boundary: bad input from a user.
//
// An InputError names the file, where in it, what is wrong and, when we know,
// what would be right. The CLI prints it as one line and exits 2. Anything else
// that throws is a programmer error and keeps its stack.

export class InputError extends Error {
  readonly file: string;
  /** Where inside the file: "byte 1234", "networks.lanA.links[2].from", "12:7". Empty for the whole file. */
  readonly where: string;
  readonly problem: string;
  readonly fix: string;

  constructor(file: string, where: string, problem: string, fix = "") {
    // Each part stays one short line even when it quotes far too much of the input.
    const [w, p, f] = [where, problem, fix].map((part) => excerpt(part, MESSAGE_PART_LEN)) as [string, string, string];
    super(formatInputError(file, w, p, f));
    this.name = "InputError";
    this.file = file;
    this.where = w;
    this.problem = p;
    this.fix = f;
  }
}

/** `FILE: WHERE: problem (fix)`, the file name shown with its control and bidirectional characters escaped. */
export function formatInputError(file: string, where: string, problem: string, fix: string): string {
  const place = [printable(file), where].filter((s) => s !== "").join(": ");
  return `${place === "" ? "" : `${place}: `}${problem}${fix === "" ? "" : ` (${fix})`}`;
}

/** The most characters of the where, the problem and the fix of an InputError (a message's parts). */
export const MESSAGE_PART_LEN = 240;

/** The most characters of a value (a name, a key, source text) that a message quotes. */
export const EXCERPT_LEN = 60;

/**
 * At most `max` characters of `text`, fit for a one-line message: cut with "…",
 * control characters and line separators escaped (a value may be a whole file).
 */
export function excerpt(text: string, max = EXCERPT_LEN): string {
  let cut = text.length > max ? text.slice(0, max - 1) : text;
  if (cut.length < text.length && /[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1); // not half a surrogate pair
  const line = printable(cut);
  return cut.length < text.length ? `${line}…` : line;
}

/**
 * Characters that act on a terminal or on how a line reads instead of showing: C0 and C1
 * controls (ESC starts a terminal's escape sequences), DEL, the line and paragraph separators,
 * and the bidirectional formatting characters (U+202E shows what follows backwards, so that
 * `x\u202Elmth.yaml` reads as `xyaml.html`).
 */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;
/** The same, but for the newline and the tab that lay out what strata prints. */
const UNPRINTABLE_IN_OUTPUT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

/** `text` (a file name, a value) with those characters escaped: `\u001b`, `\u202e`, `\n`. */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, escapeChar);
}

/**
 * What strata writes on stdout and stderr, with those characters escaped but its own newlines
 * and tabs: so a file name (or anything else read from outside) that reaches a report or a
 * message cannot move the cursor, recolour the terminal or turn a line around. In JSON output
 * the escapes are the JSON's own (`\u202e` in a string is U+202E).
 */
export function printableOutput(text: string): string {
  return text.replace(UNPRINTABLE_IN_OUTPUT, escapeChar);
}

function escapeChar(c: string): string {
  if (c === "\n") return "\\n";
  if (c === "\r") return "\\r";
  if (c === "\t") return "\\t";
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

const IO_ERRORS: Readonly<Record<string, string>> = {
  ENOENT: "no such file",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EISDIR: "it is a directory",
  ENOTDIR: "a part of the path is a file",
  EROFS: "the file system is read-only",
  ENOSPC: "no space left on the device",
  EDQUOT: "the disk quota is used up",
  EEXIST: "something that is not a directory is in the way",
  ELOOP: "too many symbolic links",
  ENAMETOOLONG: "the name is too long",
};

/** A failed file-system call in words ("permission denied"); the code and the call for rare ones ("EIO read"). */
export function describeIoError(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e.code === undefined) return err instanceof Error ? err.message : String(err);
  return IO_ERRORS[e.code] ?? `${e.code} ${e.syscall ?? ""}`.trim();
}

/** A command-line mistake: an unknown flag, a missing argument, a bad value. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}
