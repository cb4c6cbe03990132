// Structural validation against the shipped schemas (schema/strata.schema.json for
// descriptions; schema/target.schema.json and schema/fleet.schema.json for target
// profiles and fleets: contracts for editors and other tools), with ajv's errors
// rewritten for people: the path, what was expected in words taken from the
// schema's own descriptions, and what was found.

import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Ajv2020, ErrorObject, ValidateFunction } from "ajv/dist/2020.js";
import { excerpt } from "../errors.js";
import type { Path, Problems } from "./problems.js";
import { didYouMean, listOr } from "./suggest.js";

export const SCHEMA_FILE = "schema/strata.schema.json";

/**
 * The path of a file shipped with strata (a schema, a bundled target profile), found by walking
 * up from this module (src/description in tests, dist/src/description when built); undefined when absent.
 */
export function shippedPath(relative: string): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let up = 0; up < 6; up++) {
    const candidate = join(dir, relative);
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  return undefined;
}

/** The text of a schema as shipped: the description's by default, or another under schema/. */
export function readShipped(file = SCHEMA_FILE): string {
  const path = shippedPath(file);
  if (path === undefined) throw new Error(`${file} not found above ${fileURLToPath(import.meta.url)}`);
  return readFileSync(path, "utf8");
}

/** A schema as shipped: the description's by default, or another under schema/. */
export function loadSchema(file = SCHEMA_FILE): Record<string, unknown> {
  return JSON.parse(readShipped(file)) as Record<string, unknown>;
}

/** ajv's options for every schema. verbose: errors carry the schema node and data, which the messages below are made
 * from. */
export const AJV_OPTIONS = { allErrors: true, verbose: true, strict: true, allowUnionTypes: true } as const;

/** Where `npm run build:ts` writes a schema's validator as code (scripts/gen-validators.ts): build/schema/X.cjs. */
export const validatorFile = (file: string): string => join("build", file.replace(/\.json$/, ".cjs"));

/** The first line of a validator written as code: what it was made from (the schema's text, ajv's options). */
export function validatorStamp(schemaText: string): string {
  const digest = createHash("sha256").update(JSON.stringify(AJV_OPTIONS)).update(schemaText).digest("hex");
  return `// strata validator ${digest}`;
}

/**
 * The validator `npm run build:ts` wrote for `file` as code, when it was made from this schema text: loaded in a few
 * ms, where ajv's compile takes ~0.25 s of CPU (AMD EPYC), at every start of strata that reads a description.
 * Undefined when it is missing, stale or does not load: the schema is compiled instead.
 */
export function writtenValidator(file: string, schemaText: string): ValidateFunction | undefined {
  const path = shippedPath(validatorFile(file));
  if (path === undefined) return undefined;
  try {
    const code = readFileSync(path, "utf8");
    if (!code.startsWith(`${validatorStamp(schemaText)}\n`)) return undefined;
    const loaded = createRequire(import.meta.url)(path) as { default?: ValidateFunction };
    return typeof loaded.default === "function" ? loaded.default : undefined;
  } catch {
    return undefined;
  }
}

const compiled = new Map<string, { readonly validate: ValidateFunction; readonly schema: SchemaNode }>();

/** The schema compiled by ajv, whose compiler is loaded only here: a validator written as code needs none of it, and
 * loading it cost every start of strata ~0.04 s of CPU (strata check of examples/ip-router 0.51 → 0.47 s, AMD EPYC). */
export function compiledByAjv(schema: Record<string, unknown>): ValidateFunction {
  const ajv = createRequire(import.meta.url)("ajv/dist/2020.js") as { Ajv2020: typeof Ajv2020 };
  return new ajv.Ajv2020(AJV_OPTIONS).compile(schema);
}

function validator(file: string): { readonly validate: ValidateFunction; readonly schema: SchemaNode } {
  let got = compiled.get(file);
  if (got === undefined) {
    const text = readShipped(file);
    const schema = JSON.parse(text) as Record<string, unknown>;
    got = { validate: writtenValidator(file, text) ?? compiledByAjv(schema), schema };
    compiled.set(file, got);
  }
  return got;
}

/** Validates `data` against a shipped schema, adds one error per problem found, and returns the paths of those errors.
 * */
export function checkSchema(data: unknown, problems: Problems, file = SCHEMA_FILE): Path[] {
  const { validate, schema } = validator(file);
  if (validate(data)) return [];
  const stranger = strangerMap(data, schema);
  if (stranger !== undefined) {
    problems.add([], stranger);
    return [[]];
  }
  const paths: Path[] = [];
  for (const err of validate.errors ?? []) {
    const at = describe(err, toPath(err.instancePath, data), problems);
    if (at !== undefined) paths.push(at);
  }
  return paths;
}

interface SchemaNode {
  readonly description?: string;
  readonly properties?: Record<string, unknown>;
}

/**
 * The problem of a whole file that is a map with none of the keys its kind has, and none a
 * misspelling of one: it does not look like one of strata's files (a `root:$6$…` line reads as
 * a key), so its keys are not quoted one by one as unknown.
 */
function strangerMap(data: unknown, schema: SchemaNode): string | undefined {
  const known = Object.keys(schema.properties ?? {});
  if (typeof data !== "object" || data === null || Array.isArray(data) || known.length === 0) return undefined;
  const keys = Object.keys(data);
  if (keys.length === 0 || keys.some((k) => known.includes(k) || didYouMean(k, known) !== "")) return undefined;
  return `must be ${schema.description ?? "one of strata's files"}, got a map with none of its keys, ${NOT_QUOTED}`;
}

