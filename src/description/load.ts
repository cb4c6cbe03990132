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
import { joinNetworks } from "./bridging.js";
import { checkLayering } from "./layering.js";
import { checkSharedRows } from "./subduction.js";
import { readDocument } from "./document.js";
import { readDescription } from "./read.js";
import { SCHEMA_FILE } from "./schema.js";
import { didYouMean } from "./suggest.js";
import { checkTables } from "./tables.js";
import { checkTopology, type Topology } from "./topology.js";
import type { NetworkSpec, Spec } from "./types.js";

/** Reads and validates a description; throws SpecError (an InputError) for anything wrong with it, and nothing else for bad input. */
export function loadSpec(file: string): Spec {
  return parseSpec(readDescription(file), file);
}

/** Validates the text of a description; `file` is used in messages and kept in the Spec. */
export function parseSpec(text: string, file: string): Spec {
  const empty = { problem: "the description is empty; it needs a top-level `networks:` map", fix: "see docs/spec.md for the format" };
  const { source, problems, schemaErrors: bad } = readDocument(text, file, SCHEMA_FILE, empty);
  const networks: NetworkSpec[] = [];
  if (isRecord(source.data) && isRecord(source.data["networks"])) {
    const raw = source.data as unknown as RawSpec;
    // Members and links of every network first: bridging and shared links give members of one
    // network identifiers in another, which that network's tables may name.
    const read: { ctx: NetworkContext; raw: RawNetwork; topology: Topology }[] = [];
    for (const [name, net] of Object.entries(raw.networks)) {
      // Paths of the schema's errors inside this network, relative to it.
      const inside = bad.filter((p) => p[0] === "networks" && p[1] === name).map((p) => p.slice(2));
      const one = readNetwork(problems, name, net, source.sourceText, inside);
      if (one !== undefined) read.push(one);
    }
    const whole = read.length === Object.keys(raw.networks).length && read.every((r) => r.ctx.design !== undefined);
    // Composition names other networks: it is checked only once every network could be read.
    const before = problems.count;
    if (whole) {
      const nets = read.map((r) => ({ name: r.ctx.network, design: r.ctx.design, path: r.ctx.path, topology: r.topology, nonlocal: new Set(r.raw.nonlocal ?? []) }));
      joinNetworks(problems, nets);
    }
    // A link between networks that is wrong leaves identifiers unknown: rows are then not checked against them.
    const joined = whole && problems.count === before;
    for (const { ctx, raw: net, topology: read1 } of read) {
      const topology = joined ? read1 : { ...read1, complete: false };
      // Without a design, fields and values in tables cannot be checked; the header error says why.
      const design = ctx.design;
      if (design === undefined) continue;
      networks.push({
        name: ctx.network,
        design,
        decrementTtl: net.ttl === "decrement",
        members: topology.members,
        links: topology.links,
        nonlocal: new Set(net.nonlocal ?? []),
        tables: checkTables(ctx, design, net.tables ?? {}, topology),
        at: problems.ref(ctx.path),
      });
    }
    if (whole) {
      checkLayering(problems, networks);
      checkSharedRows(problems, networks);
    }
  }
  problems.throwIfAny();
  return { file, networks };
}

/** One network's members and links, checked against the model (./topology.ts). */
function readNetwork(
  problems: Problems,
  name: string,
  raw: RawNetwork,
  sourceText: (path: Path) => string | undefined,
  bad: readonly Path[],
): { ctx: NetworkContext; raw: RawNetwork; topology: Topology } | undefined {
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
  const groups = new Set(topology.links.flatMap((l) => (l.group === undefined ? [] : [l.group])));
  (raw.nonlocal ?? []).forEach((g, i) => {
    if (!groups.has(g) && topology.complete) problems.add([...path, "nonlocal", i], `no link of ${name} implements group '${g}'`, groups.size === 0 ? "remove it: the network has no group links" : `groups of ${name}: ${[...groups].join(", ")}`);
  });
  return { ctx, raw, topology };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
