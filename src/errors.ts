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
    super(formatInputError(file, where, problem, fix));
    this.name = "InputError";
    this.file = file;
    this.where = where;
    this.problem = problem;
    this.fix = fix;
  }
}

export function formatInputError(file: string, where: string, problem: string, fix: string): string {
  const place = [file, where].filter((s) => s !== "").join(": ");
  return `${place === "" ? "" : `${place}: `}${problem}${fix === "" ? "" : ` (${fix})`}`;
}

/** A command-line mistake: an unknown flag, a missing argument, a bad value. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}
