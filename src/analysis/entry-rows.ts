// Table entries that are no row of the description, as the analysis reads
// rows: a P4Runtime controller's route, a `serve --commands` insert of a row
// the description never had. The ledger (src/control/ledger.ts) holds every
// entry, whoever wrote it; an entry is a description row while it has that
// row's match and action, and the rest are read back here from their key
// vectors and action (the inverse of src/control/header-table.ts): each field's
// value and mask, or bounds, as the pattern the description would write, the
// in-link, the action, and the priority the data plane orders them by.

import type { CompiledSpec, CompiledTable } from "../control/compiled.js";
import { actionKey, entryKey, type Installed, type Ledger, type LedgerEntry } from "../control/ledger.js";
import type { Action, InLink, Pattern, RowSpec } from "../description/types.js";
import { LINK_SELF, LINK_SHARED } from "../wasm/abi.js";
import type { EntryAction, EntryMatch } from "../wasm/tables.js";
import { IN_LINK_FIELD } from "../wire/designs.js";

/** An entry beyond the description's rows: what the ledger holds. */
export interface OtherEntry {
  readonly match: EntryMatch;
  readonly action: EntryAction;
}

/** Per header table id, the entries that are no row of the description (tables with none are left out). */
export type OtherEntries = ReadonlyMap<number, readonly OtherEntry[]>;

/** An entry as a row: its key (what identifies it in its table, with its action), the row, its priority. */
export interface OtherRow {
  readonly key: string;
  readonly row: RowSpec;
  /** The data plane's priority (ternary, range, optional tables: higher wins); 0 for the others. */
  readonly priority: number;
}

const HEADER_ROLES = new Set(["acquire", "forward", "receive"]);

/** What otherEntries found of each table (the ledger's own entries, not copies), at which of the ledger's versions of
 * it, for which description. */
export interface OthersCache {
  compiled?: CompiledSpec;
  readonly tables: Map<number, { readonly version: number; readonly list: readonly LedgerEntry[] }>;
}

/** The entries of the header tables that `ledger` holds and no row of the description `installed` stands for; `cache`
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
    if (!HEADER_ROLES.has(t.role)) continue;
    const version = ledger.tableVersion(t.id);
    let known = cache.tables.get(t.id);
    if (known === undefined || known.version !== version) {
      known = { version, list: others(t, ledger, installed.entries.get(t.id) ?? []) };
      cache.tables.set(t.id, known);
    }
    if (known.list.length > 0)
      out.set(
        t.id,
        known.list.map((e) => ({ match: e.match, action: e.action })),
      );
  }
  return out;
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

/** Entry `e` of table `t` as a row of the description would say it. */
export function otherRow(compiled: CompiledSpec, t: CompiledTable, e: OtherEntry): OtherRow {
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
    at: t.spec?.at ?? { file: "", path: "", line: 0, column: 0 },
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
    case "external-link": {
      const overlay = compiled.members[a.arg ?? -1];
      const network = compiled.networks[overlay?.network ?? -1]?.name ?? "";
      return { kind: "link", network, ident: a.arg2 ?? 0, at: { file: "", path: "", line: 0, column: 0 } };
    }
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
