// The text of a description → plain data plus a way back from a path to a line.
// YAML 1.2 is a superset of JSON, so one parser serves both and JSON files get
// the same positions and duplicate-key errors.

import { excerpt } from "../errors.js";
import {
  type Document,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  parseDocument,
  visit,
  type YAMLMap,
} from "yaml";
import type { Locator, Path, Problems } from "./problems.js";

export interface ParsedSource {
  readonly data: unknown;
  readonly locator: Locator;
  /** The text of the scalar at `path` as written ("0x0800"), for integers too large for a JS number. */
  sourceText(path: Path): string | undefined;
}

/** The syntax tree with positions; the locator for a file that failed to parse knows no positions. */
export function parseSource(text: string, problems: Problems): ParsedSource | undefined {
  let lines = new LineCounter();
  // merge: `<<: *defaults` is common in hand-written tables; prettyErrors off keeps messages on one line.
  // The library's own check of unique keys compares each key with every key before it (20,000 members: seconds);
  // a document that may have a duplicate, or has another error, is parsed again with it, for its errors.
  let doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: false, merge: true });
  if (doc.errors.length > 0 || mayRepeatKeys(doc)) {
    lines = new LineCounter();
    doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true, merge: true });
  }
  const pos = (offset: number): { line: number; column: number } => {
    const lp = lines.linePos(offset);
    return { line: lp.line, column: lp.col };
  };
  for (const err of [...doc.errors, ...doc.warnings]) {
    const { line, column } = pos(err.pos[0]);
    problems.addAt(line, column, syntaxProblem(err.message), syntaxFix(err.code));
  }
  if (problems.count > 0) return undefined;

  const unresolved = findUnresolvedAlias(doc);
  if (unresolved !== undefined) {
    const { line, column } = pos(unresolved.offset);
    problems.addAt(
      line,
      column,
      `alias *${excerpt(unresolved.name)} has no anchor &${excerpt(unresolved.name)} before it`,
      "define the anchor first",
    );
    return undefined;
  }

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 1000 });
  } catch (err) {
    // toJS throws only for alias trouble (too many expansions); report it as a syntax error.
    problems.addAt(0, 0, `cannot expand the description: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }

  const locator: Locator = {
    locate(path, key) {
      const found = walk(doc, path);
      const node = key ? (found.keyNode ?? found.node) : found.node;
      return node?.range ? pos(node.range[0]) : { line: 0, column: 0 };
    },
  };
  return {
    data,
    locator,
    sourceText(path) {
      const found = walk(doc, path);
      return found.exact && isScalar(found.node) ? found.node.source : undefined;
    },
  };
}

interface Found {
  /** The node at the path, or the deepest ancestor that exists. */
  readonly node: Node | undefined;
  /** The key node of the last step, when the path ends in a map entry. */
  readonly keyNode: Node | undefined;
  /** Whether every step of the path was found. */
  readonly exact: boolean;
}

/** Entries of each map by key, built on first use: every error and every element of the Spec looks its place up. */
const entries = new WeakMap<object, Map<string, { key: Node | undefined; value: Node | undefined }>>();

function entriesOf(map: YAMLMap): Map<string, { key: Node | undefined; value: Node | undefined }> {
  let byKey = entries.get(map);
  if (byKey === undefined) {
    byKey = new Map();
    for (const p of map.items) {
      if (isPair(p) && isScalar(p.key)) byKey.set(String(p.key.value), { key: asNode(p.key), value: asNode(p.value) });
    }
    entries.set(map, byKey);
  }
  return byKey;
}

function walk(doc: Document, path: Path): Found {
  let node = resolve(doc, doc.contents ?? undefined);
  let keyNode: Node | undefined;
  for (const seg of path) {
    let next: Node | undefined;
    keyNode = undefined;
    if (isSeq(node) && typeof seg === "number") {
      next = asNode(node.items[seg]);
    } else if (isMap(node)) {
      const entry = entriesOf(node).get(String(seg));
      next = entry?.value;
      keyNode = entry?.key;
    }
    if (next === undefined) return { node, keyNode: undefined, exact: false };
    node = resolve(doc, next);
  }
  return { node, keyNode, exact: true };
}

function asNode(value: unknown): Node | undefined {
  return isScalar(value) || isMap(value) || isSeq(value) || isAlias(value) ? value : undefined;
}

/** Follows an alias to the anchored node (positions then point at the anchor). */
function resolve(doc: Document, node: Node | undefined): Node | undefined {
  if (isAlias(node)) return asNode(node.resolve(doc));
  return node;
}

/** Whether some map has two scalar keys of the same value: what the library's unique-key check refuses, and more. */
function mayRepeatKeys(doc: Document): boolean {
  let repeats = false;
  visit(doc, {
    Map(_key, map) {
      const seen = new Set<unknown>();
      for (const p of map.items) {
        if (!isScalar(p.key)) continue;
        if (seen.has(p.key.value)) {
          repeats = true;
          return visit.BREAK;
        }
        seen.add(p.key.value);
      }
      return undefined;
    },
  });
  return repeats;
}

function findUnresolvedAlias(doc: Document): { name: string; offset: number } | undefined {
  let found: { name: string; offset: number } | undefined;
  visit(doc, {
    Alias(_key, alias) {
      if (alias.resolve(doc) === undefined) {
        found = { name: alias.source, offset: alias.range?.[0] ?? 0 };
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return found;
}

/** The yaml library's message without its own " at line L, column C" suffix (we print the position first). */
function syntaxProblem(message: string): string {
  const text = message.replace(/ at line \d+, column \d+:?[\s\S]*$/, "").trim();
  return `syntax error: ${text.charAt(0).toLowerCase()}${text.slice(1)}`;
}

function syntaxFix(code: string): string {
  switch (code) {
    case "DUPLICATE_KEY":
      return "each key may appear once in a map; merge the two entries";
    case "MULTIPLE_DOCS":
      return "a description is a single YAML document; remove the `---` separator";
    case "BAD_INDENT":
    case "MISSING_CHAR":
    case "UNEXPECTED_TOKEN":
      return "check the indentation and the closing brackets above this point";
    case "BAD_ALIAS":
      return 'a wildcard is written "*" with quotes: a bare * starts a YAML alias';
    case "TAG_RESOLVE_FAILED":
      return "remove the tag; descriptions use plain YAML values";
    default:
      return "";
  }
}
