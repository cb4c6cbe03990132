// A description loaded again after an edit, at the cost of what the edit touched. The whole load (every network's
// members, links and rows checked, every member compiled) is kept with the text it read; an edit that stays inside one
// member's tables in a network without intents or shared links, and moves no line outside them, has that member's
// tables read again from its lines alone (the same reader, the schema, ./tables.ts checkTables against what the whole
// load left: test/control/reload.test.ts holds the result to a whole load's, byte for byte) and only its changed
// acquire, forward and receive tables compiled again; anything else, and anything the member's check finds wrong, is
// loaded whole, so that what is said about it is the whole load's.

import type { NetworkContext } from "../description/context.js";
import { parseSpec, type TableContext } from "../description/load.js";
import { type Locator, type Path, Problems, type SpecIssue } from "../description/problems.js";
import { quickSource } from "../description/quick-source.js";
import type { RawMemberTables, RawSpec } from "../description/raw.js";
import { readDescription } from "../description/read.js";
import { checkSchema, SCHEMA_FILE } from "../description/schema.js";
import type { ParsedSource } from "../description/source.js";
import { checkTables } from "../description/tables.js";
import type { Allocation, MemberTables, NetworkSpec, Spec, TableSpec } from "../description/types.js";
import { compile } from "./compile.js";
import type { CompiledMember, CompiledNetwork, CompiledRow, CompiledSpec, CompiledTable } from "./compiled.js";
import { compileHeaderTable } from "./header-table.js";

/** The keys of a network that hold no intent (as src/api/quick-rows.ts): with any other, the network loads whole. */
const PLAIN_KEYS: ReadonlySet<string> = new Set(["header", "ttl", "members", "links", "tables", "nonlocal"]);

/** The roles whose rows are their member's alone (no layering, no rows of others to agree with). */
const OWN_ROLES = ["acquire", "forward", "receive"] as const;

export interface Reloaded {
  readonly spec: Spec;
  readonly compiled: CompiledSpec;
  /** The members whose tables were compiled again, by index; undefined when everything was (a whole load). */
  readonly members: ReadonlySet<number> | undefined;
}

/** Work done, for tests that budget it: whole loads, and members whose tables were read and compiled alone. */
export interface ReloadWork {
  loads: number;
  members: number;
}

/** A member's tables in the text: the line (1-based) and column of its key. */
interface Block {
  readonly network: string;
  readonly member: string;
  readonly line: number;
  readonly column: number;
}

interface Loaded {
  readonly text: string;
  /** Offsets of the text's lines. */
  readonly starts: readonly number[];
  readonly spec: Spec;
  readonly compiled: CompiledSpec;
  /** Where each member's tables start, in the order of the text; empty when no edit may be read alone. */
  readonly blocks: readonly Block[];
  /** The whole load's data (a member's entry and its network's header, which no edit read alone changes). */
  readonly raw: RawSpec;
  readonly contexts: ReadonlyMap<string, TableContext>;
}

export class Reloader {
  readonly #file: string;
  #loaded: Loaded | undefined;
  readonly work: ReloadWork = { loads: 0, members: 0 };
  /** For a whole load: the allocation whose identifiers a description leaves out keep (seed 000), such as
   * recoverAllocation() of what is installed; set once there is something installed. */
  previous: (() => Allocation) | undefined;

  constructor(file: string) {
    this.#file = file;
  }

  /** The text last loaded, if any. */
  get text(): string | undefined {
    return this.#loaded?.text;
  }

  /** The description last loaded, compiled, if any. */
  get compiled(): CompiledSpec | undefined {
    return this.#loaded?.compiled;
  }

  /**
   * The description as `text` (the file's) now reads it: undefined when that is what was loaded last. Throws the whole
   * load's SpecError for a text that does not load (the one loaded before stays). `quiet`: a whole load's notes (a key
   * in its old name) not said, for a text that was loaded and said already.
   */
  load(text: string, quiet = false): Reloaded | undefined {
    const was = this.#loaded;
    if (was?.text === text) return undefined;
    return (was === undefined ? undefined : this.#edited(was, text)) ?? this.#whole(quiet);
  }

  /** The file read and loaded whole (as a first load): throws its SpecError or InputError. */
  loadWhole(): Reloaded {
    return this.#whole(false);
  }

  /** The file read and loaded whole. */
  #whole(quiet: boolean): Reloaded {
    this.work.loads++;
    const contexts = new Map<string, TableContext>();
    let source: ParsedSource | undefined;
    const text = readDescription(this.#file);
    const previous = this.previous?.();
    const spec = parseSpec(text, this.#file, {
      ...(previous !== undefined ? { previous } : {}),
      tableContext: (c) => contexts.set(c.network, c),
      parsed: (s) => (source = s),
      ...(quiet ? { warn: () => {} } : {}),
    });
    const compiled = compile(spec);
    const raw = source?.data as RawSpec | undefined;
    const blocks = source === undefined || raw === undefined ? [] : blocksOf(raw, spec, source.locator);
    const starts = lineStarts(text);
    this.#loaded = { text, starts, spec, compiled, blocks, raw: raw ?? { networks: {} }, contexts };
    return { spec, compiled, members: undefined };
  }

