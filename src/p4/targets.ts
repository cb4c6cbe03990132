// Target profiles: what a P4 switch offers (docs/targets.md). A profile is a YAML
// file checked like a description — syntax, then schema/target.schema.json, then
// the rules the schema cannot state — with every error at its line and path.
// Limits the file leaves out, or writes `unlimited`, are Infinity here.

import { readdirSync } from "node:fs";
import { basename, extname, isAbsolute, join, resolve } from "node:path";
import { checkNamedKind, readDocument, readText } from "../description/document.js";
import { SpecError, SpecIssue } from "../description/problems.js";
import { shippedPath } from "../description/schema.js";
import { didYouMean } from "../description/suggest.js";
import { MATCH_KINDS, type MatchKind } from "../wasm/abi.js";

export const TARGET_SCHEMA_FILE = "schema/target.schema.json";
/** Where the bundled profiles live, next to schema/ in the package. */
export const BUNDLED_DIR = "targets";

export interface TargetProfile {
  readonly name: string;
  /** The file it was read from. */
  readonly file: string;
  readonly summary: string;
  readonly architecture: string;
  readonly matchKinds: readonly MatchKind[];
  readonly maxKeyBits: number;
  /** Tables one device holds: `tables`, or stages × tablesPerStage. */
  readonly tables: number;
  /** When the profile gives the table count as a pipeline. */
  readonly stages?: { readonly count: number; readonly tablesPerStage: number };
  /** Entries per match kind, all tables of that kind together. */
  readonly capacity: Readonly<Record<MatchKind, number>>;
  readonly multicastGroups: number;
  readonly selectorGroups: number;
  readonly selectorGroupSize: number;
}

/** The names of the bundled profiles (targets/NAME.yaml), sorted. */
export function bundledProfiles(): string[] {
  const dir = shippedPath(BUNDLED_DIR);
  if (dir === undefined) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .map((f) => f.slice(0, -".yaml".length))
    .sort();
}

/** A profile reference is a path when it has a directory part or a file extension; otherwise a bundled name. */
export function isProfilePath(ref: string): boolean {
  return ref.includes("/") || ref.includes("\\") || extname(ref) !== "";
}

/**
 * The file a reference names: a path (relative to `baseDir`), or targets/NAME.yaml for a bundled
 * name; `problem` and `fix` say why not when there is no such bundled profile.
 */
export function resolveProfile(ref: string, baseDir: string): { file: string } | { problem: string; fix: string } {
  if (isProfilePath(ref)) return { file: isAbsolute(ref) || baseDir === "." ? ref : join(baseDir, ref) };
  const dir = shippedPath(BUNDLED_DIR);
  const names = bundledProfiles();
  if (dir !== undefined && names.includes(ref)) return { file: join(dir, `${ref}.yaml`) };
  return {
    problem: `no bundled target profile '${ref}'`,
    fix:
      `${didYouMean(ref, names)}bundled: ${names.join(", ")}; a profile file's path has a / or an extension, ` +
      `like ./${ref}.yaml`,
  };
}

/** Reads the profile `ref` names (see resolveProfile); throws SpecError for anything wrong with it. */
export function loadProfile(ref: string, baseDir = "."): TargetProfile {
  const found = resolveProfile(ref, baseDir);
  if ("problem" in found)
    throw new SpecError([new SpecIssue({ file: ref, path: "", line: 0, column: 0 }, found.problem, found.fix)]);
  const fix = "give a bundled profile's name or the path of a profile file";
  const text = readText(found.file, "target profile", fix);
  // A path may lead to any file: one that is no profile gets one line, quoting at most its first.
  checkNamedKind(
    text,
    isProfilePath(ref) ? found.file : displayPath(found.file, ref),
    "target profile",
    ["architecture", "matchKinds"],
    fix,
  );
  return parseProfile(
    text,
    isProfilePath(ref) ? found.file : displayPath(found.file, ref),
    isProfilePath(ref) ? undefined : ref,
  );
}

