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

export function formatInputError(file: string, where: string, problem: string, fix: string): string {
  const place = [file, where].filter((s) => s !== "").join(": ");
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
  const line = cut.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, escapeChar);
  return cut.length < text.length ? `${line}…` : line;
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
