// The overlays intent compiled to rows (docs/spec.md, Intents: `overlays:`). Every
// pair of mesh members has an overlay link (./overlays-read.ts added it to the
// network's links); each direction of it is a session of the underlay member on
// the sender's machine: the overlay member transmits on the link through that
// session (`via: { session }`), the underlay member's send row pushes the
// underlay's header toward the peer's underlay address with the link's
// identifier (a VXLAN VNI, a GRE key), and at the peer the underlay member's
// receive row matches that identifier and the sender's address and pops the
// header into the overlay, arriving on the link (`do: { link }`). Identifiers
// and session ids are allocated as seed 000 says (src/description/allocate.ts,
// `decide`): distinct, the lowest free first, and an earlier allocation kept.

import { decide, type Demand, overlayIdKey, SESSION_MAX, sessionKey } from "../description/allocate.js";
import type { NetworkContext } from "../description/context.js";
import { HeaderValues } from "../description/header-values.js";
import type { Problems } from "../description/problems.js";
import type { RawNetwork } from "../description/raw.js";
import type {
  MemberSpec,
  MemberTables,
  NetworkSpec,
  OverlayIdAllocation,
  Pattern,
  Provenance,
  RowSpec,
  SessionAllocation,
  SourceRef,
} from "../description/types.js";
import { networkGraph, pathsTo } from "./graph.js";
import { mergeTables } from "./merge.js";
import { meshLinkName, type OverlaysIntent, readOverlays } from "./overlays-read.js";
import { dstWidth } from "./width.js";

/** The networks with their overlays' rows merged in, and what was allocated. */
export interface ExpandedOverlays {
  readonly networks: NetworkSpec[];
  readonly ids: OverlayIdAllocation[];
  readonly sessions: SessionAllocation[];
}

/** One overlay link of a mesh: its two ends (overlay member, its identifier there, the underlay member beside it). */
interface MeshLink {
  readonly name: string;
  readonly ends: readonly [End, End];
  id?: number;
}

interface End {
  readonly member: MemberSpec;
  readonly ident: number;
  readonly under: MemberSpec;
}

/** Expands every network's `overlays:`, in the order the networks are written; `previous`: the earlier allocation. */
export function expandOverlays(
  problems: Problems,
  raw: Readonly<Record<string, RawNetwork>>,
  networks: readonly NetworkSpec[],
  known: (network: string) => boolean,
  previous: ReadonlyMap<string, number>,
): ExpandedOverlays {
  const nets = new Map(networks.map((n) => [n.name, n]));
  const ids: OverlayIdAllocation[] = [];
  const sessions: SessionAllocation[] = [];
  for (const name of nets.keys()) {
    const net = nets.get(name);
    const r = raw[name]?.overlays;
    if (net === undefined || r === undefined || !known(name)) continue;
    const intent = readOverlays(problems, net, r, nets);
    if (intent === undefined || !known(intent.underlay.name)) continue;
    const at = problems.ref(["networks", name, "overlays"]);
    const links = meshLinks(problems, net, intent, at);
    if (links === undefined) continue;
    const field = intent.encapsulation.idField;
    if (field !== undefined && !allocateIds(problems, net, intent, links, previous, at)) continue;
    for (const l of links)
      if (field !== undefined && l.id !== undefined)
        ids.push({ network: name, link: l.name, underlay: intent.underlay.name, field, id: l.id });
    const routed = raw[intent.underlay.name]?.routes !== undefined;
    const made = overlayRows(problems, net, intent, links, previous, at, !routed);
    sessions.push(...made.sessions);
    const merge = (n: NetworkSpec, rows: Map<string, MemberTables>): NetworkSpec => ({
      ...n,
      tables: mergeTables(n.tables, rows, dstWidth(n), { problems, tablesPath: ["networks", n.name, "tables"] }),
    });
    nets.set(name, merge(net, made.overlay));
    nets.set(intent.underlay.name, merge(intent.underlay, made.underlay));
  }
  return { networks: [...nets.values()], ids, sessions };
}

