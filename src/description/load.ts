// loadSpec: a description file (YAML or JSON) → a validated Spec, or a SpecError
// holding every problem found, each with its line, path and fix. Three passes,
// each on what the previous one vouched for: syntax, the JSON Schema, and the
// model's rules per network (skipping the parts the schema already found wrong,
// whose shape the rules cannot rely on). Between reading the links and checking
// them, identifiers the description leaves out are allocated (./allocate.ts),
// across every network at once: bridging and shared links put identifiers of
// one network's members in another's links.

import { excerpt } from "../errors.js";
import { expandIntents } from "../intents/expand.js";
import { expandOverlays } from "../intents/overlays.js";
import { withMeshLinks } from "../intents/overlays-read.js";
import { type DesignDef, designNamed, DESIGNS } from "../wire/designs.js";
import type { NetworkContext } from "./context.js";
import { type Path, Problems } from "./problems.js";
import { Unplaced } from "./quick-places.js";
import type { RawNetwork, RawSpec } from "./raw.js";
import { allocateLinks, allocateSessions, previousMap } from "./allocate.js";
import { joinNetworks } from "./bridging.js";
import { checkLayering } from "./layering.js";
import { checkSharedRows } from "./subduction.js";
import { type CheckedDocument, readDocument, readQuickDocument } from "./document.js";
import type { ParsedSource } from "./source.js";
import { readDescription } from "./read.js";
import { SCHEMA_FILE } from "./schema.js";
import { didYouMean } from "./suggest.js";
import { checkTables, type Elsewhere } from "./tables.js";
import { finishTopology, identsNamed, readTopology, type Topology, type TopologyDraft } from "./topology.js";
import type { Allocation, NetworkSpec, Spec } from "./types.js";

export interface LoadOptions {
  /**
   * The allocation of an earlier version of the description (its Spec's `allocation`, or
   * recoverAllocation() of what is installed): identifiers the description leaves out keep
   * their earlier values where they are still free.
   */
  readonly previous?: Allocation;
  /**
   * Where notes go that are no errors (a key written in its old name), a line each, with or without errors after them;
   * by default, stderr as `strata: warning: LINE`.
   */
  readonly warn?: (line: string) => void;
  /**
   * Told, for each network whose tables are checked, what its rows are checked against (its design, its members and
   * links, the names other networks resolve): what checks a few new rows without loading the description again
   * (src/api/row-check.ts).
   */
  readonly tableContext?: (network: TableContext) => void;
  /** Told the parsed document (its data and places), once it has passed the schema: what an edit is read against
   * (src/control/reload.ts). */
  readonly parsed?: (source: ParsedSource) => void;
}

/** What a network's rows are checked against (./tables.ts checkTables' arguments but the rows and their places). */
export interface TableContext {
  readonly network: string;
  readonly design: DesignDef;
  readonly topology: Topology;
  readonly elsewhere: Elsewhere;
}

const warnOnStderr = (line: string): void => void process.stderr.write(`strata: warning: ${line}\n`);

/** Reads and validates a description; throws SpecError (an InputError) for anything wrong with it, and nothing else for
 * bad input. */
export function loadSpec(file: string, options: LoadOptions = {}): Spec {
  return parseSpec(readDescription(file), file, options);
}

/**
 * The identifiers of a description (its text), written and allocated: allocate(d, previous?).
 * Throws SpecError when the description is invalid or an omitted identifier has no free value.
 */
export function allocate(text: string, file: string, previous?: Allocation): Allocation {
  return parseSpec(text, file, previous === undefined ? {} : { previous }).allocation ?? { links: [], sessions: [] };
}

/** Validates the text of a description; `file` is used in messages and kept in the Spec. */
export function parseSpec(text: string, file: string, options: LoadOptions = {}): Spec {
  return quickSpec(text, file, options) ?? checkedSpec(readDocument(text, file, SCHEMA_FILE, EMPTY), file, options);
}

const EMPTY = {
  problem: "the description is empty; it needs a top-level `networks:` map",
  fix: "see docs/spec.md for the format",
};

/**
 * The Spec of a description read quickly (./quick-source.ts), or its SpecError, whose places are the yaml library's
 * (quick-source.test.ts holds them to it); undefined when the quick reader leaves the text to the library, or a place
 * it was asked for (an empty value's).
 */
function quickSpec(text: string, file: string, options: LoadOptions): Spec | undefined {
  try {
    const doc = readQuickDocument(text, file, SCHEMA_FILE);
    return doc === undefined ? undefined : checkedSpec(doc, file, options);
  } catch (err) {
    if (err instanceof Unplaced) return undefined;
    throw err;
  }
}

/** The Spec of a parsed document; a SpecError for what is wrong with it. */
function checkedSpec(doc: CheckedDocument, file: string, options: LoadOptions): Spec {
  const { source, problems, schemaErrors } = doc;
  if (schemaErrors.length === 0) options.parsed?.(source);
  const read =
    isRecord(source.data) && isRecord(source.data["networks"])
      ? readNetworks(source, problems, schemaErrors, options)
      : undefined;
  for (const note of problems.notes) (options.warn ?? warnOnStderr)(note.message);
  problems.throwIfAny();
  return read === undefined ? { file, networks: [] } : { file, ...read };
}

