// Installing a compiled description into a data plane: tables first (one
// all-or-nothing write batch each), then members, links and endpoints.

import { SpecIssue } from "../description/problems.js";
import { INJECT_KINDS, LINK_MODES, TABLE_ROLES } from "../wasm/abi.js";
import type { DataPlane } from "../wasm/module.js";
import { Tables } from "../wasm/tables.js";
import type { CompiledSpec, CompiledTable } from "./compiled.js";
import { type Installed, Ledger } from "./ledger.js";

export type { Installed } from "./ledger.js";

/** Where input packets enter, resolved: see resolveEndpoint in ./endpoints.ts. */
export interface Injection {
  readonly kind: (typeof INJECT_KINDS)[number];
  readonly member: number;
  /** kind session: the session id. */
  readonly session: number;
  /** kind link: the link index. */
  readonly link: number;
}

export function install(dp: DataPlane, compiled: CompiledSpec, injections: readonly Injection[]): Installed {
  return installLedger(dp, compiled, injections).installed();
}

/**
 * Installs `compiled` and returns the ledger of what its tables hold: each table's rows as the
 * description's (none with `empty`: a controller installs them). Throws the row a table refuses.
 */
export function installLedger(
  dp: DataPlane,
  compiled: CompiledSpec,
  injections: readonly Injection[],
  options: { readonly empty?: boolean } = {},
): Ledger {
  const ledger = new Ledger(new Tables(dp), compiled);
  for (const t of compiled.tables) {
    ledger.create(t);
    if (options.empty === true) continue;
    const result = ledger.write(
      t.rows.map((r) => ({ op: "insert" as const, table: t, match: r.match, action: r.action })),
      "description",
    );
    if (!result.ok) throw rowError(t, result.index, result.error);
  }
  installTopology(dp, compiled, injections);
  return ledger;
}

/** Members, links and endpoints, pointing at tables already created with the ids `compiled` gives them. Replaces any
 * topology before. */
export function installTopology(dp: DataPlane, compiled: CompiledSpec, injections: readonly Injection[]): void {
  const x = dp.exports;
  x.topologyReset(compiled.members.length, compiled.links.length, injections.length);
  for (const m of compiled.members) {
    const net = compiled.networks[m.network];
    const flags = net?.spec.decrementTtl === true ? 1 : 0;
    x.memberSet(m.index, m.network, m.machine, net?.spec.design.id ?? 0, flags, m.nOutLinks);
    for (const role of TABLE_ROLES) {
      const t = m.tables[role];
      x.memberSetTable(m.index, TABLE_ROLES.indexOf(role), t === undefined ? -1 : t.id);
    }
  }
  for (const l of compiled.links) {
    const design = compiled.networks[l.network]?.spec.design.id ?? 0;
    x.linkSet(
      l.index,
      l.network,
      design,
      l.sender,
      l.senderOutLink,
      LINK_MODES.indexOf(l.mode),
      l.receivers.length,
      l.recorded ? 1 : 0,
    );
    l.receivers.forEach((r, k) => x.linkSetReceiver(l.index, k, r.member, r.inLink));
  }
  for (const p of compiled.sharedOutLinks) x.memberSetOutLink(p.member, p.outLink, p.link);
  injections.forEach((inj, i) => x.endpointSet(i, INJECT_KINDS.indexOf(inj.kind), inj.member, inj.session, inj.link));
}

/** A table refused a row: say which row, in the description's words. */
export function rowError(t: CompiledTable, index: number, error: string): SpecIssue {
  const row = t.rows[index];
  const at = row?.at ?? t.spec?.at ?? { file: "", path: "", line: 0, column: 0 };
  switch (error) {
    case "DuplicateEntry": {
      const earlier = t.rows.findIndex((r, k) => k < index && sameMatch(r.match, row?.match));
      const first = earlier >= 0 ? `row ${earlier} (${t.rows[earlier]?.at?.path ?? ""})` : "an earlier row";
      return new SpecIssue(
        at,
        `this ${t.role} row matches exactly what ${first} matches`,
        t.role === "forward" ? "put every out-link in one row: out: [1, 2]" : "remove one of the two rows",
      );
    }
    case "TableFull":
      return new SpecIssue(
        at,
        `the ${t.role} table holds ${t.capacity} rows and this is one more`,
        `raise capacity to at least ${t.rows.length}`,
      );
    default:
      return new SpecIssue(at, `the data plane refused this ${t.role} row: ${error}`, "");
  }
}

function sameMatch(
  a: CompiledTable["rows"][number]["match"] | undefined,
  b: CompiledTable["rows"][number]["match"] | undefined,
): boolean {
  if (a === undefined || b === undefined) return false;
  const eq = (x: Uint8Array | undefined, y: Uint8Array | undefined): boolean =>
    (x === undefined) === (y === undefined) && (x === undefined || y === undefined || Buffer.compare(x, y) === 0);
  return eq(a.value, b.value) && eq(a.mask, b.mask) && eq(a.lo, b.lo) && eq(a.hi, b.hi);
}