/** Validates the text of a profile; `file` is for messages, `defaultName` when the file has no `name`. */
export function parseProfile(text: string, file: string, defaultName?: string): TargetProfile {
  const empty = {
    problem: "the target profile is empty; it needs architecture and matchKinds",
    fix: "see docs/targets.md for the format",
  };
  const { source, problems } = readDocument(text, file, TARGET_SCHEMA_FILE, empty);
  problems.throwIfAny();
  const raw = source.data as RawProfile;
  // The two ways of giving the table count: one of them, and both halves of the second.
  if (raw.tables !== undefined && (raw.stages !== undefined || raw.tablesPerStage !== undefined)) {
    problems.add(
      [raw.stages !== undefined ? "stages" : "tablesPerStage"],
      "tables and stages × tablesPerStage both give the number of tables",
      "write tables, or stages and tablesPerStage",
    );
  }
  if ((raw.stages === undefined) !== (raw.tablesPerStage === undefined)) {
    const [given, missing] = raw.stages !== undefined ? ["stages", "tablesPerStage"] : ["tablesPerStage", "stages"];
    problems.add(
      [given],
      `${given} without ${missing}`,
      `the number of tables is stages × tablesPerStage: add ${missing}`,
    );
  }
  (Object.keys(raw.capacity ?? {}) as MatchKind[]).forEach((kind) => {
    if (!raw.matchKinds.includes(kind))
      problems.add(
        ["capacity", kind],
        `capacity for ${kind}, which matchKinds does not list`,
        `add ${kind} to matchKinds, or remove this line`,
        true,
      );
  });
  problems.throwIfAny();

  const stages =
    raw.stages !== undefined && raw.tablesPerStage !== undefined
      ? { count: limit(raw.stages), tablesPerStage: limit(raw.tablesPerStage) }
      : undefined;
  const capacity = Object.fromEntries(
    MATCH_KINDS.map((k) => [k, raw.matchKinds.includes(k) ? limit(raw.capacity?.[k]) : 0]),
  ) as Record<MatchKind, number>;
  return {
    name: raw.name ?? defaultName ?? basename(file, extname(file)),
    file,
    summary: raw.summary ?? "",
    architecture: raw.architecture,
    matchKinds: MATCH_KINDS.filter((k) => raw.matchKinds.includes(k)),
    maxKeyBits: limit(raw.maxKeyBits),
    tables: stages !== undefined ? stages.count * stages.tablesPerStage : limit(raw.tables),
    ...(stages !== undefined ? { stages } : {}),
    capacity,
    multicastGroups: limit(raw.multicast?.groups),
    selectorGroups: limit(raw.actionSelectors?.groups),
    selectorGroupSize: limit(raw.actionSelectors?.groupSize),
  };
}

/** A limit as written: a count, or `unlimited` / left out (Infinity). */
type RawLimit = number | "unlimited" | undefined;

interface RawProfile {
  readonly name?: string;
  readonly summary?: string;
  readonly architecture: string;
  readonly matchKinds: readonly MatchKind[];
  readonly maxKeyBits?: RawLimit;
  readonly tables?: RawLimit;
  readonly stages?: RawLimit;
  readonly tablesPerStage?: RawLimit;
  readonly capacity?: Partial<Record<MatchKind, RawLimit>>;
  readonly multicast?: { readonly groups?: RawLimit };
  readonly actionSelectors?: { readonly groups?: RawLimit; readonly groupSize?: RawLimit };
}

function limit(value: RawLimit): number {
  return typeof value === "number" ? value : Number.POSITIVE_INFINITY;
}

/** A limit for people: the number, or "unlimited". */
export function formatLimit(n: number): string {
  return Number.isFinite(n) ? String(n) : "unlimited";
}

/** Bundled files are named in messages as targets/NAME.yaml when they sit under the working directory, else by full
 * path. */
function displayPath(file: string, name: string): string {
  const relative = join(BUNDLED_DIR, `${name}.yaml`);
  return resolve(relative) === resolve(file) ? relative : file;
}