/** The mesh's links with their ends; undefined when a member has no underlay member or no path there (reported). */
function meshLinks(
  problems: Problems,
  net: NetworkSpec,
  intent: OverlaysIntent,
  at: SourceRef,
): MeshLink[] | undefined {
  const u = intent.underlay;
  const under = new Map<string, MemberSpec>();
  for (const m of intent.mesh) {
    const beside = u.members.filter((x) => x.machine === m.machine);
    const one = beside[0];
    const other = intent.mesh.find((x) => x !== m && under.get(x.key) === one);
    if (one !== undefined && beside.length === 1 && other !== undefined) {
      problems.addRef(
        at,
        `${other.key} and ${m.key} both run on machine ${m.machine}: ${u.name}.${one.key} would carry both`,
        `an underlay member carries one member of each overlay (seed §5.2.4): give ${m.key} a machine of its own`,
      );
      return undefined;
    }
    if (one !== undefined && beside.length === 1) {
      under.set(m.key, one);
      continue;
    }
    problems.addRef(
      at,
      beside.length === 0
        ? `${m.key} is not in the underlay: no member of ${u.name} runs on its machine ${m.machine}`
        : `${beside.length} members of ${u.name} run on ${m.key}'s machine ${m.machine}`,
      beside.length === 0
        ? `give ${u.name} a member with machine: ${m.machine}, or leave ${m.key} out of the mesh (members:)`
        : "an overlay member rides one underlay member: give the others machines of their own",
    );
    return undefined;
  }
  if (!connected(problems, intent, under, at)) return undefined;
  const byName = new Map(net.links.map((l) => [l.name, l]));
  const links: MeshLink[] = [];
  for (const [i, a] of intent.mesh.entries())
    for (const b of intent.mesh.slice(i + 1)) {
      const l = byName.get(meshLinkName(a.key, b.key));
      const ua = under.get(a.key);
      const ub = under.get(b.key);
      if (l === undefined || "external" in l.from || !Array.isArray(l.to) || ua === undefined || ub === undefined)
        return undefined; // refused with the network's links
      const to = (l.to as readonly { ident: number }[])[0];
      if (to === undefined) return undefined;
      const ends: [End, End] = [
        { member: a, ident: l.from.ident, under: ua },
        { member: b, ident: to.ident, under: ub },
      ];
      links.push({ name: l.name, ends });
    }
  return links;
}

/** Every mesh member's underlay member reaches every other's over the underlay's links (infra members relay). */
function connected(
  problems: Problems,
  intent: OverlaysIntent,
  under: ReadonlyMap<string, MemberSpec>,
  at: SourceRef,
): boolean {
  const u = intent.underlay;
  const g = networkGraph(u, new Map());
  for (const b of intent.mesh) {
    const ub = under.get(b.key);
    const to = ub === undefined ? undefined : g.index.get(ub.key);
    if (to === undefined) continue;
    const { dist } = pathsTo(g, to);
    for (const a of intent.mesh) {
      const ua = under.get(a.key);
      const from = ua === undefined ? undefined : g.index.get(ua.key);
      if (from === undefined || from === to || dist[from] !== Infinity) continue;
      problems.addRef(
        at,
        `${a.key} and ${b.key} have no underlay path: no path over ${u.name}'s links leads from ` +
          `${ua?.key ?? "?"} to ${ub?.key ?? "?"}` +
          (g.relays.some((x) => x === 1) ? " through infra members" : " (only infra members relay)"),
        `link ${ua?.key ?? "?"} to ${ub?.key ?? "?"}'s side in ${u.name}, or leave one of them out of the mesh`,
      );
      return false;
    }
  }
  return true;
}

/**
 * Each link's identifier from the range (default: the field's 1..max), distinct across the underlay: identifiers the
 * underlay's send rows already write (by hand, or an earlier overlay's) are taken. False when the range is too small.
 */
