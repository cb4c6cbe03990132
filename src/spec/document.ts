// A YAML (or JSON) document read for checking, the same way for descriptions,
// target profiles and fleets: the file's text, then syntax (thrown at once),
// emptiness, and the shipped JSON Schema. What comes back is where the rules
// the schema cannot state add their errors, at the document's positions.

import { readFileSync } from "node:fs";
import { type Path, Problems, SpecError, SpecIssue } from "./problems.js";
import { checkSchema } from "./schema.js";
import { type ParsedSource, parseSource } from "./source.js";

export interface CheckedDocument {
  readonly source: ParsedSource;
  /** Errors so far (the schema's), and where the caller's rules add theirs. */
  readonly problems: Problems;
  /** Where the schema found errors: parts the rules should not look into. */
  readonly schemaErrors: readonly Path[];
}

/** A problem and its fix, for the whole file. */
export interface FileProblem {
  readonly problem: string;
  readonly fix: string;
}

/** The text of `file`; a SpecError saying why it cannot be read (`what`: "file", "fleet", …). */
export function readText(file: string, what: string, fix: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw new SpecError([new SpecIssue({ file, path: "", line: 0, column: 0 }, `cannot read ${what}: ${whyUnreadable(err)}`, fix)]);
  }
}

/** Why a file could not be read, in words. */
export function whyUnreadable(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  return code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : code === "EACCES" ? "permission denied" : (err as Error).message;
}

/** Parses `text` and checks it against `schemaFile`; throws SpecError for a syntax error or an empty document. */
export function readDocument(text: string, file: string, schemaFile: string, empty: FileProblem): CheckedDocument {
  const syntax = new Problems(file);
  const source = parseSource(text, syntax);
  syntax.throwIfAny();
  if (source === undefined) throw new Error("parseSource failed without an error");
  const problems = new Problems(file, source.locator);
  if (source.data === null || source.data === undefined) {
    problems.add([], empty.problem, empty.fix);
    problems.throwIfAny();
  }
  return { source, problems, schemaErrors: checkSchema(source.data, problems, schemaFile) };
}
