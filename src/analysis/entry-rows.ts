// Table entries that are no row of the description, as the analysis reads
// rows: a P4Runtime controller's route, a `serve --commands` insert of a row
// the description never had. The ledger (src/control/ledger.ts) holds every
// entry, whoever wrote it; an entry is a description row while it has that
// row's match and action, and the rest are read back here from their key
// vectors and action (the inverse of src/control/header-table.ts): each field's
// value and mask, or bounds, as the pattern the description would write, the
// in-link, the action, and the priority the data plane orders them by. The
// entries of transmit and send tables are read the same way (the inverse of
// src/control/compile.ts' compileTransmit and compileSend): the out-link or
// session the key holds, and the way out or the header pushed. A member the
// description writes no transmit table for has the compiler's defaults (every
// out-link physical): while the table holds just those it is left as it is, and
// once a controller changed it every entry it holds is read.

import type { CompiledSpec, CompiledTable } from "../control/compiled.js";
import { actionKey, entryKey, type Installed, type Ledger, type LedgerEntry } from "../control/ledger.js";
import type { Action, InLink, Pattern, RowSpec } from "../description/types.js";
import { LINK_SELF, LINK_SHARED } from "../wasm/abi.js";
import type { EntryAction, EntryMatch } from "../wasm/tables.js";
import { IN_LINK_FIELD, type KeyLayout } from "../wire/designs.js";

/** An entry beyond the description's rows: what the ledger holds. */
export interface OtherEntry {
  readonly match: EntryMatch;
  readonly action: EntryAction;
}

/** Per table id, the entries that are no row of the description (tables with none are left out); for a transmit
 * table the description does not write, every entry, once they are not the defaults (an empty list: none left). */
export type OtherEntries = ReadonlyMap<number, readonly OtherEntry[]>;

/** An entry as a row: its key (what identifies it in its table, with its action), the row, its priority. */
export interface OtherRow {
  readonly key: string;
  readonly row: RowSpec;
  /** The data plane's priority (ternary, range, optional tables: higher wins); 0 for the others. */
  readonly priority: number;
}

const ROLES = new Set(["acquire", "forward", "receive", "transmit", "send"]);

/** What otherEntries found of each table (the ledger's own entries, not copies), at which of the ledger's versions of
 * it, for which description. */
export interface OthersCache {
  compiled?: CompiledSpec;
  readonly tables: Map<number, { readonly version: number; readonly list: readonly LedgerEntry[] | undefined }>;
}

/** The entries of the tables that `ledger` holds and no row of the description `installed` stands for; `cache`
 * keeps each table's until the ledger changes it (a write reads again only the tables it wrote). */
export function otherEntries(
  installed: Pick<Installed, "compiled" | "entries">,
  ledger: Ledger,
  cache: OthersCache = { tables: new Map() },
): OtherEntries {
  const compiled = installed.compiled;
  const out = new Map<number, OtherEntry[]>();
  if (cache.compiled !== compiled) cache.tables.clear();
  cache.compiled = compiled;
  for (const t of compiled.tables) {
    if (!ROLES.has(t.role)) continue;
    const version = ledger.tableVersion(t.id);
    let known = cache.tables.get(t.id);
    if (known === undefined || known.version !== version) {
      const rows = installed.entries.get(t.id) ?? [];
      known = { version, list: defaulted(t) ? changedDefaults(t, ledger, rows) : others(t, ledger, rows) };
      cache.tables.set(t.id, known);
    }
    if (known.list !== undefined && (known.list.length > 0 || defaulted(t)))
      out.set(
        t.id,
        known.list.map((e) => ({ match: e.match, action: e.action })),
      );
  }
  return out;
}

/** A transmit table the description does not write: the compiler's defaults stand for it. */
const defaulted = (t: CompiledTable): boolean => t.role === "transmit" && t.spec === undefined;

/** Every entry of a defaulted table `t`, unless it holds just its defaults (`rows`: the entry of each). */
function changedDefaults(t: CompiledTable, ledger: Ledger, rows: readonly number[]): LedgerEntry[] | undefined {
  const held = ledger.entries(t.id);
  const defaults = rows.filter((e) => e >= 0).length;
  return defaults === rows.length && held.size === defaults ? undefined : [...held.values()];
}

/** The entries of `t` but those of its rows (`rows`: the entry of each, as the ledger's installed() gives them). */
function others(t: CompiledTable, ledger: Ledger, rows0: readonly number[]): LedgerEntry[] {
  const held = ledger.entries(t.id);
  if (held.size === 0) return [];
  const rows = new Set(rows0.filter((e) => e >= 0));
  if (held.size === rows.size) return [];
  return [...held.values()].filter((e) => !rows.has(e.entry));
}

const big = (b: Uint8Array | undefined, offset: number, len: number): bigint => {
  let v = 0n;
  for (let i = 0; i < len; i++) v = (v << 8n) | BigInt(b?.[offset + i] ?? 0);
  return v;
};
const ones = (bits: number): bigint => (1n << BigInt(bits)) - 1n;

const NOWHERE = { file: "", path: "", line: 0, column: 0 };
const NO_MATCH: ReadonlyMap<string, Pattern> = new Map();