/** Adds the error in words and returns where; undefined for ajv's bookkeeping errors that repeat another one. */
function describe(err: ErrorObject, path: Path, problems: Problems): Path | undefined {
  const parent = (err.parentSchema ?? {}) as SchemaNode;
  const params = err.params as Record<string, unknown>;
  // The inner error of a propertyNames check names the bad key itself.
  if (err.propertyName !== undefined) {
    const at = [...path, err.propertyName];
    problems.add(
      at,
      `'${excerpt(err.propertyName)}' is not allowed as a key here`,
      `a key must be ${parent.description ?? "a name"}`,
      true,
    );
    return at;
  }
  switch (err.keyword) {
    case "if": // "must match then schema": the branch's own errors say why
    case "propertyNames": // reported through its inner error above
      return undefined;
    case "additionalProperties": {
      const key = String(params["additionalProperty"]);
      const known = Object.keys(parent.properties ?? {});
      const hint = didYouMean(key, known);
      const fix = hint !== "" ? hint.trim() : `valid keys here: ${known.join(", ")}`;
      problems.add([...path, key], `unknown key '${excerpt(key)}'`, fix, true);
      return [...path, key];
    }
    default: {
      const { problem, fix } = inWords(err, path, parent.description);
      problems.add(path, problem, fix);
      return path;
    }
  }
}

/** An error about the value at `path` in words, with its fix ("": none); `expected` is what the schema says it is. */
function inWords(err: ErrorObject, path: Path, expected: string | undefined): { problem: string; fix: string } {
  const got = show(err.data);
  const params = err.params as Record<string, unknown>;
  const wanted = expected === undefined ? "" : `expected ${expected}`;
  switch (err.keyword) {
    case "required":
      return { problem: `missing key '${String(params["missingProperty"])}'`, fix: wanted };
    case "type": {
      // A whole file that is a scalar may be any file on the machine (a machine id, a token): none of it is quoted.
      const whole = path.length === 0 && typeof err.data !== "object";
      const what = whole ? `${scalarWords(err.data)}, ${NOT_QUOTED}` : got;
      return { problem: `must be ${expected ?? typeWords(String(params["type"]))}, got ${what}`, fix: "" };
    }
    case "enum":
    case "const": {
      const allowed = (err.keyword === "enum" ? (params["allowedValues"] as unknown[]) : [params["allowedValue"]]).map(
        String,
      );
      const hint = typeof err.data === "string" ? didYouMean(err.data, allowed).trim() : "";
      return { problem: `must be ${expected ?? listOr(allowed)}, got ${got}`, fix: hint };
    }
    case "pattern":
      return { problem: `must be ${expected ?? `text matching ${String(params["pattern"])}`}, got ${got}`, fix: "" };
    case "minimum":
    case "maximum": {
      const bound = `${err.keyword === "minimum" ? "at least" : "at most"} ${String(params["limit"])}`;
      return {
        problem: `must be ${expected ?? bound}, got ${got}`,
        fix: expected === undefined ? "" : `it must be ${bound}`,
      };
    }
    case "minItems":
    case "minProperties":
      return { problem: `must not be empty`, fix: wanted };
    case "maxItems":
    case "maxProperties": {
      const count = Array.isArray(err.data)
        ? err.data.length
        : typeof err.data === "object" && err.data !== null
          ? Object.keys(err.data).length
          : 0;
      const what = err.keyword === "maxItems" ? "items" : "keys";
      const limit = Number(params["limit"]).toLocaleString("en-US");
      return { problem: `has ${count.toLocaleString("en-US")} ${what}: at most ${limit} are taken`, fix: wanted };
    }
    case "uniqueItems": {
      const items = Array.isArray(err.data) ? err.data : [];
      return { problem: `lists ${show(items[Number(params["i"])])} twice`, fix: "list each value once" };
    }
    case "not":
      return { problem: expected ?? "this key is not allowed here", fix: "remove it" };
    default:
      return { problem: err.message ?? `fails the schema rule '${err.keyword}'`, fix: "" };
  }
}

/** An ajv JSON pointer as a path, with list indices as numbers (found by walking the data). */
function toPath(pointer: string, data: unknown): Path {
  if (pointer === "") return [];
  const path: (string | number)[] = [];
  let node = data;
  for (const raw of pointer.slice(1).split("/")) {
    const seg = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(node)) {
      path.push(Number(seg));
      node = node[Number(seg)] as unknown;
    } else {
      path.push(seg);
      node = typeof node === "object" && node !== null ? (node as Record<string, unknown>)[seg] : undefined;
    }
  }
  return path;
}

/** Why a whole file that is one scalar is not quoted. */
const NOT_QUOTED = "not quoted: this does not look like one of strata's files";

/** A scalar by its kind alone: "text", "a number", "true or false". */
function scalarWords(value: unknown): string {
  return typeof value === "string" ? "text" : typeof value === "number" ? "a number" : "true or false";
}

/** A found value for a message: strings quoted, containers by kind. */
function show(value: unknown): string {
  if (value === null || value === undefined) return "nothing";
  if (typeof value === "string") return `'${excerpt(value)}'`;
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a map";
  return String(value);
}

const TYPE_WORDS: Record<string, string> = {
  string: "a string",
  integer: "an integer",
  number: "a number",
  boolean: "true or false",
  object: "a map",
  array: "a list",
  null: "nothing",
};

function typeWords(types: string): string {
  return listOr(types.split(",").map((t) => TYPE_WORDS[t] ?? t));
}
