// The loader's promise: for any input, a Spec or a SpecError — never another exception.

import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { parse as parseYaml } from "yaml";
import { parseSpec } from "../../src/description/load.js";
import { SpecError } from "../../src/description/problems.js";

const HUB = parseYaml(readFileSync("test/fixtures/specs/hub.yaml", "utf8")) as unknown;

function loadsOrSpecError(text: string): void {
  try {
    parseSpec(text, "fuzz.yaml");
  } catch (err) {
    expect(err).toBeInstanceOf(SpecError);
  }
}

/** `value` with the node at a path chosen by `picks` replaced by `replacement`. */
function mutate(value: unknown, picks: readonly number[], replacement: unknown): unknown {
  const [pick, ...rest] = picks;
  if (pick === undefined || typeof value !== "object" || value === null) return replacement;
  if (Array.isArray(value)) {
    if (value.length === 0) return replacement;
    const i = pick % value.length;
    return value.map((v, j) => (j === i ? mutate(v, rest, replacement) : v));
  }
  const keys = Object.keys(value);
  if (keys.length === 0) return replacement;
  const key = keys[pick % keys.length] ?? "";
  return { ...value, [key]: mutate((value as Record<string, unknown>)[key], rest, replacement) };
}

/**
 * Any code point but a surrogate: fast-check's `unit: "binary"`, drawn the same (the same index into the same two
 * ranges, so the same strings for a seed), but read back without the table of all 1,112,064 that fast-check builds
 * the first time it reads one back (1.7 s of CPU, to check the special strings it mixes in, such as "__proto__").
 */
const SURROGATES = 0xe000 - 0xd800;
const codePoint = fc.nat({ max: 0x10ffff - SURROGATES }).map(
  (i) => String.fromCodePoint(i < 0xd800 ? i : i + SURROGATES),
  (v) => {
    const cp = typeof v === "string" ? v.codePointAt(0) : undefined;
    if (cp === undefined || String.fromCodePoint(cp) !== v || (cp >= 0xd800 && cp < 0xe000))
      throw new Error("not one code point");
    return cp < 0xd800 ? cp : cp - SURROGATES;
  },
);

describe("parseSpec never throws anything but SpecError", () => {
  test("arbitrary text", () => {
    fc.assert(fc.property(fc.string({ unit: codePoint, maxLength: 200 }), loadsOrSpecError), { numRuns: 300 });
  });

  test("arbitrary JSON", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => loadsOrSpecError(JSON.stringify(v))),
      { numRuns: 300 },
    );
  });

  test("the hub example with one part replaced", () => {
    const replacement = fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.constantFrom(
        "h1.1",
        "hub.9",
        "self",
        "drop",
        "*",
        "10.0.0.0/8",
        "02:00:00:00:00:01",
        "0x0800 &&& 0xff00",
        "1..0",
        65521,
        -1,
        1.5,
        "two-way",
        "allcast",
      ),
    );
    fc.assert(
      fc.property(fc.array(fc.nat(), { minLength: 1, maxLength: 8 }), replacement, (picks, r) =>
        loadsOrSpecError(JSON.stringify(mutate(HUB, picks, r))),
      ),
      { numRuns: 1000 },
    );
  });
});
