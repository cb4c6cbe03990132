// The scalars of ./quick-source.ts: a plain one resolved as the yaml library resolves it (the core
// schema, by the library's own tags), and the escapes of a double-quoted one it takes (JSON's).

import { isScalar, type ScalarTag, Schema } from "yaml";

/** The core schema with merge keys, as parseSource reads: plain scalars resolve by the library's own tags. */
const SCALAR_TAGS = new Schema({ merge: true }).tags.filter(
  (t): t is ScalarTag => !("collection" in t && t.collection !== undefined) && t.default === true && "test" in t,
);

/** What the core schema's words (null, true, 12, 0x1f, 1.5e3, .inf, …) all match: anything else is text. */
const MAYBE_NOT_TEXT = /^(?:~|[-+0-9.nNtTfF][0-9A-Za-z.+-]*)$/;

/** A plain scalar as the core schema reads it: null, true/false, a number, or the text itself. */
export function plainValue(text: string): unknown {
  if (!MAYBE_NOT_TEXT.test(text)) return text;
  for (const tag of SCALAR_TAGS) {
    if (tag.test?.test(text) !== true) continue;
    const value = tag.resolve(text, () => undefined, {});
    return isScalar(value) ? value.value : value;
  }
  return text;
}

/** The escapes of a double-quoted scalar the quick reader takes: JSON's; YAML's others are left to the library. */
export const ESCAPES: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};
