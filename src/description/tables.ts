// A member's five tables (seed §2.5, §3.1; DESIGN.md §1), checked against the
// member's own links and the network's header design, and turned into rows.
// Rows are kept in the order written: the first row has the highest priority.

import { excerpt } from "../errors.js";
import { type MatchKind, PORT_MAX, TABLE_ROLES, type TableRole } from "../wasm/abi.js";
import type { DesignDef, FieldDef } from "../wire/designs.js";
import { DEFAULT_HOP_LIMIT, hopLimitField, type NetworkContext } from "./context.js";
import { parseExact, parsePattern } from "./patterns.js";
import type { Path } from "./problems.js";
import type { RawAcquireRow, RawForwardRow, RawMemberTables, RawReceiveRow, RawSendRow, RawTable, RawTransmitRow, RawValues } from "./raw.js";
import { didYouMean } from "./suggest.js";
import { describePorts, type Ports, type Topology } from "./topology.js";
import type { Action, InLink, MemberSpec, MemberTables, Pattern, RowSpec, TableSpec } from "./types.js";

/** Roles keyed by a link or session identifier alone: exact match only. */
const KEYED_BY_ID: ReadonlySet<TableRole> = new Set(["transmit", "send"]);

export function checkTables(ctx: NetworkContext, design: DesignDef, tables: Readonly<Record<string, RawMemberTables>>, topology: Topology): Map<string, MemberTables> {
  const members = new Map(topology.members.map((m) => [m.key, m]));
  const result = new Map<string, MemberTables>();
  if (ctx.schemaError(["tables"], true)) return result;
  for (const [key, raw] of Object.entries(tables)) {
    if (ctx.schemaError(["tables", key], true)) continue;
    const path = [...ctx.path, "tables", key];
    const member = members.get(key);
    const ports = topology.ports.get(key);
    if (member === undefined || ports === undefined) {
      const keys = [...members.keys()];
      ctx.problems.add(path, `no member '${excerpt(key)}' in network ${ctx.network}`, `${didYouMean(key, keys)}tables are keyed by member; members: ${keys.join(", ")}`, true);
      continue;
    }
    // With links left out, an unknown identifier may be one of theirs: leave in/out unchecked rather than guess.
    const t = new MemberTableChecker(ctx, design, member, topology.complete ? ports : undefined);
    const out: MemberTables = {};
    for (const role of TABLE_ROLES) {
      const table = raw[role];
      if (table !== undefined && !ctx.schemaError(["tables", key, role])) out[role] = t.table(role, table as RawTable<unknown>, [...path, role]);
    }
    result.set(key, out);
  }
  return result;
}

class MemberTableChecker {
  readonly #ctx: NetworkContext;
  readonly #design: DesignDef;
  readonly #member: MemberSpec;
  /** Undefined when not every link is known: in/out identifiers are then not checked. */
  readonly #ports: Ports | undefined;

  constructor(ctx: NetworkContext, design: DesignDef, member: MemberSpec, ports: Ports | undefined) {
    this.#ctx = ctx;
    this.#design = design;
    this.#member = member;
    this.#ports = ports;
  }