  /** The edit read alone, when it is one member's tables' and moves no line; else undefined. */
  #edited(was: Loaded, text: string): Reloaded | undefined {
    const at = editedBlock(was, text);
    if (at === undefined) return undefined;
    const rawTables = readAlone(at.block, at.lines);
    if (rawTables === undefined) return undefined;
    const tables = this.#checked(was, at.block, rawTables);
    if (tables === undefined) return undefined;
    const next = recompiled(was, at.block, tables);
    if (next === undefined) return undefined;
    this.work.members++;
    // Lines keep their numbers; those after the edited ones move by what it added.
    const delta = text.length - was.text.length;
    const starts = was.starts.map((s) => (s > at.end ? s + delta : s));
    const fromEdit = lineStarts(at.lines).slice(at.block.line);
    fromEdit.forEach((s, i) => (starts[at.block.line + i] = at.lineStart + s - (at.block.line - 1)));
    this.#loaded = { ...was, text, starts, spec: next.compiled.spec, compiled: next.compiled };
    return { spec: next.compiled.spec, compiled: next.compiled, members: new Set([next.member]) };
  }

  /** The member's tables read as the whole load reads them (the schema, then checkTables); undefined for a problem. */
  #checked(was: Loaded, b: Block, read: { value: unknown; source: ParsedSource }): MemberTables | undefined {
    const net = was.raw.networks[b.network];
    const context = was.contexts.get(b.network);
    const member = net?.members[b.member];
    if (net === undefined || context === undefined || member === undefined) return undefined;
    const inside = (path: Path): Path | undefined =>
      path[0] === "networks" && path[1] === b.network && path[2] === "tables" ? path.slice(3) : undefined;
    const locator: Locator = {
      locate: (path, key) => {
        const p = inside(path);
        return p === undefined ? { line: 0, column: 0 } : read.source.locator.locate(p, key);
      },
    };
    const problems = new Problems(this.#file, locator);
    const tables = { [b.member]: read.value } as Record<string, RawMemberTables>;
    const doc = { networks: { [b.network]: { header: net.header, members: { [b.member]: member }, tables } } };
    if (checkSchema(doc, problems, SCHEMA_FILE).length > 0 || problems.count > 0) return undefined;
    const ctx: NetworkContext = {
      problems,
      network: b.network,
      path: ["networks", b.network],
      design: context.design,
      value: (path, v) => {
        const p = typeof v === "number" ? inside(path) : undefined;
        return p === undefined ? v : (read.source.sourceText(p) ?? v);
      },
      schemaError: () => false,
    };
    const checked = checkTables(ctx, context.design, tables, context.topology, context.elsewhere).get(b.member);
    return problems.count > 0 || problems.notes.length > 0 ? undefined : checked;
  }
}

/** Where each network's member tables start in the text; none when a network has intents or shared links, or the
 * tables are not written as a block map (a key at its line's start). */
function blocksOf(raw: RawSpec, spec: Spec, locator: Locator): Block[] {
  if (spec.networks.some((n) => n.intents !== undefined || n.links.some((l) => l.shared !== undefined))) return [];
  const blocks: Block[] = [];
  for (const [network, net] of Object.entries(raw.networks)) {
    if (Object.keys(net).some((k) => !PLAIN_KEYS.has(k))) return [];
    for (const member of Object.keys(net.tables ?? {})) {
      const { line, column } = locator.locate(["networks", network, "tables", member], true);
      blocks.push({ network, member, line, column });
    }
  }
  return blocks.sort((a, b) => a.line - b.line);
}

/** Offsets of each line's start. */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return starts;
}

/** Whether a line (from `start`) is blank or a comment, or else indented more than `indent`. */
function inside(text: string, start: number, indent: number): boolean {
  let i = start;
  while (text.charCodeAt(i) === 32) i++;
  const c = text[i];
  return c === undefined || c === "\n" || c === "#" || i - start > indent;
}

