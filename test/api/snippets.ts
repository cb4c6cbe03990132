// The TypeScript snippets of a Markdown file (docs/api.md, README.md), for the tests that run and type-check them.

import { readFileSync } from "node:fs";

export interface Snippet {
  readonly name: string;
  readonly code: string;
  /** What it prints: the ```text block right after it, if there is one. */
  readonly prints: string | undefined;
}

/** Every ```ts block of `file`, in order. */
export function snippets(file: string): Snippet[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/```ts\n([\s\S]*?)```\n(?:\n```text\n([\s\S]*?)```)?/g)].map((m, i) => ({
    name: `${file} snippet ${i + 1}`,
    code: m[1] ?? "",
    prints: m[2],
  }));
}

/** The snippets the docs show: docs/api.md's and the README's. */
export const DOC_SNIPPETS: readonly Snippet[] = [...snippets("docs/api.md"), ...snippets("README.md")];