/** A network's members and links as written, before identifiers are allocated. */
interface Drafted {
  readonly ctx: NetworkContext;
  readonly raw: RawNetwork;
  readonly draft: TopologyDraft;
}

/** A network's members and links with every identifier known. */
type Read = Drafted & { readonly topology: Topology };

/** Every network of a description: drafted, its identifiers allocated, joined to the others, its tables checked, and
 * the layering across them. */
function readNetworks(
  source: ParsedSource,
  problems: Problems,
  bad: readonly Path[],
  options: LoadOptions,
): { networks: NetworkSpec[]; allocation: Allocation } {
  const raw = source.data as unknown as RawSpec;
  // Members and links of every network first: bridging and shared links give members of one
  // network identifiers in another, which that network's tables may name.
  const drafted: Drafted[] = [];
  for (const [name, net] of Object.entries(raw.networks)) {
    // Paths of the schema's errors inside this network, relative to it.
    const inside = bad.filter((p) => p[0] === "networks" && p[1] === name).map((p) => p.slice(2));
    const one = readNetwork(problems, name, net, source.sourceText, inside);
    if (one !== undefined) drafted.push(one);
  }
  const previous = previousMap(options.previous);
  const links = allocateLinks(problems, drafted, previous);
  const sessions = allocateSessions(problems, drafted, previous);
  const read = drafted.map((d) => ({ ...d, topology: finishNetwork(d.ctx, d.raw, d.draft) }));
  const whole = read.length === Object.keys(raw.networks).length && read.every((r) => r.ctx.design !== undefined);
  const known = knownNetworks(problems, read, whole);
  const elsewhere = resolver(read, sessions.byMember, known);
  const networks: NetworkSpec[] = [];
  for (const { ctx, raw: net, topology: read1 } of read) {
    const topology = known(ctx.network) ? read1 : { ...read1, complete: false };
    // Without a design, fields and values in tables cannot be checked; the header error says why.
    const design = ctx.design;
    if (design === undefined) continue;
    const names = { ...elsewhere, sessions: sessions.byMember.get(ctx.network) ?? new Map() };
    options.tableContext?.({ network: ctx.network, design, topology, elsewhere: names });
    networks.push({
      name: ctx.network,
      design,
      decrementTtl: net.ttl === "decrement",
      members: topology.members,
      links: topology.links,
      nonlocal: new Set(net.nonlocal ?? []),
      tables: checkTables(ctx, design, net.tables ?? {}, topology, names),
      at: problems.ref(ctx.path),
    });
  }
  if (whole) {
    const topologies = new Map(read.map((r) => [r.ctx.network, r.topology]));
    // Where a member receives: its own links, bridging links of other networks that reach it, shared links (the
    // identifiers joinNetworks filled).
    const receivesOn = (network: string, member: string): readonly number[] | undefined => {
      const ins = known(network) ? topologies.get(network)?.memberLinks.get(member)?.ins : undefined;
      return ins === undefined ? undefined : [...ins.keys()].sort((a, b) => a - b);
    };
    checkLayering(problems, networks, receivesOn);
    checkSharedRows(problems, networks, known);
  }
  const overlays = whole ? expandOverlays(problems, raw.networks, networks, known, previous) : undefined;
  return {
    networks: expandIntents(problems, raw.networks, overlays?.networks ?? networks, known),
    allocation: {
      links,
      sessions: [...sessions.list, ...(overlays?.sessions ?? [])],
      ...(overlays === undefined || overlays.ids.length === 0 ? {} : { overlays: overlays.ids }),
    },
  };
}

/**
 * The networks joined (`whole`: every one could be read), and whether each one's identifiers
 * are all known. A refused link leaves identifiers unknown, in its network and those it reaches
 * (any of them, when it names one that does not exist): rows there are not checked against the
 * links left, so that one wrong link is one error.
 */
function knownNetworks(problems: Problems, read: readonly Read[], whole: boolean): (network: string) => boolean {
  // Composition names other networks: it is checked only once every network could be read.
  const unjoined = whole
    ? joinNetworks(
        problems,
        read.map((r) => ({
          name: r.ctx.network,
          design: r.ctx.design,
          path: r.ctx.path,
          topology: r.topology,
          nonlocal: new Set(r.raw.nonlocal ?? []),
        })),
      )
    : undefined;
  const names = new Set(read.map((r) => r.ctx.network));
  const reach = read.flatMap((d) => [...d.draft.refusedReach]);
  const refusedReach = reach.some((n) => !names.has(n)) ? names : new Set(reach);
  const complete = new Map(
    read.map((r) => [
      r.ctx.network,
      r.topology.complete && unjoined?.has(r.ctx.network) === false && !refusedReach.has(r.ctx.network),
    ]),
  );
  return (network) => complete.get(network) === true;
}

