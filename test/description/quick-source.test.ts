// The quick reader (src/description/quick-source.ts) against the yaml library (./source.ts): on
// every text it takes, the same data, the same place for every path and key, the same source text.

import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { stringify, type ToStringOptions } from "yaml";
import { type Path, Problems } from "../../src/description/problems.js";
import { Unplaced } from "../../src/description/quick-places.js";
import { quickSource } from "../../src/description/quick-source.js";
import { type ParsedSource, parseSource } from "../../src/description/source.js";

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path);
    return /\.(ya?ml|json)$/.test(name) ? [path] : [];
  });
}

/** Every path of `data` (with one past each container's end), for locate and sourceText. */
function pathsOf(data: unknown, at: Path = []): Path[] {
  const out: Path[] = [at];
  if (Array.isArray(data)) {
    data.forEach((v, i) => out.push(...pathsOf(v, [...at, i])));
    out.push([...at, data.length], [...at, "x"]);
  } else if (typeof data === "object" && data !== null) {
    for (const [k, v] of Object.entries(data)) out.push(...pathsOf(v, [...at, k]));
    out.push([...at, "no such key"], [...at, 0]);
  }
  return out;
}

/** What a source says about each path; an Unplaced answer as such. */
function answers(source: ParsedSource, paths: readonly Path[]): unknown[] {
  const ask = (f: () => unknown): unknown => {
    try {
      return f();
    } catch (err) {
      if (err instanceof Unplaced) return "unplaced";
      throw err;
    }
  };
  return paths.map((p) => [
    ask(() => source.locator.locate(p, false)),
    ask(() => source.locator.locate(p, true)),
    ask(() => source.sourceText(p)),
  ]);
}

/** Whether the quick reader took `text`; when it did, it must agree with the library everywhere but Unplaced. */
function agrees(
  text: string,
  library = (): ParsedSource | undefined => parseSource(text, new Problems("t.yaml")),
): boolean {
  const quick = quickSource(text);
  if (quick === undefined) return false;
  const slow = library();
  expect(slow, "the library refuses what the quick reader took").toBeDefined();
  if (slow === undefined) return true;
  expect(quick.data).toStrictEqual(slow.data);
  const paths = pathsOf(slow.data);
  const q = answers(quick, paths);
  const s = answers(slow, paths);
  // Every path's answers at once (one comparison, not one a path: hub-300.yaml has thousands), the library's taken as
  // Unplaced where the quick reader's is.
  const told = (a: unknown, i: number): unknown[] => [paths[i], ...(a as unknown[])];
  const expected = s.map((b, i) =>
    (b as unknown[]).map((y, j) => ((q[i] as unknown[])[j] === "unplaced" ? "unplaced" : y)),
  );
  expect(q.map(told)).toStrictEqual(expected.map(told));
  return true;
}

const FILES = [...filesUnder("examples"), ...filesUnder("test/fixtures")].filter((f) => statSync(f).size < 2e6);

describe("every example and fixture", () => {
  test.each(FILES)("%s", (file) => {
    const text = readFileSync(file, "utf8");
    // The library's reading once, for the text and for its data as JSON below.
    const slow = parseSource(text, new Problems(file));
    agrees(text, () => slow);
    // The same data as JSON, as a program writes it: indented and on one line.
    if (slow === undefined) return;
    expect(agrees(JSON.stringify(slow.data, null, 2))).toBe(true);
    expect(agrees(JSON.stringify(slow.data))).toBe(true);
  });
});

/** Words the core schema reads as null, true/false, integers and floats, or as text near them. */
const WORDS = [
  ...["~", "null", "Null", "NULL", "true", "True", "FALSE", "yes", "no", "on", "y"],
  ...["0", "-0", "+5", "010", "0o17", "0o8", "0x10", "0x0800", "0X10", "0b1", "1_000", "12345678901234567890"],
  ...["42540766411282592856903984951653826561", "1.5", "1.50", ".5", "5.", "1e3", "1E+3", "-1.5e-3", "1e400"],
  ...[".inf", "-.Inf", ".NaN", ".nan", "nan", "inf", "1.2.3", "10.0.0.0/8", "02:00:00:00:00:01", "fe80::1", "a#b"],
];

