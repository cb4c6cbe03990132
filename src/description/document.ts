// A YAML (or JSON) document read for checking, the same way for descriptions,
// target profiles and fleets: the file's text, then syntax (thrown at once),
// emptiness, and the shipped JSON Schema. What comes back is where the rules
// the schema cannot state add their errors, at the document's positions.

import { type Path, Problems, SpecError, SpecIssue } from "./problems.js";
import { readTextFile } from "./read.js";
import { checkSchema } from "./schema.js";
import { quickSource } from "./quick-source.js";
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

/** The text of `file`, read as a description is (bounded, UTF-8 text only); a SpecError saying why it cannot be
 * (`what`: "fleet", …). */
export function readText(file: string, what: string, fix: string): string {
  return readTextFile(file, { what, noun: what, fix });
}

/**
 * Refuses, in one line, the text of a file that another file names (a fleet's profile, an
 * update's description) when none of `keys` (plain names: the keys every file of its kind has)
 * appears in it as a key: such a path may lead to any file on the machine, and checking it as
 * YAML would quote what it holds. The line quotes nothing of it: even the start of a first line
 * with no key in it may be a secret (a machine id, a token). (A binary, non-UTF-8 or unreadable
 * file is refused unquoted when it is read; an empty one is left to readDocument.)
 */
export function checkNamedKind(text: string, file: string, what: string, keys: readonly string[], fix: string): void {
  if (text.trim() === "") return;
  // A key as YAML or JSON writes it: at a line's start or after { or ,, maybe quoted, then a colon.
  if (new RegExp(`(^|[\\s{,])["']?(${keys.join("|")})["']?\\s*:`, "m").test(text)) return;
  const problem = `this is not a ${what}: it has no key ${keys.join(" or ")}`;
  throw new SpecError([new SpecIssue({ file, path: "", line: 0, column: 0 }, problem, fix)]);
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

/**
 * The document read by ./quick-source.ts and checked against `schemaFile`, as readDocument's; undefined when the quick
 * reader leaves the text to the library, or it holds nothing (readDocument says so).
 */
export function readQuickDocument(text: string, file: string, schemaFile: string): CheckedDocument | undefined {
  const source = quickSource(text);
  if (source === undefined || source.data === null || source.data === undefined) return undefined;
  const problems = new Problems(file, source.locator);
  return { source, problems, schemaErrors: checkSchema(source.data, problems, schemaFile) };
}
