// A member's five tables (seed §2.5, §3.1; DESIGN.md §1), checked against the
// member's own links and the network's header design, and turned into rows.
// Rows are kept in the order written: the first row has the highest priority.

import { excerpt } from "../errors.js";
import { type MatchKind, LINK_MAX, TABLE_ROLES, type TableRole } from "../wasm/abi.js";
import type { DesignDef } from "../wire/designs.js";
import type { NetworkContext } from "./context.js";
import { HeaderValues } from "./header-values.js";
import { hasLeadingZeros, LEADING_ZEROS, parseIdentifier } from "./notation.js";
import type { Path } from "./problems.js";
import type {
  RawAcquireRow,
  RawForwardRow,
  RawLinkRef,
  RawMemberTables,
  RawReceiveRow,
  RawSendRow,
  RawTable,
  RawTransmitRow,
  RawValues,
} from "./raw.js";
import { didYouMean } from "./suggest.js";
import { describeLinks, identsNamed, type MemberLinks, type Topology } from "./topology.js";
import type { Action, ActionOf, InLink, MemberSpec, MemberTables, RowSpec, TableSpec } from "./types.js";

/** Roles keyed by a link or session identifier alone: exact match only. */
const KEYED_BY_ID: ReadonlySet<TableRole> = new Set(["transmit", "send"]);

/** A problem found while resolving a name, for the row that wrote it. */
export interface Unresolved {
  readonly problem: string;
  readonly fix: string;
}

/** How rows name links and sessions by name (identifiers strata allocated): ./load.ts resolves them. */
export interface Elsewhere {
  /** The identifier of the link named `name` at `network`'s member on `machine` (`do: { link: A.NAME }`); undefined
   * when that network's links are not all known (a link was refused, and reported). */
  link(network: string, machine: string, name: string): number | Unresolved | undefined;
  /** The session of the send row named `name` of `network`'s member on `machine` (`via: { session: C.NAME }`). */
  session(network: string, machine: string, name: string): number | Unresolved;
  /** This network's named send rows: member key → name → session id (written or allocated). */
  readonly sessions: ReadonlyMap<string, ReadonlyMap<string, number>>;
}

export function checkTables(
  ctx: NetworkContext,
  design: DesignDef,
  tables: Readonly<Record<string, RawMemberTables>>,
  topology: Topology,
  elsewhere: Elsewhere,
): Map<string, MemberTables> {
  const members = new Map(topology.members.map((m) => [m.key, m]));
  const result = new Map<string, MemberTables>();
  if (ctx.schemaError(["tables"], true)) return result;
  for (const [key, raw] of Object.entries(tables)) {
    if (ctx.schemaError(["tables", key], true)) continue;
    const path = [...ctx.path, "tables", key];
    const member = members.get(key);
    const links = topology.memberLinks.get(key);
    if (member === undefined || links === undefined) {
      const keys = [...members.keys()];
      ctx.problems.add(
        path,
        `no member '${excerpt(key)}' in network ${ctx.network}`,
        `${didYouMean(key, keys)}tables are keyed by member; members: ${keys.join(", ")}`,
        true,
      );
      continue;
    }
    // With links left out, an unknown identifier may be one of theirs: leave in/out unchecked rather than guess.
    const t = new MemberTableChecker(ctx, design, member, topology.complete ? links : undefined, elsewhere);
    const out: MemberTables = {};
    for (const role of TABLE_ROLES) {
      const table = raw[role];
      if (table !== undefined && !ctx.schemaError(["tables", key, role]))
        out[role] = t.table(role, table as RawTable<unknown>, [...path, role]);
    }
    result.set(key, out);
  }
  return result;
}

class MemberTableChecker {
  readonly #ctx: NetworkContext;
  readonly #member: MemberSpec;
  /** Undefined when not every link is known: in/out identifiers are then not checked. */
  readonly #links: MemberLinks | undefined;
  readonly #names: Elsewhere;
  readonly #values: HeaderValues;

