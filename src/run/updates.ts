// `strata run --updates FILE`: timed changes during a replay, so a failure can
// be replayed (docs/updates.md). Each update happens at a capture time: a new
// description (reconciled into the tables, src/control/reconcile.ts), or a
// link, member or machine going down or coming up. The file is read like a
// description (bounded, text only, its JSON Schema, errors at file:line:col),
// and every update is tried in order on a scratch engine before the first
// packet, so a replay never stops half-way on a bad update.
//
// Batches are cut at update times: a packet whose timestamp is at or after an
// update's time is processed after it, every earlier packet before it.

import { createHash } from "node:crypto";
import { dirname, resolve } from "node:path";
import { compile } from "../control/compile.js";
import type { CompiledSpec } from "../control/compiled.js";
import { type Change, resolveTarget, type Target } from "../control/reconcile.js";
import { sliceBatch } from "../engine/batches.js";
import { Engine } from "../engine/engine.js";
import type { AppliedUpdate } from "../engine/summary.js";
import { checkNamedKind, readDocument, readText } from "../description/document.js";
import { recoverAllocation } from "../control/allocation.js";
import { parseSpec } from "../description/load.js";
import { readDescription } from "../description/read.js";
import { type Path, SpecError, SpecIssue } from "../description/problems.js";
import type { SourceRef } from "../description/types.js";
import type { InputBatch } from "../wasm/runner.js";

export const UPDATES_SCHEMA_FILE = "schema/updates.schema.json";

/** A capture time: whole seconds since the epoch and nanoseconds, and as written. */
export interface Time {
  readonly sec: number;
  readonly nsec: number;
  readonly text: string;
}

interface Base {
  readonly index: number;
  readonly at: Time;
  /** Where the update is in the updates file. */
  readonly ref: SourceRef;
}

export type Update =
  | (Base & {
      readonly kind: "description";
      readonly file: string;
      readonly written: string;
      readonly fileRef: SourceRef;
    })
  | (Base & { readonly kind: "down" | "up"; readonly target: Target; readonly targetRef: SourceRef });

interface RawUpdate {
  at: number | string;
  description?: string;
  down?: Record<string, string>;
  up?: Record<string, string>;
}

/** Reads and checks an updates file; SpecError (file:line:col) for anything wrong with its text. Descriptions are not
 * read here. */
export function parseUpdates(text: string, file: string): Update[] {
  const empty = {
    problem: "the updates file is empty; it needs a list of updates",
    fix: "write - { at: 1700000000.5, down: { link: lan:h1.1 } }; see docs/updates.md",
  };
  const { source, problems, schemaErrors } = readDocument(text, file, UPDATES_SCHEMA_FILE, empty);
  problems.throwIfAny();
  const raw = source.data as RawUpdate[];
  const out: Update[] = [];
  let previous: Time | undefined;
  raw.forEach((u, index) => {
    const path: Path = [index];
    if (schemaErrors.some((p) => p[0] === index)) return;
    const kinds = (["description", "down", "up"] as const).filter((k) => u[k] !== undefined);
    if (kinds.length !== 1) {
      problems.add(
        path,
        kinds.length === 0
          ? "an update needs what happens: description, down or up"
          : `one update, one change: this one has ${kinds.join(" and ")}`,
        "write one of description: FILE, down: { link: … }, up: { member: … }; " +
          "several changes at one time are several updates",
      );
      return;
    }
    const at = parseTime(u.at);
    if (typeof at === "string") {
      problems.add(
        [...path, "at"],
        at,
        "write seconds since the epoch (1700000000.25, or " +
          '"1700000000.123456789" for nanoseconds) or an ISO time with a zone ' +
          "(2023-11-14T22:13:20.25Z)",
      );
      return;
    }
    if (previous !== undefined && before(at, previous)) {
      problems.add(
        [...path, "at"],
        `updates go in time order: ${at.text} is before the update above it (${previous.text})`,
        "sort the updates by at",
      );
    }
    previous = at;
    const ref = problems.ref(path);
    const kind = kinds[0] ?? "description";
    if (kind === "description") {
      const written = u.description ?? "";
      out.push({
        index,
        at,
        ref,
        kind,
        file: resolve(dirname(file), written),
        written,
        fileRef: problems.ref([...path, "description"]),
      });
      return;
    }
    const t = u[kind] ?? {};
    const keys = Object.keys(t);
    if (keys.length !== 1) {
      problems.add(
        [...path, kind],
        keys.length === 0
          ? `${kind} needs what: link, member or machine`
          : `${kind} names one thing: this names ${keys.join(" and ")}`,
        "several things at one time are several updates",
      );
      return;
    }
    const key = keys[0] as "link" | "member" | "machine";
    const target = { [key]: t[key] ?? "" } as Target;
    out.push({ index, at, ref, kind, target, targetRef: problems.ref([...path, kind, key]) });
  });
  problems.throwIfAny();
  return out;
}