/**
 * The member's tables the edit from `was.text` to `text` stays inside, and their new lines (every line before them
 * blank, so that each keeps its number); undefined when the edit reaches past them, or adds or removes a line.
 */
function editedBlock(
  was: Loaded,
  text: string,
): { block: Block; lines: string; lineStart: number; end: number } | undefined {
  const old = was.text;
  const { p, q } = common(old, text);
  const starts = was.starts;
  const line = upperBound(starts, p); // 1-based line of the edit's first character
  let k = -1;
  for (let lo = 0, hi = was.blocks.length - 1; lo <= hi;) {
    const mid = (lo + hi) >> 1;
    if ((was.blocks[mid] as Block).line <= line) ((k = mid), (lo = mid + 1));
    else hi = mid - 1;
  }
  const block = was.blocks[k];
  if (block === undefined) return undefined;
  const lineStart = starts[block.line - 1] ?? 0;
  const keyAt = lineStart + block.column - 1;
  const indent = block.column - 1;
  if (old.slice(lineStart, keyAt).trim() !== "" || !old.startsWith(`${block.member}:`, keyAt)) return undefined;
  if (p <= keyAt + block.member.length) return undefined;
  let end = old.length;
  for (let l = block.line; l < starts.length; l++) {
    const s = starts[l] as number;
    if (!inside(old, s, indent)) {
      end = s;
      break;
    }
  }
  // The edit ends inside the block, short of the newline before the next key (which would join their lines).
  if (p > end || old.length - q > end || (end < old.length && old.length - q === end)) return undefined;
  const newEnd = end + text.length - old.length;
  const before = old.slice(lineStart, end);
  const after = text.slice(lineStart, newEnd);
  if (lineCount(before) !== lineCount(after)) return undefined;
  const afterStarts = lineStarts(after);
  if (afterStarts.slice(1).some((s) => s < after.length && !inside(after, s, indent))) return undefined;
  return { block, lines: "\n".repeat(block.line - 1) + after, lineStart, end };
}

/** The length of the start the texts have in common, and of the end (not overlapping it). */
function common(a: string, b: string): { p: number; q: number } {
  const n = Math.min(a.length, b.length);
  let p = 0;
  // Whole chunks first: a string compared at memory speed, not a character at a time.
  while (p + CHUNK <= n && a.slice(p, p + CHUNK) === b.slice(p, p + CHUNK)) p += CHUNK;
  while (p < n && a.charCodeAt(p) === b.charCodeAt(p)) p++;
  let q = 0;
  while (
    q + CHUNK <= n - p &&
    a.slice(a.length - q - CHUNK, a.length - q) === b.slice(b.length - q - CHUNK, b.length - q)
  )
    q += CHUNK;
  while (q < n - p && a.charCodeAt(a.length - 1 - q) === b.charCodeAt(b.length - 1 - q)) q++;
  return { p, q };
}

const CHUNK = 4096;

