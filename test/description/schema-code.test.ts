// The schemas' validators as code (build/schema/X.cjs, written by `npm run build:ts`, which npm test runs first): each
// is there, made from the schema as it is now, and finds what ajv's own compile of the schema finds, error for error
// (each error's place, keyword, schema node and data: what src/description/schema.ts makes its messages from).

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { AJV_OPTIONS, compiledByAjv, readShipped, writtenValidator } from "../../src/description/schema.js";

const ROOT = new URL("../..", import.meta.url).pathname;
const yamlIn = (dir: string): unknown[] =>
  readdirSync(join(ROOT, dir))
    .filter((f) => /\.ya?ml$/.test(f))
    .map((f) => parseYaml(readFileSync(join(ROOT, dir, f), "utf8")) as unknown);

/** Documents that pass, and each broken a way the loader's messages tell apart. */
const hub = yamlIn("test/fixtures/specs")[0] as { networks: Record<string, Record<string, unknown>> };
const lan = hub.networks["lan"] ?? {};
const descriptions: unknown[] = [
  ...yamlIn("test/fixtures/specs"),
  ...yamlIn("test/fixtures/analysis"),
  {},
  [],
  "networks",
  { nets: {} },
  { networks: { lan: { ...lan, header: 7 } } },
  { networks: { lan: { ...lan, members: { a: { name: 3, rolle: "infra" } } } } },
  { networks: { lan: { ...lan, links: [{ from: "a.1" }, { from: "a.1", to: "b.1", mode: "sideways" }] } } },
  { networks: { lan: { ...lan, bogus: true } }, version: -1 },
];
const CASES = [
  { schema: "schema/strata.schema.json", documents: descriptions },
  { schema: "schema/target.schema.json", documents: [...yamlIn("targets"), {}, { name: 3 }, { bogus: [] }] },
  {
    schema: "schema/fleet.schema.json",
    documents: [
      parseYaml(readFileSync(join(ROOT, "examples/ip-router/fleet.yaml"), "utf8")) as unknown,
      {},
      { targets: [] },
      { targets: 3, bogus: true },
    ],
  },
  {
    schema: "schema/updates.schema.json",
    documents: [...yamlIn("test/fixtures/updates"), {}, [], { updates: "x" }, { bogus: true }],
  },
];

describe("the schemas' validators written as code", () => {
  it.each(CASES)("$schema: written, current, and finding what ajv's compile finds", ({ schema, documents }) => {
    const text = readShipped(schema);
    const written = writtenValidator(schema, text);
    expect(written, `${schema}'s validator is not written, or is stale: npm run build:ts`).toBeTypeOf("function");
    // Made from another text, it is not taken.
    expect(writtenValidator(schema, `${text} `)).toBeUndefined();
    const compiled = new Ajv2020(AJV_OPTIONS).compile(JSON.parse(text) as object);
    const found = documents.map((d) => [written?.(d), written?.errors]);
    expect(found).toEqual(documents.map((d) => [compiled(d), compiled.errors]));
    // strata's own fallback for a validator missing or stale (ajv loaded only then) finds the same.
    const fallback = compiledByAjv(JSON.parse(text) as Record<string, unknown>);
    expect(documents.map((d) => [fallback(d), fallback.errors])).toEqual(found);
    // Some pass and some do not: the comparison is not of documents all alike.
    expect(new Set(found.map(([ok]) => ok))).toEqual(new Set([true, false]));
  });
});