describe("scalars of the core schema, in block and flow", () => {
  test.each(WORDS)("%s", (word) => {
    const text = `a: ${word}\nb: [ ${word}, x ]\nc: { d: ${word} }\ne:\n  - ${word}\n  - { f: ${word} }\n`;
    expect(agrees(text)).toBe(true);
    expect(agrees(`{"a": ${JSON.stringify(word)}, "b": [${/^-?\d+$/.test(word) ? word : 1}]}`)).toBe(true);
  });
});

describe("texts left to the library", () => {
  test.each([
    ["an anchor", "a: &x 1\nb: *x\n"],
    ["a merge key", "a: { b: 1 }\nc: { <<: { b: 2 } }\n"],
    ["a tag", "a: !!str 1\n"],
    ["a block scalar", "a: |\n  text\n"],
    ["a folded plain scalar", "a: one\n  two\n"],
    ["a quoted scalar over two lines", 'a: "one\n  two"\n'],
    ["a YAML escape", 'a: "\\x41"\n'],
    ["a repeated key", "a: 1\na: 2\n"],
    ["a tab", "a:\t1\n"],
    ["CR LF line ends", "a: 1\r\nb: 2\r\n"],
    ["a number as a key", "1: a\n"],
    ["an explicit key", "? a\n: b\n"],
    ["a document marker", "---\na: 1\n"],
    ["a trailing comma", "a: [1, 2, ]\n"],
    ["a pair in a flow list", "a: [b: c]\n"],
    ["a flow map over two lines in a block", "a: { b: 1,\n  c: 2 }\n"],
    ["a value on the next line", "a:\n  b\n"],
    ["nested lists on one line", "- - a\n"],
    ["lists 100,000 deep", `a: ${"[".repeat(100_000)}${"]".repeat(100_000)}\n`],
    ["maps 1,000 deep", Array.from({ length: 1000 }, (_, i) => `${" ".repeat(i)}k:`).join("\n") + " 1\n"],
  ])("%s", (_what, text) => {
    expect(agrees(text)).toBe(false);
  });
});

describe("random data in the styles the yaml library writes", () => {
  const key = fc.constantFrom("a", "b-c", "d.e", "f_1", "g h", "1", "true", "x:y", "'q'", "<<", "__proto__", "");
  const scalar = fc.oneof(
    fc.constantFrom(...WORDS),
    fc.string({ maxLength: 8 }),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
  );
  const value = fc.letrec((tie) => ({
    node: fc.oneof({ depthSize: "small" }, scalar, tie("list"), tie("map")),
    list: fc.array(tie("node"), { maxLength: 4 }),
    map: fc.dictionary(key, tie("node"), { maxKeys: 4 }),
  })).node;
  const style = fc.constantFrom<ToStringOptions>(
    {},
    { collectionStyle: "flow" },
    { defaultStringType: "QUOTE_DOUBLE" },
    { defaultStringType: "QUOTE_SINGLE", defaultKeyType: "PLAIN" },
    { indent: 4, indentSeq: false, flowCollectionPadding: false },
  );
  test("agree wherever the quick reader takes them", () => {
    let taken = 0;
    fc.assert(
      fc.property(fc.dictionary(key, value, { minKeys: 1, maxKeys: 5 }), style, (data, options) => {
        if (agrees(stringify(data, options))) taken++;
        if (agrees(JSON.stringify(data, null, 1))) taken++;
      }),
      { numRuns: 400 },
    );
    // Enough are taken (about a quarter of 800: odd keys and strings are left) that the quick reader is checked.
    expect(taken).toBeGreaterThan(100);
  });
});
