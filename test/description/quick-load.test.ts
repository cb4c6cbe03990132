// parseSpec's two readings of a description agree: the quick reader (quick-source.ts) and the
// yaml library's positioned document give the same Spec for a valid description, and a broken one
// gets the library's errors, at the same lines, in the same order. A description the quick reader
// takes is never parsed by the library.

import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { beforeAll, beforeEach, describe, expect, test, vi } from "vitest";
import * as yaml from "yaml";
import type { Spec } from "../../src/description/types.js";

/** `off`: the quick reader declines every text (the positioned path alone, as before it); `parsed`: library parses. */
const state = vi.hoisted(() => ({ off: false, parsed: 0 }));

vi.mock("../../src/description/quick-source.js", async (original) => {
  const real = await original<typeof import("../../src/description/quick-source.js")>();
  return { ...real, quickSource: (text: string) => (state.off ? undefined : real.quickSource(text)) };
});

vi.mock("yaml", async (original) => {
  const real = await original<typeof import("yaml")>();
  return {
    ...real,
    parseDocument: (...args: Parameters<typeof real.parseDocument>) => {
      state.parsed++;
      return real.parseDocument(...args);
    },
  };
});

// The files of a worker share their modules (vitest.config.ts: isolate false): the loader another file loaded already
// knows neither mock, so this file loads its own, after the mocks.
let parseSpec: typeof import("../../src/description/load.js").parseSpec;
let SpecError: typeof import("../../src/description/problems.js").SpecError;

beforeAll(async () => {
  vi.resetModules();
  ({ parseSpec } = await import("../../src/description/load.js"));
  ({ SpecError } = await import("../../src/description/problems.js"));
});

beforeEach(() => {
  state.off = false;
  state.parsed = 0;
});

test("the mocks hold: with the quick reader off, the library parses a description it would take", () => {
  state.off = true;
  parseSpec(readFileSync("test/fixtures/specs/hub.yaml", "utf8"), "hub.yaml");
  expect(state.parsed).toBeGreaterThan(0);
});

/** A Spec or the lines of its SpecError, and the notes, for one reading. */
function outcome(text: string, off: boolean): { spec?: unknown; errors?: string[]; notes: string[] } {
  state.off = off;
  const notes: string[] = [];
  try {
    return { spec: parseSpec(text, "d.yaml", { warn: (l) => notes.push(l) }), notes };
  } catch (err) {
    if (!(err instanceof SpecError)) throw err;
    return { errors: err.lines(), notes };
  } finally {
    state.off = false;
  }
}

function agree(text: string): ReturnType<typeof outcome> {
  const slow = outcome(text, true);
  state.parsed = 0;
  const quick = outcome(text, false);
  expect(quick).toStrictEqual(slow);
  return quick;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path);
    return /\.(ya?ml|json)$/.test(name) ? [path] : [];
  });
}

const DESCRIPTIONS = [...filesUnder("examples"), ...filesUnder("test/fixtures")].filter((f) =>
  /^networks:/m.test(readFileSync(f, "utf8")),
);

/** Descriptions the quick reader leaves to the library: anchors and merge keys (`<<: *host`). */
const LEFT = ["examples/bridged-lans/merged.yaml", "examples/bridged-lans/network.yaml", "examples/l2vpn/network.yaml"];

describe("every example and fixture, as written and as JSON", () => {
  test.each(DESCRIPTIONS)("%s", (file) => {
    const text = readFileSync(file, "utf8");
    const written = agree(text);
    expect(written.spec, "a description that does not load").toBeDefined();
    // A valid description the quick reader takes is never parsed by the library.
    expect(state.parsed === 0).toBe(!LEFT.includes(file));
    const json = JSON.stringify(yaml.parse(text, { merge: true }), null, 2);
    agree(json);
    expect(state.parsed).toBe(0);
  });
});

const HUB = yaml.parse(readFileSync("test/fixtures/specs/hub.yaml", "utf8")) as unknown;

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