  constructor(
    ctx: NetworkContext,
    design: DesignDef,
    member: MemberSpec,
    links: MemberLinks | undefined,
    elsewhere: Elsewhere,
  ) {
    this.#ctx = ctx;
    this.#member = member;
    this.#links = links;
    this.#names = elsewhere;
    this.#values = new HeaderValues(ctx, design, member);
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
    const names = new Map<string, number>(); // send row name → row index
    for (const [i, r] of rawRows.entries()) {
      const rowPath = [...rowsPath, i];
      const row = this.#row(role, r, rowPath, seen, i, names);
      if (row !== undefined) rows.push(row);
    }
    const kind = explicit ? form.kind : undefined;
    const capacity = explicit ? form.capacity : undefined;
    if (kind !== undefined) this.#checkKind(role, kind, [...path, "kind"]);
    if (capacity !== undefined && rawRows.length > capacity) {
      this.#add(
        [...path, "capacity"],
        `${rawRows.length} rows do not fit in capacity ${capacity}`,
        `raise capacity to at least ${rawRows.length}`,
      );
    }
    return {
      role,
      rows,
      at: this.#ctx.problems.ref(path),
      ...(kind === undefined ? {} : { kind }),
      ...(capacity === undefined ? {} : { capacity }),
    };
  }

  #row(
    role: TableRole,
    raw: unknown,
    path: Path,
    seen: Map<number, number>,
    index: number,
    names: Map<string, number>,
  ): RowSpec | undefined {
    switch (role) {
      case "acquire":
        return this.#acquireRow(raw as RawAcquireRow, path);
      case "forward":
        return this.#forwardRow(raw as RawForwardRow, path);
      case "receive":
        return this.#receiveRow(raw as RawReceiveRow, path);
      case "transmit":
        return this.#transmitRow(raw as RawTransmitRow, path, seen, index);
      case "send":
        return this.#sendRow(raw as RawSendRow, path, seen, index, names);
    }
  }

  #acquireRow(r: RawAcquireRow, path: Path): RowSpec | undefined {
    const inLink = this.#inLink(r.in, [...path, "in"]);
    if (inLink === null) return undefined;
    const action: Action = r.do === "shared" ? { kind: "shared-acquire" } : { kind: r.do };
    return this.#matchRow(inLink, r.match, path, action, this.#ctx.problems.ref(path));
  }

  #forwardRow(r: RawForwardRow, path: Path): RowSpec | undefined {
    const at = this.#ctx.problems.ref(path);
    const inLink = this.#inLink(r.in, [...path, "in"]);
    if (inLink === null) return undefined;
    return this.#matchRow(inLink, r.match, path, this.#forwardAction(r.out, [...path, "out"]), at);
  }

  /** A receive row delivers, or hands what is inside to an overlay's link (`do: { link: A.L }`). */
  #receiveRow(r: RawReceiveRow, path: Path): RowSpec | undefined {
    const at = this.#ctx.problems.ref(path);
    if (typeof r.do !== "object") return this.#matchRow(undefined, r.match, path, { kind: "deliver" }, at);
    const to = this.#elsewhere(
      r.do.link,
      [...path, "do", "link"],
      "link",
      "an overlay network and the identifier of the link the packet arrives on there, like ip.1",
    );
    const action: Action | undefined =
      to === undefined ? undefined : { kind: "link", network: to.network, ident: to.id, at: to.at };
    return this.#matchRow(undefined, r.match, path, action, at);
  }

  /** A transmit row: one an out-link, physical or through an underlay's session (`via: { session: C.S }`). */
  #transmitRow(r: RawTransmitRow, path: Path, seen: Map<number, number>, index: number): RowSpec | undefined {
    const at = this.#ctx.problems.ref(path);
    const out = this.#ref(r.out, [...path, "out"]);
    if (out === undefined) return undefined;
    let good = this.#sends(out, [...path, "out"]);
    const twice = seen.get(out);
    if (twice !== undefined) {
      this.#add(
        [...path, "out"],
        `link ${out} already has a transmit row (row ${twice})`,
        "one transmit row per out-link",
      );
      good = false;
    } else {
      seen.set(out, index);
    }
    let action: ActionOf<"transmit"> = { kind: "physical" };
    if (typeof r.via === "object") {
      const via = this.#elsewhere(
        r.via.session,
        [...path, "via", "session"],
        "session",
        "an underlay network and a session of its member on this machine, like " +
          "lanA.1 (or lanA.NAME for a send row with a name)",
      );
      if (via === undefined) good = false;
      else action = { kind: "session", network: via.network, session: via.id, at: via.at };
    }
    return good ? { out, match: new Map(), action, at } : undefined;
  }

  /** A send row: one a session, written or named (then allocated), and the header it pushes. */
  #sendRow(
    r: RawSendRow,
    path: Path,
    seen: Map<number, number>,
    index: number,
    names: Map<string, number>,
  ): RowSpec | undefined {
    const at = this.#ctx.problems.ref(path);
    if (r.name !== undefined) {
      const other = names.get(r.name);
      if (other !== undefined) {
        this.#add(
          [...path, "name"],
          `send row name '${excerpt(r.name)}' is already used by row ${other}`,
          "send row names are unique in a member's send table",
        );
        return undefined; // its session would be the other row's
      }
      names.set(r.name, index);
    }
    const session =
      r.session ?? (r.name === undefined ? undefined : this.#names.sessions.get(this.#member.key)?.get(r.name));
    if (session === undefined) {
      // Without a name the row could not be named by a transmit row; with one, the allocator reported why it has no id.
      if (r.name === undefined)
        this.#add(
          path,
          "a send row needs a session id or a name",
          "write session: ID, or name: NAME and strata allocates the id (transmit " +
            "rows then write via: { session: NETWORK.NAME })",
        );
      return undefined;
    }
    if (r.session !== undefined) this.#identifier(r.session, [...path, "session"]);
    let good = true;
    const twice = seen.get(session);
    if (twice !== undefined) {
      this.#add(
        [...path, "session"],
        `session ${session} already has a send row (row ${twice})`,
        "one send row per session; use another session id",
      );
      good = false;
    } else {
      seen.set(session, index);
    }
    const header = this.#values.sendHeader(r.header ?? {}, [...path, "header"]);
    if (!good || header === undefined) return undefined;
    return {
      session,
      match: new Map(),
      action: { kind: "push", header },
      at,
      ...(r.name === undefined ? {} : { name: r.name }),
    };
  }

  /** `in:` as written: self, shared, an identifier, or a link's name (null: a name that names no link here, reported).
   * */
  #inLink(raw: RawLinkRef | undefined, path: Path): InLink | undefined | null {
    if (raw === undefined || raw === "self" || raw === "shared") return raw;
    return this.#ref(raw, path) ?? null;
  }

  /**
   * A link at this member by identifier, or by name: the identifier of the member's end of the
   * link with that name (its own links, and links of other networks that reach it). Undefined when
   * a name names none (reported), or when not every link is known (nothing to check against).
   */
  #ref(ref: RawLinkRef, path: Path): number | undefined {
    if (typeof ref === "number") return this.#identifier(ref, path);
    const links = this.#links;
    if (links === undefined) return undefined;
    const idents = identsNamed(links, ref);
    const [ident, ...more] = idents;
    if (ident !== undefined && more.length === 0) return ident;
    const member = this.#member.key;
    if (ident === undefined) {
      const all = new Map([...links.ins, ...links.outs]);
      this.#add(
        path,
        `${member} has no link named '${excerpt(ref)}'`,
        all.size === 0 ? `${member} has no links` : `links of ${member}: ${describeLinks(all)}`,
      );
    } else {
      this.#add(
        path,
        `${member} has ${idents.length} links named '${excerpt(ref)}' (identifiers ${idents.join(", ")})`,
        "write the identifier instead of the name",
      );
    }
    return undefined;
  }

  /** A link identifier or session id YAML read as a number; one not written in decimal, or with leading zeros, is
   * reported (and read on, so that it is one error). */
  #identifier(value: number, path: Path): number {
    const written = this.#ctx.value(path, value);
    const parsed = typeof written === "string" ? parseIdentifier(written) : undefined;
    if (parsed?.ok === false) this.#add(path, parsed.problem, parsed.fix);
    return value;
  }

  /** An acquire, forward or receive row: optional in-link, patterns, action. */
  #matchRow(
    inLink: InLink | undefined,
    match: RawValues | undefined,
    path: Path,
    action: Action | undefined,
    at: RowSpec["at"],
  ): RowSpec | undefined {
    const inOk = inLink === undefined || typeof inLink === "string" || this.#receives(inLink, [...path, "in"]);
    const patterns = this.#values.patterns(match ?? {}, [...path, "match"]);
    if (!inOk || patterns === undefined || action === undefined) return undefined;
    const row: RowSpec = { match: patterns, action, at, ...(inLink === undefined ? {} : { in: inLink }) };
    return row;
  }

  /**
   * `NETWORK.ID`: a session or link identifier of another network's member on
   * this machine. Whether that network and member exist is checked once every
   * network is known (./layering.ts).
   */
  #elsewhere(
    text: string,
    path: Path,
    what: "session" | "link",
    fix: string,
  ): { network: string; id: number; at: RowSpec["at"] } | undefined {
    const m = /^([A-Za-z][A-Za-z0-9_-]*)\.(.+)$/.exec(String(text).trim());
    const network = m?.[1];
    const rest = m?.[2] ?? "";
    const numeric = /^\d+$/.test(rest);
    const id = numeric ? Number(rest) : Number.NaN;
    if (numeric && hasLeadingZeros(rest)) {
      this.#add(path, `${what} identifier '${excerpt(rest)}': ${LEADING_ZEROS}`, `write ${network ?? ""}.${id}`);
      return undefined;
    }
    const max = what === "session" ? 0xffffffff : LINK_MAX;
    // a link name, or a default one with a bridging end (sw1-lanB:sw2)
    const nameOk = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/.test(rest);
    if (network === undefined || (numeric ? !Number.isSafeInteger(id) || id > max : !nameOk)) {
      this.#add(
        path,
        `'${excerpt(String(text))}' is not NETWORK.${what === "session" ? "SESSION" : "LINK"}`,
        `write ${fix}${numeric && id > max ? `; the identifier is at most ${max}` : ""}`,
      );
      return undefined;
    }
    if (network === this.#ctx.network) {
      this.#add(
        path,
        `${what === "session" ? "a session" : "a link"} of ${network} itself: layering joins two different networks`,
        `name the ${what === "session" ? "underlay" : "overlay"} network, not ${network}`,
      );
      return undefined;
    }
    const at = this.#ctx.problems.ref(path);
    if (numeric) return { network, id, at };
    // A name: the send row (session) or the link (ExternalLink) of that network's member on this machine.
    const found =
      what === "session"
        ? this.#names.session(network, this.#member.machine, rest)
        : this.#names.link(network, this.#member.machine, rest);
    if (found === undefined) return undefined;
    if (typeof found !== "number") {
      this.#add(path, found.problem, found.fix);
      return undefined;
    }
    return { network, id: found, at };
  }

  #forwardAction(out: RawForwardRow["out"], path: Path): ActionOf<"forward"> | undefined {
    if (out === "drop") return { kind: "drop" };
    if (out === "shared") return { kind: "shared-forward" };
    const list = Array.isArray(out) ? (out as readonly RawLinkRef[]) : [out as RawLinkRef];
    const links: number[] = [];
    let good = true;
    list.forEach((p, j) => {
      const at = Array.isArray(out) ? [...path, j] : path;
      const ident = this.#ref(p, at);
      if (ident === undefined) good = false;
      else if (!this.#sends(ident, at)) good = false;
      else links.push(ident);
    });
    // A name and an identifier may name one link: it is sent on once.
    if (good && new Set(links).size !== links.length) {
      this.#add(
        path,
        `out names link ${links.find((p, i) => links.indexOf(p) !== i) ?? 0} twice`,
        "list each out-link once",
      );
      return undefined;
    }
    return good ? { kind: "out", outLinks: links } : undefined;
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
    const links = this.#links;
    const [wanted, other] = key === "in" ? [links?.ins, links?.outs] : [links?.outs, links?.ins];
    if (wanted === undefined || other === undefined || wanted.has(ident)) return true;
    const member = this.#member.key;
    const [does, doesNot] = key === "in" ? ["receives", "sends"] : ["sends", "receives"];
    const wrongWay = other.get(ident);
    const problem =
      wrongWay !== undefined
        ? `${member} only ${doesNot} on link ${ident} (${wrongWay.name}); \`${key}\` names a link it ${does} on`
        : `${member} has no link ${ident}`;
    this.#add(
      path,
      problem,
      wanted.size === 0 ? `${member} ${does} on no link` : `${member} ${does} on ${describeLinks(wanted)}`,
    );
    return false;
  }

  /** The kind of a header table is the compiler's to check against its rows (src/control/compile.ts); identifier tables
   * are exact. */
  #checkKind(role: TableRole, kind: MatchKind, path: Path): void {
    if (KEYED_BY_ID.has(role) && kind !== "exact") {
      this.#add(
        path,
        `a ${role} table matches its ${role === "send" ? "session" : "out-link"} exactly`,
        "use kind: exact, or leave kind out",
      );
    }
  }
}