/** One network's members and links as written (./topology.ts), before identifiers are allocated. */
function readNetwork(
  problems: Problems,
  name: string,
  raw: RawNetwork,
  sourceText: (path: Path) => string | undefined,
  bad: readonly Path[],
): { ctx: NetworkContext; raw: RawNetwork; draft: TopologyDraft } | undefined {
  const schemaError = (rel: Path, exact = false): boolean =>
    bad.some((p) => (exact ? p.length === rel.length : p.length >= rel.length) && rel.every((seg, i) => p[i] === seg));
  // Everything below names members: without a sound network and member map there is nothing to check.
  if (schemaError([], true) || schemaError(["members"])) return undefined;
  const path = ["networks", name];
  const design = schemaError(["header"]) ? undefined : designNamed(raw.header);
  if (design === undefined && !schemaError(["header"])) {
    const names = DESIGNS.map((d) => d.name);
    problems.add(
      [...path, "header"],
      `unknown header design '${excerpt(raw.header)}'`,
      `${didYouMean(raw.header, names)}designs: ${names.join(", ")}`,
    );
  }
  const ctx: NetworkContext = {
    problems,
    network: name,
    path,
    design,
    value: (at, v) => (typeof v === "number" ? (sourceText(at) ?? v) : v),
    schemaError,
  };
  // The overlays intent's mesh links join the links as written, to be allocated and named with them.
  return { ctx, raw, draft: withMeshLinks(ctx, raw, readTopology(ctx, raw)) };
}

/** A network's links, named and checked once every identifier is known. */
function finishNetwork(ctx: NetworkContext, raw: RawNetwork, draft: TopologyDraft): Topology {
  const topology = finishTopology(ctx, draft);
  const name = ctx.network;
  const groups = new Set(topology.links.flatMap((l) => (l.group === undefined ? [] : [l.group])));
  (raw.nonlocal ?? []).forEach((g, i) => {
    if (!groups.has(g) && topology.complete)
      ctx.problems.add(
        [...ctx.path, "nonlocal", i],
        `no link of ${name} implements group '${g}'`,
        groups.size === 0
          ? "remove it: the network has no group links"
          : `groups of ${name}: ${[...groups].join(", ")}`,
      );
  });
  return topology;
}

/** Names of links and sessions of other networks' members on a machine, for `do: { link: A.NAME }` and `via: { session:
 * C.NAME }`. */
function resolver(
  read: readonly { ctx: NetworkContext; topology: Topology }[],
  sessions: ReadonlyMap<string, ReadonlyMap<string, ReadonlyMap<string, number>>>,
  known: (network: string) => boolean,
): Omit<Elsewhere, "sessions"> {
  const byName = new Map(read.map((r) => [r.ctx.network, r.topology]));
  const on = (network: string, machine: string): { topology: Topology; key: string } | string => {
    const t = byName.get(network);
    if (t === undefined) return `there is no network '${network}'`;
    const ms = t.members.filter((m) => m.machine === machine);
    const m = ms[0];
    if (m === undefined || ms.length > 1)
      return (
        `${ms.length === 0 ? "no member" : `${ms.length} members`} of ${network} run` +
        `${ms.length === 1 ? "s" : ""} on machine ${machine}`
      );
    return { topology: t, key: m.key };
  };
  return {
    link(network, machine, name) {
      const at = on(network, machine);
      if (typeof at === "string")
        return {
          problem: `cannot find link '${name}' of ${network}: ${at}`,
          fix: "layering hands packets between members on one machine",
        };
      if (!known(network)) return undefined;
      const p = at.topology.memberLinks.get(at.key);
      const idents = p === undefined ? [] : identsNamed(p, name);
      const [ident, ...more] = idents;
      if (ident !== undefined && more.length === 0) return ident;
      const names = [...new Set([...(p?.ins.values() ?? [])].map((l) => l.name))];
      return ident === undefined
        ? {
            problem: `${network}.${at.key} has no link named '${name}'`,
            fix: names.length === 0 ? `${at.key} receives on no link` : `${at.key} receives on ${names.join(", ")}`,
          }
        : {
            problem:
              `${network}.${at.key} has ${idents.length} links named '${name}' ` + `(identifiers ${idents.join(", ")})`,
            fix: "write the identifier instead of the name",
          };
    },
    session(network, machine, name) {
      const at = on(network, machine);
      if (typeof at === "string")
        return {
          problem: `cannot find session '${name}' of ${network}: ${at}`,
          fix: "layering hands packets between members on one machine",
        };
      const named = sessions.get(network)?.get(at.key);
      const id = named?.get(name);
      if (id !== undefined) return id;
      const names = [...(named?.keys() ?? [])];
      return {
        problem: `${network}.${at.key} has no send row named '${name}'`,
        fix:
          names.length === 0
            ? `give ${network}.${at.key} a send row { name: ${name}, header: { … } }`
            : `named send rows of ${network}.${at.key}: ${names.join(", ")}`,
      };
    },
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
