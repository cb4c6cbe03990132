// loadSpec: a description file (YAML or JSON) → a validated Spec, or a SpecError
// holding every problem found, each with its line, path and fix. Three passes,
// each on what the previous one vouched for: syntax, the JSON Schema, and the
// model's rules per network (skipping the parts the schema already found wrong,
// whose shape the rules cannot rely on).

import { excerpt } from "../errors.js";
import { designNamed, DESIGNS } from "../wire/designs.js";
import type { NetworkContext } from "./context.js";
import { type Path, Problems } from "./problems.js";
import type { RawNetwork, RawSpec } from "./raw.js";
import { checkSchema } from "./schema.js";
import { readDescription } from "./read.js";
import { parseSource } from "./source.js";
import { didYouMean } from "./suggest.js";
import { checkTables } from "./tables.js";
import { checkTopology } from "./topology.js";
import type { NetworkSpec, Spec } from "./types.js";

/** Reads and validates a description; throws SpecError (an InputError) for anything wrong with it, and nothing else for bad input. */
export function loadSpec(file: string): Spec {
  return parseSpec(readDescription(file), file);
}

/** Validates the text of a description; `file` is used in messages and kept in the Spec. */
export function parseSpec(text: string, file: string): Spec {
  const syntax = new Problems(file);
  const source = parseSource(text, syntax);
  syntax.throwIfAny();
  if (source === undefined) throw new Error("parseSource failed without an error");
  const problems = new Problems(file, source.locator);
  if (source.data === null || source.data === undefined) {
    problems.add([], "the description is empty; it needs a top-level `networks:` map", "see docs/spec.md for the format");
    problems.throwIfAny();
  }

  const bad = checkSchema(source.data, problems);
  const networks: NetworkSpec[] = [];
  if (isRecord(source.data) && isRecord(source.data["networks"])) {
    const raw = source.data as unknown as RawSpec;
    for (const [name, net] of Object.entries(raw.networks)) {
      // Paths of the schema's errors inside this network, relative to it.
      const inside = bad.filter((p) => p[0] === "networks" && p[1] === name).map((p) => p.slice(2));
      const spec = checkNetwork(problems, name, net, source.sourceText, inside);
      if (spec !== undefined) networks.push(spec);
    }
  }
  problems.throwIfAny();
  return { file, networks };
}

function checkNetwork(problems: Problems, name: string, raw: RawNetwork, sourceText: (path: Path) => string | undefined, bad: readonly Path[]): NetworkSpec | undefined {
  const schemaError = (rel: Path, exact = false): boolean =>
    bad.some((p) => (exact ? p.length === rel.length : p.length >= rel.length) && rel.every((seg, i) => p[i] === seg));
  // Everything below names members: without a sound network and member map there is nothing to check.
  if (schemaError([], true) || schemaError(["members"])) return undefined;
  const path = ["networks", name];
  const design = schemaError(["header"]) ? undefined : designNamed(raw.header);
  if (design === undefined && !schemaError(["header"])) {
    const names = DESIGNS.map((d) => d.name);
    problems.add([...path, "header"], `unknown header design '${excerpt(raw.header)}'`, `${didYouMean(raw.header, names)}designs: ${names.join(", ")}`);
  }
  const ctx: NetworkContext = {
    problems,
    network: name,
    path,
    design,
    value: (at, v) => (typeof v === "number" ? (sourceText(at) ?? v) : v),
    schemaError,
  };
  const topology = checkTopology(ctx, raw);
  // Without a design, fields and values in tables cannot be checked; the header error says why.
  if (design === undefined) return undefined;
  const tables = checkTables(ctx, design, raw.tables ?? {}, topology);
  return {
    name,
    design,
    decrementTtl: raw.ttl === "decrement",
    members: topology.members,
    links: topology.links,
    tables,
    at: problems.ref(path),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