function allocateIds(
  problems: Problems,
  net: NetworkSpec,
  intent: OverlaysIntent,
  links: MeshLink[],
  previous: ReadonlyMap<string, number>,
  at: SourceRef,
): boolean {
  const field = intent.encapsulation.idField ?? "";
  const bits = intent.underlay.design.fields.find((f) => f.name === field)?.bits ?? 32;
  const { lo, hi } = intent.ids ?? { lo: 1, hi: 2 ** bits - 1 };
  const n = hi - lo + 1;
  // The range as decide's space: lo..hi as 1, 2, …, n − 1, 0, so that its lowest free is lo first.
  const toK = (id: number): number | undefined => (id < lo || id > hi ? undefined : (id - lo + 1) % n);
  const taken = new Set<number>();
  for (const t of intent.underlay.tables.values())
    for (const r of t.send?.rows ?? []) {
      const v = r.action.kind === "push" ? r.action.header.get(field) : undefined;
      const k = v === undefined ? undefined : toK(Number(v));
      if (k !== undefined) taken.add(k);
    }
  if (links.length + taken.size > n) {
    const need = links.length + taken.size;
    problems.addRef(
      at,
      `ids ${lo}..${hi} hold ${n} ${field}${n === 1 ? "" : "s"}, and the mesh of ${intent.mesh.length} members ` +
        `needs ${links.length}` +
        (taken.size > 0 ? ` besides the ${taken.size} ${intent.underlay.name} already uses` : ""),
      `write ids: ${lo}..${lo + need - 1} or wider, or leave members out of the mesh`,
    );
    return false;
  }
  const path = ["networks", net.name, "overlays"];
  const demands: Demand[] = [...taken].map((k) => ({
    key: `taken\u0000${k}`,
    spaces: ["ids"],
    written: k,
    path,
    what: "",
  }));
  const old = new Map<string, number>();
  for (const l of links) {
    const key = overlayIdKey(net.name, l.name);
    const was = previous.get(key);
    const k = was === undefined ? undefined : toK(was);
    if (k !== undefined) old.set(key, k);
    demands.push({ key, spaces: ["ids"], path, what: `overlay link ${l.name}` });
  }
  const decided = decide(demands, old, n - 1, undefined, field);
  links.forEach((l, i) => {
    const d = decided[taken.size + i];
    if (d !== undefined) l.id = lo + ((d.ident - 1 + n) % n);
  });
  return true;
}

/** The rows of the mesh: the overlay's transmit rows, the underlay's send, receive (and acquire) rows. */
function overlayRows(
  problems: Problems,
  net: NetworkSpec,
  intent: OverlaysIntent,
  links: readonly MeshLink[],
  previous: ReadonlyMap<string, number>,
  at: SourceRef,
  acquire: boolean,
): { overlay: Map<string, MemberTables>; underlay: Map<string, MemberTables>; sessions: SessionAllocation[] } {
  const u = intent.underlay;
  const field = intent.encapsulation.idField;
  const carries = intent.encapsulation.carries(net.design.name, u.design.name) ?? {};
  // Each direction of each link: sent from `from`'s machine to `to`'s.
  const directions = links.flatMap((l) => [
    { link: l, from: l.ends[0], to: l.ends[1] },
    { link: l, from: l.ends[1], to: l.ends[0] },
  ]);
  const sessionName = (to: End): string => `${net.name}.${to.member.key}`;
  const sessions = sessionIds(problems, u, directions, sessionName, previous);
  const overlay = new Map<string, MemberTables>();
  const underlay = new Map<string, MemberTables>();
  const rows = (tables: Map<string, MemberTables>, key: string, role: "transmit" | "send" | "receive" | "acquire") => {
    const mine = tables.get(key) ?? {};
    tables.set(key, mine);
    const t = (mine[role] ??= { role, rows: [], at });
    return t.rows as RowSpec[];
  };
  const list: SessionAllocation[] = [];
  for (const { link, from, to } of directions) {
    const session = sessions.get(`${from.under.key}\u0000${sessionName(to)}`);
    if (session === undefined) continue;
    const prov: Provenance = {
      intent: "overlays",
      destination: `${link.name}${field === undefined ? ` (session ${session})` : ` (${field} ${link.id})`}`,
      at,
    };
    const values = {
      [u.design.dstField]: to.under.name,
      ...carries,
      ...(field === undefined ? {} : { [field]: link.id ?? 0 }),
    };
    const header = new HeaderValues(contextOf(problems, u), u.design, from.under).sendHeader(values, []);
    if (header === undefined) continue;
    rows(overlay, from.member.key, "transmit").push({
      out: from.ident,
      match: new Map(),
      action: { kind: "session", network: u.name, session, at },
      at,
      intent: prov,
    });
    rows(underlay, from.under.key, "send").push({
      session,
      name: sessionName(to),
      match: new Map(),
      action: { kind: "push", header },
      at,
      intent: prov,
    });
    list.push({ network: u.name, member: from.under.key, name: sessionName(to), session, allocated: true });
    // At the peer: the identifier (and what the overlay is), from the sender's address, into the link.
    const match = new Map<string, Pattern>([[u.design.srcField ?? "src", exact(from.under.nameValue)]]);
    for (const [f, v] of Object.entries(carries)) match.set(f, exact(BigInt(v)));
    if (field !== undefined) match.set(field, exact(BigInt(link.id ?? 0)));
    rows(underlay, to.under.key, "receive").push({
      match,
      action: { kind: "link", network: net.name, ident: to.ident, at },
      at,
      intent: prov,
    });
  }
  for (const m of intent.mesh)
    if (net.tables.get(m.key)?.transmit === undefined) physicalRows(net, m.key, rows(overlay, m.key, "transmit"), at);
  if (acquire)
    for (const m of new Set(links.flatMap((l) => l.ends.map((e) => e.under))))
      acquireRow(m, rows(underlay, m.key, "acquire"), u, at);
  return { overlay, underlay, sessions: list };
}