/** Entry `e` of table `t` as a row of the description would say it; undefined for a transmit or send entry whose action
 * is none of its table's (the data plane drops there, as it does on a miss). */
export function otherRow(compiled: CompiledSpec, t: CompiledTable, e: OtherEntry): OtherRow | undefined {
  if (t.role === "transmit" || t.role === "send") return keyedOther(compiled, t, e);
  const member = compiled.members[t.member];
  const layout = compiled.networks[member?.network ?? -1]?.layout;
  const match = new Map<string, Pattern>();
  let inLink: InLink | undefined;
  for (const f of t.fields) {
    const slot = layout?.slots.find((s) => s.field.name === f.name);
    const bits = slot?.field.bits ?? f.len * 8;
    const p = pattern(e.match, f.offset, f.len, bits, f.kind === "range");
    if (p === undefined) continue;
    if (f.name === IN_LINK_FIELD.name) {
      const v = p.kind === "exact" ? Number(p.value) : -1;
      inLink = v === LINK_SELF ? "self" : v === LINK_SHARED ? "shared" : v;
    } else match.set(f.name, p);
  }
  const row: RowSpec = {
    ...(inLink === undefined ? {} : { in: inLink }),
    match,
    action: action(compiled, e.action),
    at: t.spec?.at ?? NOWHERE,
  };
  return { key: `${entryKey(t, e.match)}/${actionKey(e.action)}`, row, priority: e.match.priority ?? 0 };
}

/** One field's part of a key as a pattern; undefined when it matches every value. */
function pattern(m: EntryMatch, offset: number, len: number, bits: number, range: boolean): Pattern | undefined {
  const all = ones(bits);
  if (range) {
    const lo = big(m.lo, offset, len) & all;
    const hi = big(m.hi, offset, len) & all;
    if (lo === 0n && hi === all) return undefined;
    return lo === hi ? { kind: "exact", value: lo } : { kind: "range", lo, hi };
  }
  const mask = big(m.mask, offset, len) & all;
  const value = big(m.value, offset, len) & mask;
  if (mask === 0n) return undefined;
  if (mask === all) return { kind: "exact", value };
  const host = ~mask & all;
  // A prefix mask leaves out only bits below those it keeps.
  if ((host & (host + 1n)) === 0n) return { kind: "prefix", value, len: bits - host.toString(2).length };
  return { kind: "ternary", value, mask };
}

function action(compiled: CompiledSpec, a: EntryAction): Action {
  switch (a.name) {
    case "out": {
      const data = a.data ?? new Uint8Array(0);
      const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
      return { kind: "out", outLinks: Array.from({ length: a.count ?? 0 }, (_, i) => view.getUint16(i * 2, true)) };
    }
    case "external-link":
      return { kind: "link", network: networkOf(compiled, a.arg), ident: a.arg2 ?? 0, at: NOWHERE };
    case "forward":
    case "receive":
    case "both":
    case "drop":
    case "deliver":
    case "shared-acquire":
    case "shared-forward":
      return { kind: a.name };
    default:
      // Not an action of a header table (the data plane refuses it there): a drop, as the data plane's guard does.
      return { kind: "drop" };
  }
}

/** The name of member `index`'s network ("" for no member). */
const networkOf = (compiled: CompiledSpec, index: number | undefined): string =>
  compiled.networks[compiled.members[index ?? -1]?.network ?? -1]?.name ?? "";

/** A transmit entry (out-link → physical, or a session of the underlay member `arg`) or a send entry (session → push
 * the header its key vector holds) as the row that compiles to it. */
function keyedOther(compiled: CompiledSpec, t: CompiledTable, e: OtherEntry): OtherRow | undefined {
  const f = t.fields[0];
  const ident = Number(big(e.match.value, f?.offset ?? 0, f?.len ?? 0));
  const a = e.action;
  const at = t.spec?.at ?? NOWHERE;
  let row: RowSpec | undefined;
  if (t.role === "transmit" && a.name === "physical")
    row = { out: ident, match: NO_MATCH, action: { kind: a.name }, at };
  else if (t.role === "transmit" && a.name === "external-session") {
    const action = { kind: "session", network: networkOf(compiled, a.arg), session: a.arg2 ?? 0, at } as const;
    row = { out: ident, match: NO_MATCH, action, at };
  } else if (t.role === "send" && a.name === "push") {
    const layout = compiled.networks[compiled.members[t.member]?.network ?? -1]?.layout;
    row = { session: ident, match: NO_MATCH, action: { kind: "push", header: pushed(layout, a.data) }, at };
  }
  return row === undefined ? undefined : { key: `${entryKey(t, e.match)}/${actionKey(a)}`, row, priority: 0 };
}

/** The header a push's key vector writes: every writable field of the design, in its order. */
function pushed(layout: KeyLayout | undefined, data: Uint8Array | undefined): Map<string, bigint> {
  const header = new Map<string, bigint>();
  for (const slot of layout?.slots.slice(1) ?? [])
    if (slot.field.readOnly !== true)
      header.set(slot.field.name, big(data, slot.offset, slot.len) & ones(slot.field.bits));
  return header;
}