/** Reads an updates file (bounded, UTF-8 text only, as a description is). */
export function loadUpdates(file: string): Update[] {
  return parseUpdates(
    readText(file, "updates file", "give the path of a YAML or JSON list of updates (docs/updates.md)"),
    file,
  );
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|z|[+-]\d{2}:\d{2})?$/;

/** A time as written in `at`, or what is wrong with it. */
export function parseTime(v: number | string): Time | string {
  if (typeof v === "number") {
    if (!Number.isFinite(v) || v < 0) return `${v} is not a time`;
    // The shortest decimal that reads back as v is what was written (1591780794.8): read it exactly.
    const exact = /^(\d{1,15})(?:\.(\d{1,9}))?$/.exec(String(v));
    if (exact !== null)
      return { sec: Number(exact[1]), nsec: Number((exact[2] ?? "").padEnd(9, "0")), text: String(v) };
    let sec = Math.floor(v);
    let nsec = Math.round((v - sec) * 1e9);
    if (nsec >= 1e9) {
      sec += 1;
      nsec -= 1e9;
    }
    return { sec, nsec, text: String(v) };
  }
  const text = v.trim();
  const decimal = /^(\d{1,15})(?:\.(\d{1,9}))?$/.exec(text);
  if (decimal !== null) return { sec: Number(decimal[1]), nsec: Number((decimal[2] ?? "").padEnd(9, "0")), text: v };
  const iso = ISO.exec(text);
  if (iso === null) return `'${text.slice(0, 40)}' is not a time`;
  const [, y, mo, d, h, mi, s, frac, zone] = iso;
  if (zone === undefined) return `${text} has no time zone: a capture's times are UTC`;
  const fields = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number];
  const [Y, M, D, H, Mi, S] = fields;
  const ms = Date.UTC(Y, M - 1, D, H, Mi, S);
  if (M < 1 || M > 12 || new Date(ms).getUTCDate() !== D || H > 23 || Mi > 59 || S > 59)
    return `${text} is not a date and time`;
  const offset =
    zone === "Z" || zone === "z"
      ? 0
      : (zone.startsWith("-") ? -1 : 1) * (Number(zone.slice(1, 3)) * 3600 + Number(zone.slice(4, 6)) * 60);
  const sec = ms / 1000 - offset;
  if (sec < 0) return `${text} is before 1970`;
  return { sec, nsec: Number((frac ?? "").padEnd(9, "0")), text: v };
}

function before(a: Time, b: Time): boolean {
  return a.sec < b.sec || (a.sec === b.sec && a.nsec < b.nsec);
}

export function formatTime(t: Time): string {
  return `${t.sec}.${String(t.nsec).padStart(9, "0")}`;
}

/** An update ready to apply: a description's text is kept once for all updates that read it (`text`: its digest). */
export interface Prepared {
  readonly update: Update;
  readonly text?: string;
}

/**
 * The updates of a replay, each checked: prepareUpdates() made them. A description's text is
 * kept once however many updates read it, and compiled again when the update is applied (the
 * last few compiled are kept: a description that comes back, as in a flapping route, is not
 * parsed again). So memory grows with the distinct descriptions, not with the updates.
 */
export class PreparedUpdates {
  readonly list: readonly Prepared[];
  readonly #texts: ReadonlyMap<string, string>;
  /** Compiled descriptions by text and allocation, the most recently used last. */
  readonly #compiled = new Map<string, CompiledSpec>();

  constructor(list: readonly Prepared[], texts: ReadonlyMap<string, string>) {
    this.list = list;
    this.#texts = texts;
  }

