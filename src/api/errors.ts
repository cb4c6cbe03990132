// The errors the library throws for bad input, each a value a program can look into (what, where, the fix) as well as
// one line for a person. A description's own errors are SpecErrors (src/description/problems.ts), as the CLI's are.

import type { TableRole } from "./description.js";

/** Why a table write was refused: a row the description's checks refuse, or the data plane's answer. */
export type TableWriteCode =
  "BadRow" | "NoSuchMember" | "NoSuchTable" | "NotFound" | "DuplicateEntry" | "TableFull" | "BadMatchKey" | "BadAction";

/** A write of a batch refused: nothing of the batch was applied. */
export class TableWriteError extends Error {
  readonly code: TableWriteCode;
  /** "NETWORK:MEMBER", as written. */
  readonly member: string;
  readonly table: TableRole | string;
  /** The write's index in its batch. */
  readonly index: number;
  readonly problem: string;
  readonly fix: string;

  constructor(
    at: { member: string; table: string; index: number },
    code: TableWriteCode,
    problem: string,
    fix: string,
  ) {
    super(`${at.member} ${at.table}, write ${at.index}: ${problem} (${fix})`);
    this.name = "TableWriteError";
    this.code = code;
    this.member = at.member;
    this.table = at.table;
    this.index = at.index;
    this.problem = problem;
    this.fix = fix;
  }
}