  #add(path: Path, problem: string, fix = "", key = false): void {
    this.#ctx.problems.add(path, problem, fix, key);
  }

  table(role: TableRole, raw: RawTable<unknown>, path: Path): TableSpec {
    const explicit = !Array.isArray(raw);
    const form = raw as Exclude<RawTable<unknown>, readonly unknown[]>;
    const rawRows: readonly unknown[] = explicit ? form.rows : (raw as readonly unknown[]);
    const rowsPath = explicit ? [...path, "rows"] : path;
    const rows: RowSpec[] = [];
    const seen = new Map<number, number>(); // transmit out-link / send session → row index
    for (const [i, r] of rawRows.entries()) {
      const rowPath = [...rowsPath, i];
      const row = this.#row(role, r, rowPath, seen, i);
      if (row !== undefined) rows.push(row);
    }
    const kind = explicit ? form.kind : undefined;
    const capacity = explicit ? form.capacity : undefined;
    if (kind !== undefined) this.#checkKind(role, kind, [...path, "kind"]);
    if (capacity !== undefined && rawRows.length > capacity) {
      this.#add([...path, "capacity"], `${rawRows.length} rows do not fit in capacity ${capacity}`, `raise capacity to at least ${rawRows.length}`);
    }
    return {
      role,
      rows,
      at: this.#ctx.problems.ref(path),
      ...(kind === undefined ? {} : { kind }),
      ...(capacity === undefined ? {} : { capacity }),
    };
  }

  #row(role: TableRole, raw: unknown, path: Path, seen: Map<number, number>, index: number): RowSpec | undefined {
    const at = this.#ctx.problems.ref(path);
    switch (role) {
      case "acquire": {
        const r = raw as RawAcquireRow;
        return this.#matchRow(r.in, r.match, path, r.do === "shared" ? { kind: "shared-acquire" } : { kind: r.do }, at);
      }
      case "forward": {
        const r = raw as RawForwardRow;
        return this.#matchRow(r.in, r.match, path, this.#forwardAction(r.out, [...path, "out"]), at);
      }
      case "receive": {
        const r = raw as RawReceiveRow;
        if (typeof r.do === "object") {
          const to = this.#elsewhere(r.do.link, [...path, "do", "link"], "link", "an overlay network and the identifier of the link the packet arrives on there, like ip.1");
          return this.#matchRow(undefined, r.match, path, to === undefined ? undefined : { kind: "link", network: to.network, ident: to.id, at: to.at }, at);
        }
        return this.#matchRow(undefined, r.match, path, { kind: "deliver" }, at);
      }
      case "transmit": {
        const r = raw as RawTransmitRow;
        let good = this.#sends(r.out, [...path, "out"]);
        const twice = seen.get(r.out);
        if (twice !== undefined) {
          this.#add([...path, "out"], `link ${r.out} already has a transmit row (row ${twice})`, "one transmit row per out-link");
          good = false;
        } else {
          seen.set(r.out, index);
        }
        let action: Action = { kind: "physical" };
        if (typeof r.via === "object") {
          const via = this.#elsewhere(r.via.session, [...path, "via", "session"], "session", "an underlay network and a session of its member on this machine, like lanA.1");
          if (via === undefined) good = false;
          else action = { kind: "session", network: via.network, session: via.id, at: via.at };
        }
        return good ? { out: r.out, match: new Map(), action, at } : undefined;
      }
      case "send": {
        const r = raw as RawSendRow;
        let good = true;
        const twice = seen.get(r.session);
        if (twice !== undefined) {
          this.#add([...path, "session"], `session ${r.session} already has a send row (row ${twice})`, "one send row per session; use another session id");
          good = false;
        } else {
          seen.set(r.session, index);
        }
        const header = this.#sendHeader(r.header ?? {}, [...path, "header"]);
        return good && header !== undefined ? { session: r.session, match: new Map(), action: { kind: "push", header }, at } : undefined;
      }
    }
  }

  /** An acquire, forward or receive row: optional in-link, patterns, action. */
  #matchRow(inLink: InLink | undefined, match: RawValues | undefined, path: Path, action: Action | undefined, at: RowSpec["at"]): RowSpec | undefined {
    const inOk = inLink === undefined || typeof inLink === "string" || this.#receives(inLink, [...path, "in"]);
    const patterns = this.#patterns(match ?? {}, [...path, "match"]);
    if (!inOk || patterns === undefined || action === undefined) return undefined;
    const row: RowSpec = { match: patterns, action, at, ...(inLink === undefined ? {} : { in: inLink }) };
    return row;
  }

  /**
   * `NETWORK.ID`: a session or link identifier of another network's member on
   * this machine. Whether that network and member exist is checked once every
   * network is known (./layering.ts).
   */
  #elsewhere(text: string, path: Path, what: "session" | "link", fix: string): { network: string; id: number; at: RowSpec["at"] } | undefined {
    const m = /^([A-Za-z][A-Za-z0-9_-]*)\.(\d+)$/.exec(String(text).trim());
    const id = m === null ? Number.NaN : Number(m[2]);
    const max = what === "session" ? 0xffffffff : PORT_MAX;
    if (m === null || m[1] === undefined || !Number.isSafeInteger(id) || id > max) {
      this.#add(path, `'${excerpt(String(text))}' is not NETWORK.${what === "session" ? "SESSION" : "LINK"}`, `write ${fix}${m !== null && id > max ? `; the identifier is at most ${max}` : ""}`);
      return undefined;
    }
    if (m[1] === this.#ctx.network) {
      this.#add(path, `${what === "session" ? "a session" : "a link"} of ${m[1]} itself: layering joins two different networks`, `name the ${what === "session" ? "underlay" : "overlay"} network, not ${m[1]}`);
      return undefined;
    }
    return { network: m[1], id, at: this.#ctx.problems.ref(path) };
  }

  #forwardAction(out: RawForwardRow["out"], path: Path): Action | undefined {
    if (out === "drop") return { kind: "drop" };
    if (out === "shared") return { kind: "shared-forward" };
    const ports = typeof out === "number" ? [out] : out;
    const good = ports.map((p, j) => this.#sends(p, typeof out === "number" ? path : [...path, j])).every(Boolean);
    return good ? { kind: "out", ports } : undefined;
  }

  #patterns(match: RawValues, path: Path): Map<string, Pattern> | undefined {
    const patterns = new Map<string, Pattern>();
    let good = true;
    for (const [name, v] of Object.entries(match)) {
      const at = [...path, name];
      if (name === "in") {
        this.#add(at, "`in` is not a header field", "write in: beside match:, not inside it", true);
        good = false;
        continue;
      }
      const field = this.#field(name, at);
      if (field === undefined) {
        good = false;
        continue;
      }
      const pattern = parsePattern(this.#ctx.value(at, v), field);
      if (!pattern.ok) {
        this.#add(at, pattern.problem, pattern.fix);
        good = false;
      } else if (pattern.value !== undefined) {
        patterns.set(name, pattern.value);
      }
    }
    return good ? patterns : undefined;
  }

  #field(name: string, path: Path): FieldDef | undefined {
    const field = this.#design.fields.find((f) => f.name === name);
    if (field === undefined) {
      const names = this.#design.fields.map((f) => f.name);
      this.#add(path, `${this.#design.name} has no field '${excerpt(name)}'`, `${didYouMean(name, names)}fields: ${names.join(", ")}`, true);
    }
    return field;
  }

  /** Every writable field of the design: the values written, else their fallbacks (#fallback). */
  #sendHeader(values: RawValues, path: Path): Map<string, bigint> | undefined {
    const writable = this.#design.fields.filter((f) => f.readOnly !== true);
    const given = new Map<string, bigint>();
    let good = true;
    for (const [name, v] of Object.entries(values)) {
      const at = [...path, name];
      const field = this.#field(name, at);
      if (field === undefined) {
        good = false;
        continue;
      }
      if (field.readOnly === true) {
        this.#add(at, `${name} is read-only in ${this.#design.name}: send cannot write it`, `writable fields: ${writable.map((f) => f.name).join(", ")}`, true);
        good = false;
        continue;
      }
      const value = parseExact(this.#ctx.value(at, v), field);
      if (!value.ok) {
        this.#add(at, value.problem, value.fix);
        good = false;
      } else {
        given.set(name, value.value);
      }
    }
    if (!good) return undefined;
    const header = new Map<string, bigint>();
    for (const f of writable) header.set(f.name, given.get(f.name) ?? this.#fallback(f, given));
    return header;
  }

  /** What a send row leaves out: the member's own name as source, the default hop limit, the registry's default, a presence bit set by what it marks, or 0. */
  #fallback(f: FieldDef, given: ReadonlyMap<string, bigint>): bigint {
    if (f.name === this.#design.srcField) return this.#member.nameValue;
    if (f.name === hopLimitField(this.#design)) return DEFAULT_HOP_LIMIT;
    if (f.default !== undefined) return f.default;
    if (f.presenceOf !== undefined) return given.has(f.presenceOf) ? 1n : 0n;
    return 0n;
  }

  /** `in:` must be an identifier on which the member receives. */
  #receives(ident: number, path: Path): boolean {
    return this.#hasPort(ident, path, "in");
  }

  /** `out:` must be an identifier on which the member sends. */
  #sends(ident: number, path: Path): boolean {
    return this.#hasPort(ident, path, "out");
  }

  #hasPort(ident: number, path: Path, key: "in" | "out"): boolean {
    const ports = this.#ports;
    const [wanted, other] = key === "in" ? [ports?.ins, ports?.outs] : [ports?.outs, ports?.ins];
    if (wanted === undefined || other === undefined || wanted.has(ident)) return true;
    const member = this.#member.key;
    const [does, doesNot] = key === "in" ? ["receives", "sends"] : ["sends", "receives"];
    const wrongWay = other.get(ident);
    const problem = wrongWay !== undefined ? `${member} only ${doesNot} on link ${ident} (${wrongWay.name}); \`${key}\` names a link it ${does} on` : `${member} has no link ${ident}`;
    this.#add(path, problem, wanted.size === 0 ? `${member} ${does} on no link` : `${member} ${does} on ${describePorts(wanted)}`);
    return false;
  }

  /** The kind of a header table is the compiler's to check against its rows (src/control/compile.ts); identifier tables are exact. */
  #checkKind(role: TableRole, kind: MatchKind, path: Path): void {
    if (KEYED_BY_ID.has(role) && kind !== "exact") {
      this.#add(path, `a ${role} table matches its ${role === "send" ? "session" : "out-link"} exactly`, "use kind: exact, or leave kind out");
    }
  }
}