  get length(): number {
    return this.list.length;
  }

  /** How many description texts are kept: one per distinct text, however many updates read it. */
  get texts(): number {
    return this.#texts.size;
  }

  /** The description texts kept, by their digest (`Prepared.text`): with `list`, what a queue worker is sent. */
  get descriptions(): [string, string][] {
    return [...this.#texts];
  }

  /** The description files the updates read (inputs of the replay: never written over). */
  get files(): string[] {
    return this.list.flatMap((p) => (p.update.kind === "description" ? [p.update.file] : []));
  }

  /** What description update `p` compiles to on top of `before` (identifiers it leaves out keep those of `before`). */
  compile(p: Prepared & { update: { kind: "description" } }, before: CompiledSpec): CompiledSpec {
    return compileText(p.update, this.#texts.get(p.text ?? "") ?? "", before, this.#compiled);
  }
}

/** Compiled descriptions kept (a few: a flapping route alternates two). */
const COMPILED_KEPT = 4;

/**
 * Checks every update in order on a scratch engine holding `compiled` and the input
 * endpoints: descriptions load, compile and install; links and members exist in the
 * description in force at that time. A replay's topology (members, links) stays: its
 * captures are written per link. Throws SpecError for the first update that cannot be applied.
 * `applied` is told after each, with the scratch engine as the update left it (`run --analyze` analyses it there).
 */
export function prepareUpdates(
  updates: readonly Update[],
  compiled: CompiledSpec,
  endpoints: readonly string[],
  applied?: (scratch: Engine) => void,
): PreparedUpdates {
  const scratch = Engine.open({ compiled, endpoints });
  const texts = new Map<string, string>();
  const kept = new Map<string, CompiledSpec>();
  const list = updates.map((update): Prepared => {
    if (update.kind === "description") {
      const text = readAt(update);
      const digest = createHash("sha256").update(text).digest("hex");
      texts.set(digest, text);
      const next = compileText(update, text, scratch.installed.compiled, kept);
      let change: Change;
      try {
        change = scratch.reconcile(next);
      } catch (err) {
        if (err instanceof SpecError)
          throw new SpecError(
            err.errors.map((e) =>
              e.line === 0 && e.path === "" ? new SpecIssue(update.fileRef, e.problem, e.fix) : e,
            ),
          );
        throw err;
      }
      if (change.rebuilt) {
        throw new SpecError([
          new SpecIssue(
            update.fileRef,
            `this description changes what a replay writes its captures ` +
              `for: ${change.topology.slice(0, 3).join(", ")}${change.topology.length > 3 ? ", …" : ""}`,
            "in a replay an update changes tables only (the same networks, members " +
              "and links); take links and members down and up with down: and up:",
          ),
        ]);
      }
      applied?.(scratch);
      return { update, text: digest };
    }
    const found = resolveTarget(scratch.installed.compiled, update.target);
    if ("problem" in found) throw new SpecError([new SpecIssue(update.targetRef, found.problem, found.fix)]);
    scratch.setDown(update.target, update.kind === "down");
    applied?.(scratch);
    return { update };
  });
  return new PreparedUpdates(list, texts);
}

/**
 * The text of an update's description; a file that cannot be read is an error at the update. The
 * path may lead to any file: one with no `networks` key is refused without quoting what it holds.
 */
function readAt(update: Update & { kind: "description" }): string {
  try {
    const text = readDescription(update.file);
    checkNamedKind(
      text,
      update.file,
      "description",
      ["networks"],
      "give the path of a network description, as docs/spec.md describes",
    );
    return text;
  } catch (err) {
    throw atUpdate(update, err);
  }
}

/**
 * Compiles an update's description (its text) on top of `before`: identifiers it leaves out keep
 * those of the description in force before it. `kept` holds the last few, by text and allocation.
 */
function compileText(
  update: Update & { kind: "description" },
  text: string,
  before: CompiledSpec,
  kept: Map<string, CompiledSpec>,
): CompiledSpec {
  const previous = recoverAllocation(before);
  const key = createHash("sha256").update(text).update("\0").update(JSON.stringify(previous)).digest("hex");
  const hit = kept.get(key);
  if (hit !== undefined) {
    kept.delete(key);
    kept.set(key, hit);
    return hit;
  }
  let compiled: CompiledSpec;
  try {
    compiled = compile(parseSpec(text, update.file, { previous }));
  } catch (err) {
    throw atUpdate(update, err);
  }
  kept.set(key, compiled);
  for (const k of kept.keys()) {
    if (kept.size <= COMPILED_KEPT) break;
    kept.delete(k);
  }
  return compiled;
}

/** A problem with a whole description file (it cannot be read, it is empty) is said at the update naming it. */
function atUpdate(update: Update & { kind: "description" }, err: unknown): unknown {
  if (!(err instanceof SpecError)) return err;
  const first = err.errors[0];
  if (err.errors.length === 1 && first !== undefined && first.line === 0 && first.path === "") {
    return new SpecError([new SpecIssue(update.fileRef, `${update.written}: ${first.problem}`, first.fix)]);
  }
  return err;
}

/**
 * The updates of one replay, applied as its packets pass their times: cut() splits each
 * batch at update times and applies the updates due before handing on the next part.
 */
export class UpdateSchedule {
  readonly #prepared: PreparedUpdates;
  readonly #pending: Prepared[];
  readonly #engine: Engine;
  readonly #applied: AppliedUpdate[] = [];

  /**
   * Applies `prepared` on `engine` (which names the trace's rows by the tables in force), from its update `from` on:
   * the ones before are applied already (a queue worker's engine, src/queue/chunk-engine.ts).
   */
  constructor(prepared: PreparedUpdates, engine: Engine, from = 0) {
    this.#prepared = prepared;
    this.#pending = prepared.list.slice(from);
    this.#engine = engine;
  }

  /** Applies the next `n` updates at once, as if packet `packet` had come due for each. */
  applyNext(n: number, packet: number): void {
    for (let i = 0; i < n; i++) this.#apply(packet);
  }

  /** How many updates have been applied (those a packet came after). */
  get appliedCount(): number {
    return this.#applied.length;
  }

  /** Every update, in order: those applied with the packet they came before, then those no packet reached. */
  get applied(): AppliedUpdate[] {
    return [...this.#applied, ...this.#pending.map((p) => record(p.update, null))];
  }

  /** `batch` (its first packet numbered `first`) in parts; the updates due are applied before each part is handed on.
   * */
  *cut(batch: InputBatch, first: number): Generator<InputBatch, void, undefined> {
    let start = 0;
    while (start < batch.count) {
      while (this.#due(batch, start)) this.#apply(first + start);
      const next = this.#pending[0];
      let end = batch.count;
      if (next !== undefined) {
        for (let i = start + 1; i < batch.count; i++) {
          if (!earlier(batch, i, next.update.at)) {
            end = i;
            break;
          }
        }
      }
      yield start === 0 && end === batch.count ? batch : sliceBatch(batch, start, end);
      start = end;
    }
  }

  #due(batch: InputBatch, i: number): boolean {
    const next = this.#pending[0];
    return next !== undefined && !earlier(batch, i, next.update.at);
  }

  #apply(packet: number): void {
    const p = this.#pending.shift();
    if (p === undefined) return;
    const u = p.update;
    if (u.kind === "description") {
      // Checked on the scratch engine: the same steps from the same state cannot be refused here.
      const { topology: _, ...change } = this.#engine.reconcile(
        this.#prepared.compile({ ...p, update: u }, this.#engine.installed.compiled),
      );
      this.#applied.push({ ...record(u, packet), change });
      return;
    }
    const found = this.#engine.setDown(u.target, u.kind === "down");
    this.#applied.push({
      ...record(u, packet),
      ...(found.links.length > 0 ? { links: found.links } : {}),
      ...(found.members.length > 0 ? { members: found.members } : {}),
    });
  }
}

function record(u: Update, packet: number | null): AppliedUpdate {
  const what =
    u.kind === "description" ? { description: u.written } : u.kind === "down" ? { down: u.target } : { up: u.target };
  return { at: u.at.text, time: formatTime(u.at), ...what, packet };
}

/** Whether packet `i` of `batch` is before time `t`. */
function earlier(batch: InputBatch, i: number, t: Time): boolean {
  const sec = batch.tsSec[i] ?? 0;
  return sec < t.sec || (sec === t.sec && (batch.tsNsec[i] ?? 0) < t.nsec);
}