/**
 * A member with no transmit table written sends on every link physically (the compiler's default, for a member
 * without one); the intent's table keeps that for the member's links that are not the mesh's.
 */
function physicalRows(net: NetworkSpec, key: string, rows: RowSpec[], at: SourceRef): void {
  const mesh = new Set(rows.map((r) => r.out));
  const outs = new Map<number, string>();
  for (const l of net.links) {
    if (!("external" in l.from) && l.from.network === undefined && l.from.member === key)
      outs.set(l.from.ident, l.name);
    if (l.mode === "two-way" && Array.isArray(l.to))
      for (const e of l.to as readonly { member: string; ident: number; network?: string }[])
        if (e.network === undefined && e.member === key) outs.set(e.ident, l.name);
  }
  for (const [out, name] of [...outs].sort(([a], [b]) => a - b))
    if (!mesh.has(out))
      rows.push({
        out,
        match: new Map(),
        action: { kind: "physical" },
        at,
        intent: { intent: "overlays", destination: `${name} (physical)`, at },
      });
}

/** Where the underlay has no routes: to write its acquire rows, the mesh's underlay members take what is theirs. */
function acquireRow(m: MemberSpec, rows: RowSpec[], u: NetworkSpec, at: SourceRef): void {
  rows.push({
    match: new Map([[u.design.dstField, exact(m.nameValue)]]),
    action: { kind: "receive" },
    at,
    intent: { intent: "overlays", destination: m.key, at },
  });
}

/** Each direction's session id at its sender's underlay member, beside the ids its send rows already have. */
function sessionIds(
  problems: Problems,
  u: NetworkSpec,
  directions: readonly { from: End; to: End }[],
  name: (to: End) => string,
  previous: ReadonlyMap<string, number>,
): Map<string, number> {
  const demands: Demand[] = [];
  const keys: string[] = [];
  const path = ["networks", u.name, "tables"];
  for (const [key, t] of u.tables)
    for (const r of t.send?.rows ?? [])
      if (r.session !== undefined)
        demands.push({ key: `hand\u0000${key}\u0000${r.session}`, spaces: [key], written: r.session, path, what: "" });
  const hand = demands.length;
  for (const { from, to } of directions) {
    demands.push({
      key: sessionKey(u.name, from.under.key, name(to)),
      spaces: [from.under.key],
      path,
      what: `the session of ${from.under.key} toward ${to.under.key}`,
    });
    keys.push(`${from.under.key}\u0000${name(to)}`);
  }
  const decided = decide(demands, previous, SESSION_MAX, problems, "session id");
  const out = new Map<string, number>();
  keys.forEach((k, i) => {
    const d = decided[hand + i];
    if (d !== undefined) out.set(k, d.ident);
  });
  return out;
}

function exact(value: bigint): Pattern {
  return { kind: "exact", value };
}

/** A context for the underlay's header values: the intent's own, numbers and names as strata writes them. */
function contextOf(problems: Problems, u: NetworkSpec): NetworkContext {
  return {
    problems,
    network: u.name,
    path: ["networks", u.name],
    design: u.design,
    value: (_, v) => v,
    schemaError: () => false,
  };
}
