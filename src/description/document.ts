// A YAML (or JSON) document read for checking, the same way for descriptions,
// target profiles and fleets: the file's text, then syntax (thrown at once),
// emptiness, and the shipped JSON Schema. What comes back is where the rules
// the schema cannot state add their errors, at the document's positions.

import { type Path, Problems } from "./problems.js";
import { readTextFile } from "./read.js";
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

/** The text of `file`, read as a description is (bounded, UTF-8 text only); a SpecError saying why it cannot be (`what`: "fleet", …). */
export function readText(file: string, what: string, fix: string): string {
  return readTextFile(file, { what, noun: what, fix });
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