/** The number of entries of sorted `xs` at most `x`. */
function upperBound(xs: readonly number[], x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((xs[mid] as number) <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function lineCount(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** The member's tables as the quick reader reads their lines: one key, the member's; undefined for anything else. */
function readAlone(b: Block, lines: string): { value: unknown; source: ParsedSource } | undefined {
  const source = quickSource(lines);
  const data = source?.data;
  if (source === undefined || typeof data !== "object" || data === null || Array.isArray(data)) return undefined;
  const keys = Object.keys(data);
  if (keys.length !== 1 || keys[0] !== b.member) return undefined;
  return { value: (data as Record<string, unknown>)[b.member], source };
}

/**
 * The compiled description with the member's changed own tables compiled again, everything else as it was (new
 * records where anything under them changed, none changed in place); undefined when the edit reaches what only a
 * whole load compiles: a table added or taken away, transmit or send rows, rows that hand packets to other networks.
 */
function recompiled(
  was: Loaded,
  b: Block,
  tables: MemberTables,
): { compiled: CompiledSpec; member: number } | undefined {
  const before = was.compiled;
  const ni = before.networks.findIndex((n) => n.name === b.network);
  const net = before.networks[ni];
  const m = before.members.find((x) => x.network === ni && x.key === b.member);
  const old = net?.spec.tables.get(b.member);
  if (net === undefined || m === undefined || old === undefined) return undefined;
  if (!same(old.transmit, tables.transmit) || !same(old.send, tables.send)) return undefined;
  const spec: NetworkSpec = { ...net.spec, tables: new Map(net.spec.tables).set(b.member, tables) };
  const network: CompiledNetwork = { ...net, spec };
  const memberTables: Partial<Record<string, CompiledTable>> = { ...m.tables };
  const compiledTables = [...before.tables];
  let elsewhere = false;
  const across = (): number => {
    elsewhere = true;
    return -1;
  };
  for (const role of OWN_ROLES) {
    const [o, t, c] = [old[role], tables[role], m.tables[role]];
    if ((o === undefined) !== (t === undefined) || (c === undefined) !== (t === undefined)) return undefined;
    if (t === undefined || c === undefined || same(o, t)) continue;
    if (!ownRows(o) || !ownRows(t) || before.tables[c.id] !== c) return undefined;
    const problems: SpecIssue[] = [];
    const fresh = compileHeaderTable(c.id, m.index, network, t, across, across, problems);
    if (problems.length > 0 || elsewhere) return undefined;
    // A row that compiles as before keeps its record: what was built from it (its device entry) is kept too.
    const table = { ...fresh, rows: fresh.rows.map((r, i) => keptRow(r, c.rows[i])) };
    memberTables[role] = table;
    compiledTables[c.id] = table;
  }
  const member: CompiledMember = { ...m, tables: memberTables };
  const networks = before.networks.map((n, i) => (i === ni ? network : n));
  const fullSpec: Spec = { ...before.spec, networks: before.spec.networks.map((n, i) => (i === ni ? spec : n)) };
  const compiled: CompiledSpec = {
    ...before,
    spec: fullSpec,
    networks,
    members: before.members.map((x) => (x === m ? member : x)),
    tables: compiledTables,
    maxFanout: fanout(before, compiledTables, m, member),
  };
  return { compiled, member: m.index };
}

/** The old row where the new one compiles to the same (its record kept), else the new one. */
function keptRow(r: CompiledRow, old: CompiledRow | undefined): CompiledRow {
  if (old === undefined || r.text !== old.text || r.row !== old.row || r.at?.line !== old.at?.line) return r;
  if (!same(r.at, old.at) || !sameBytes(r.match.value, old.match.value)) return r;
  const [m, n] = [r.match, old.match];
  const [x, y] = [r.action, old.action];
  const matches =
    sameBytes(m.mask, n.mask) && sameBytes(m.lo, n.lo) && sameBytes(m.hi, n.hi) && m.priority === n.priority;
  const acts =
    x.name === y.name && x.count === y.count && x.arg === y.arg && x.arg2 === y.arg2 && sameBytes(x.data, y.data);
  const outs = r.outLinks.length === old.outLinks.length && r.outLinks.every((o, i) => o === old.outLinks[i]);
  // Every field compared: a field added to CompiledRow, EntryMatch or EntryAction is to be compared here too.
  return matches && acts && outs && Object.keys(r).length === 6 ? old : r;
}

function sameBytes(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** compile()'s maxFanout with the member's tables replaced: looked for in all rows only when they held the most. */
function fanout(
  before: CompiledSpec,
  tables: readonly CompiledTable[],
  was: CompiledMember,
  now: CompiledMember,
): number {
  const most = (m: CompiledMember): number =>
    Math.max(0, ...OWN_ROLES.flatMap((role) => (m.tables[role]?.rows ?? []).map((r) => r.outLinks.length)));
  const [old, next] = [most(was), most(now)];
  if (next >= before.maxFanout - 1) return next + 1;
  if (old < before.maxFanout - 1) return before.maxFanout;
  let max = Math.max(1, ...before.links.map((l) => l.receivers.length));
  for (const t of tables) for (const r of t.rows) max = Math.max(max, r.outLinks.length);
  return max + 1;
}

/** Whether a table's rows are its member's alone: none hands packets to another network or a shared member. */
function ownRows(t: TableSpec | undefined): boolean {
  const elsewhere = (kind: string): boolean => kind === "link" || kind === "session" || kind.startsWith("shared");
  return (t?.rows ?? []).every((r) => r.in !== "shared" && !elsewhere(r.action.kind));
}

/** Whether two checked values (rows, tables: records, lists, maps, bigints, bytes) are the same. */
export function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || ArrayBuffer.isView(a)) {
    const x = a as ArrayLike<unknown>;
    const y = b as ArrayLike<unknown>;
    if (!(Array.isArray(b) || ArrayBuffer.isView(b)) || x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!same(x[i], y[i])) return false;
    return true;
  }
  if (a instanceof Map || a instanceof Set) {
    if (!(b instanceof Map || b instanceof Set) || a.size !== b.size) return false;
    return same([...a.entries()], [...b.entries()]);
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k, i) => kb[i] === k && same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