describe("random descriptions, valid and broken, in YAML's styles and JSON", () => {
  const replacement = fc.oneof(
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom("h1.1", "hub.9", "self", "drop", "*", "10.0.0.0/8", "02:00:00:00:00:01", "0x0800 &&& 0xff00"),
    fc.constantFrom("1..0", 65521, -1, 1.5, "two-way", "allcast", "0x10", "010", "yes", "~", "a: b", "#x", "- a"),
  );
  const style = fc.constantFrom<yaml.ToStringOptions>(
    {},
    { collectionStyle: "flow" },
    { defaultStringType: "QUOTE_SINGLE" },
    { defaultStringType: "QUOTE_DOUBLE", defaultKeyType: "PLAIN" },
    { indent: 4, indentSeq: false },
  );
  test("the hub example with one part replaced", () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { minLength: 1, maxLength: 8 }), replacement, style, (picks, r, options) => {
        const data = mutate(HUB, picks, r);
        agree(JSON.stringify(data));
        agree(yaml.stringify(data, options));
      }),
      { numRuns: 300 },
    );
  });

  test.each([
    ["a repeated key", "networks:\n  lan:\n    header: ethernet\n    header: ipv4\n    members: {}\n"],
    ["a tab", "networks:\n\tlan: {}\n"],
    ["an unknown key deep in a flow map", "networks: { lan: { header: ethernet, members: { a: { nam: x } } } }\n"],
    ["a bad indentation", "networks:\n  lan:\n    header: ethernet\n   members: {}\n"],
    ["an unclosed flow map", "networks: { lan: { header: ethernet }\n"],
    ["JSON with a repeated key", '{"networks": {"a": {}, "a": {}}}'],
    ["an empty value", "networks:\n  lan:\n    header:\n    members: {}\n"],
    ["a comment right after a value", "networks: {}# x\n"],
    ["a document marker", "---\nnetworks: {}\n"],
    ["two documents", "networks: {}\n---\nnetworks: {}\n"],
  ])("%s", (_what, text) => {
    agree(text);
  });
});

/** A router whose forward table has `n` LPM rows, the last one `last`. */
function router(n: number, last: string): string {
  const rows: string[] = [];
  for (let i = 0; i < n - 1; i++)
    rows.push(`        - { match: { dst: 10.${(i >> 8) & 255}.${i & 255}.0/24 }, out: 2 }`);
  rows.push(`        - ${last}`);
  return [
    "networks:",
    "  ip:",
    "    header: ipv4",
    "    members: { h: { name: 10.255.0.1 }, r: { name: 10.255.0.254 }, s: { name: 10.255.0.2 } }",
    "    links: [ { from: h.1, to: r.1, mode: two-way }, { from: r.2, to: s.1, mode: two-way } ]",
    "    tables:",
    "      h: { forward: [ { in: self, out: 1 } ] }",
    "      s: { acquire: [ { do: receive } ], receive: [ { do: deliver } ] }",
    "      r:",
    "        forward:",
    ...rows,
    "",
  ].join("\n");
}

describe("a large table", () => {
  test("an error at the last of 100,000 rows names its line", () => {
    const text = router(100_000, "{ match: { dst: 10.0.0.0/33 }, out: 2 }");
    const { errors } = outcome(text, false);
    // Its places are the quick reader's: the library does not parse it again.
    expect(state.parsed).toBe(0);
    expect(errors?.[0]).toMatch(
      /^d\.yaml: 100010:27 networks\.ip\.tables\.r\.forward\[99999\]\.match\.dst: prefix length 33/,
    );
    expect(errors).toHaveLength(1);
  });

  test("a valid one is parsed once, by the quick reader", () => {
    const spec = parseSpec(router(2_000, "{ match: { dst: 11.0.0.0/8 }, out: 2 }"), "d.yaml");
    expect(state.parsed).toBe(0);
    const rows = spec.networks[0]?.tables.get("r")?.forward?.rows;
    expect(rows?.at(-1)?.at).toMatchObject({ line: 2010, column: 11 });
  });
});

describe("numbers as written", () => {
  test.each([
    ["a number too large for a double", "42540766411282592856903984951653826561", "2001:db8::1"],
    ["in hex", "0x20010db8000000000000000000000001", "2001:db8::1"],
  ])("%s keeps its text", (_what, written, name) => {
    const text = `networks:\n  six:\n    header: ipv6\n    members:\n      a: { name: ${written} }\n`;
    const { spec } = agree(text);
    expect(state.parsed).toBe(0);
    expect((spec as Spec).networks[0]?.members[0]?.name).toBe(name);
  });
});
