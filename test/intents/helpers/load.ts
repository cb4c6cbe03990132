// A description in the intents tests, read as the CLI reads a file (named t.yaml), and the lines its errors say,
// without the file's name.

import { parseSpec } from "../../../src/description/load.js";
import { SpecError } from "../../../src/description/problems.js";
import type { Allocation, Spec } from "../../../src/description/types.js";

export function load(text: string, warn?: (line: string) => void, previous?: Allocation): Spec {
  return parseSpec(text, "t.yaml", {
    ...(previous === undefined ? {} : { previous }),
    ...(warn === undefined ? {} : { warn }),
  });
}

export function errorsOf(text: string): string[] {
  try {
    load(text);
  } catch (err) {
    if (!(err instanceof SpecError)) throw err;
    return err.errors.map((e) => e.message.slice("t.yaml: ".length));
  }
  return [];
}
