import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { parse as parseYaml } from "yaml";
import { loadSpec } from "../../src/description/load.js";
import { Problems } from "../../src/description/problems.js";
import { checkSchema, loadSchema } from "../../src/description/schema.js";
import { closest, editDistance } from "../../src/description/suggest.js";
import { LINK_MODES, MATCH_KINDS, TABLE_ROLES } from "../../src/wasm/abi.js";

const FIXTURES = "test/fixtures/specs";

/** The schema node at a "/"-separated path. */
function at(path: string): Record<string, unknown> {
  let node: unknown = loadSchema();
  for (const key of path.split("/")) node = (node as Record<string, unknown>)[key];
  return node as Record<string, unknown>;
}

describe("the shipped schema restates the ABI's lists exactly", () => {
  test.each<[string, string, readonly string[]]>([
    ["table roles", "$defs/memberTables/properties", TABLE_ROLES],
    ["match kinds", "$defs/matchKind/enum", MATCH_KINDS],
    ["link modes", "$defs/link/properties/mode/enum", LINK_MODES],
  ])("%s", (_name, path, expected) => {
    const node = at(path);
    expect(Array.isArray(node) ? node : Object.keys(node)).toEqual([...expected]);
  });
});

describe("fixtures", () => {
  const files = readdirSync(FIXTURES).filter((f) => /\.(ya?ml|json)$/.test(f));
  test("there is at least one", () => expect(files.length).toBeGreaterThan(0));
  test.each(files)("%s passes the schema and the loader", (file) => {
    const problems = new Problems(file);
    expect(checkSchema(parseYaml(readFileSync(`${FIXTURES}/${file}`, "utf8")), problems)).toEqual([]);
    expect(loadSpec(`${FIXTURES}/${file}`).networks.length).toBeGreaterThan(0);
  });
});

describe("suggestions", () => {
  test.each<[string, string, number]>([
    ["mode", "mode", 0],
    ["mdoe", "mode", 1], // a transposition is one edit
    ["dest", "dst", 1],
    ["acqiure", "acquire", 1],
    ["", "abc", 3],
  ])("editDistance(%s, %s) = %d", (a, b, d) => expect(editDistance(a, b)).toBe(d));

  test.each<[string, readonly string[], string | undefined]>([
    ["mdoe", ["from", "to", "mode"], "mode"],
    ["Mode", ["mode"], "mode"],
    ["xyz", ["from", "to", "mode"], undefined],
    ["ethernt", ["ethernet", "ipv4", "ipv6", "cna"], "ethernet"],
    ["ipv5", ["ethernet", "ipv4", "ipv6", "cna"], "ipv4"],
  ])("closest(%s)", (word, candidates, expected) => expect(closest(word, candidates)).toBe(expected));
});
