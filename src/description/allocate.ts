// Identifier allocation: link identifiers and session ids a description leaves
// out (`from: h1, to: sw`, a send row with a name and no session) are chosen by
// strata. It follows SwarmKit's port allocator (seed 000): an identifier written
// by the user is static (the seed's published port), an omitted one is dynamic,
// an identifier space is a member (the seed's protocol × port address space),
// and an earlier allocation is recovered before anything new is chosen.
//
// The seed's author marks five places XXX where the model deviates from, or
// documents a bug of, SwarmKit. Each is fixed here, not copied:
//
// XXX 1 (RecoverExistingPorts, `Addr(oldPorts[j]) ∉ forcedAddr`, "does SwarmKit
//   do this?"; summary: "Reusing a previous assignment when we need it
//   elsewhere", where SwarmKit rejects the update). Here a previous identifier
//   that the description now writes for another link end is not recovered: the
//   written one wins, the end that had it gets a fresh one, and nothing is
//   rejected.
// XXX 2 (`duplicate`, "SwarmKit doesn't do this check"; summary: "Duplicate
//   similar ports", where two alike dynamic ports are both given the old number
//   and rejected). The seed matches old ports by a "mostly equal" spec, so alike
//   ports fight over one number. Here an omitted identifier is keyed by what
//   names it uniquely — the declaring network, the link's name (unique in a
//   network; a default name is made of the ends as written, never of an
//   allocated identifier) and the member at that end; a session by its member and
//   send row name — so each end recovers its own earlier identifier, and an
//   identifier is taken at most once per space.
// XXX 3 (AllocationsOK: "host/host collisions need to be avoided by the
//   scheduler, not the allocator") and XXX 4 ("ignore ingress/host conflicts",
//   a known SwarmKit bug; summary: "Shadowing an existing host port", "Accepting
//   a host port that is hidden"). There is no second kind of identifier that
//   escapes the check: at a member, every end — written or allocated, its own
//   links, bridging links declared by other networks (seed §5.1), shared links
//   (seed §5.3, where the identifier must be free at both shared members) — is in
//   one space. Allocated identifiers avoid every written one; written ones that
//   collide with each other are reported by the topology checks (./topology.ts,
//   ./bridging.ts) naming the other link.
// XXX 5 (StepAllocateIdempotent: "not currently the case, because if we have
//   two similar specs then we only copy the existing allocation for the first
//   one"). With unique keys (XXX 2) every omitted end is recovered, all before
//   any fresh choice (lowest free identifier, in the order of the description),
//   so allocate(d, allocate(d)) = allocate(d), and allocate(d) with no previous
//   is the same every time.
//
// Rejection only when justified (the seed's RejectJustified): the allocator
// rejects a description only when an identifier space has no free identifier
// left for an omitted one (0..LINK_MAX for links, 0..2^32−1 for sessions); the
// message names the link end and the space. The links of one group arriving at
// one member share one identifier there (seed §4.3), so they take one slot.
// Limit: where shared links join two members' spaces the choice is greedy, so
// near exhaustion (tens of thousands of links at one member) a cleverer choice
// could fit where this one reports no free identifier.

import { LINK_MAX } from "../wasm/abi.js";
import type { NetworkContext } from "./context.js";
import type { Path, Problems } from "./problems.js";
import type { RawNetwork, RawSendRow, RawTable } from "./raw.js";
import { type EndpointAt, endName, GROUP_MODES, linkName } from "./link-drafts.js";
import type { TopologyDraft } from "./topology.js";
import type { Allocation, LinkEndAllocation, SessionAllocation } from "./types.js";

/** The largest session id (the send table's key is 32 bits). */
export const SESSION_MAX = 0xffffffff;

/** One identifier to decide: written (static) or left out (dynamic). */
export interface Demand {
  /** Unique per thing named (link end, session); the key of the previous allocation. */
  readonly key: string;
  /** Identifier spaces the identifier occupies ("net.member"); a shared link's end occupies two. */
  readonly spaces: readonly string[];
  /** The identifier written by the user, if any. */
  readonly written?: number;
  /**
   * Ends with the same slot share one identifier (links of one group arriving at a member);
   * a written identifier of the slot is taken by the omitted ones.
   */
  readonly slot?: string;
  /** Where a problem about this demand is reported. */
  readonly path: Path;
  /** How messages name it: "link h1-sw at h1". */
  readonly what: string;
}

export interface Decided {
  readonly ident: number;
  readonly allocated: boolean;
}

/**
 * Decides every demand: written ones as written; omitted ones from `previous`
 * (by key) where that identifier is still free, else the lowest free one
 * (1, 2, …, max, then 0). Returns undefined for a demand that cannot be
 * satisfied, after reporting it to `problems`.
 */
export function decide(
  demands: readonly Demand[],
  previous: ReadonlyMap<string, number>,
  max: number,
  problems: Problems | undefined,
  kind: string,
): (Decided | undefined)[] {
  const { used, slotWritten } = written(demands);
  const result: (Decided | undefined)[] = demands.map((d) =>
    d.written === undefined ? undefined : { ident: d.written, allocated: false },
  );
  // Omitted ones, grouped by slot (one identifier for the slot), in the order of the description.
  const slots = new Map<string, number[]>();
  demands.forEach((d, i) => {
    if (d.written !== undefined) return;
    const slot = d.slot ?? `\u0000${i}`;
    slots.set(slot, [...(slots.get(slot) ?? []), i]);
  });
  const chosen = new Map<string, number>();
  const pending: [string, number[]][] = [];
  // 1. A slot with a written identifier takes it (seed §4.3: links of one group share it at a member).
  for (const [slot, members] of slots) {
    const w = slotWritten.get(slot);
    if (w !== undefined) chosen.set(slot, w);
    else pending.push([slot, members]);
  }
  // 2. Recover earlier allocations, all of them before anything new is chosen (XXX 5).
  for (const [slot, members] of pending) {
    const old = recovered(demands, members, previous, max, used);
    if (old !== undefined) chosen.set(slot, old);
  }
  // 3. The lowest free identifier for the rest.
  const cursors = new Map<string, number>();
  for (const [slot, members] of pending) {
    if (chosen.has(slot)) continue;
    const spaces = spacesOf(demands, members);
    const ident = lowestFree(spaces, used, cursors, max);
    if (ident === undefined) {
      const first = demands[members[0] ?? -1];
      if (first !== undefined) noneFree(problems, first, kind, max, spaces);
      continue;
    }
    chosen.set(slot, ident);
    take(used, spaces, ident);
  }
  for (const [slot, members] of slots) {
    const ident = chosen.get(slot);
    if (ident !== undefined) for (const i of members) result[i] = { ident, allocated: true };
  }
  return result;
}

/** Space → the identifiers written there; and the first identifier written for each slot. */
function written(demands: readonly Demand[]): { used: Map<string, Set<number>>; slotWritten: Map<string, number> } {
  const used = new Map<string, Set<number>>();
  const slotWritten = new Map<string, number>();
  for (const d of demands) {
    if (d.written === undefined) continue;
    take(used, d.spaces, d.written);
    if (d.slot !== undefined && !slotWritten.has(d.slot)) slotWritten.set(d.slot, d.written);
  }
  return { used, slotWritten };
}

/** Marks `ident` used in every one of `spaces`. */
function take(used: Map<string, Set<number>>, spaces: readonly string[], ident: number): void {
  for (const s of spaces) {
    let set = used.get(s);
    if (set === undefined) {
      set = new Set();
      used.set(s, set);
    }
    set.add(ident);
  }
}

/** The identifier a slot's demands had before (the first of them that had one still free there), taken. */
function recovered(
  demands: readonly Demand[],
  members: readonly number[],
  previous: ReadonlyMap<string, number>,
  max: number,
  used: Map<string, Set<number>>,
): number | undefined {
  const spaces = spacesOf(demands, members);
  for (const i of members) {
    const d = demands[i];
    const old = d === undefined ? undefined : previous.get(d.key);
    // XXX 1: a written one wins
    if (old === undefined || !Number.isInteger(old) || old < 0 || old > max) continue;
    if (spaces.some((s) => used.get(s)?.has(old) === true)) continue;
    take(used, spaces, old);
    return old;
  }
  return undefined;
}

function noneFree(problems: Problems | undefined, first: Demand, kind: string, max: number, spaces: string[]): void {
  problems?.add(
    first.path,
    `no free ${kind} for ${first.what}: every identifier 0..${max} is already used ` +
      `at ${spaces.map((s) => s).join(" and ")}`,
    `write an identifier used nowhere else there, or remove some of the ${kind}s at ${spaces.join(" and ")}`,
  );
}

function spacesOf(demands: readonly Demand[], members: readonly number[]): string[] {
  return [...new Set(members.flatMap((i) => demands[i]?.spaces ?? []))];
}

/**
 * 1, 2, …, max, then 0: identifiers start at 1 by custom; 0 is used only when nothing else is
 * left. `cursors` keeps, per space, an identifier below which every one from 1 is used; sets
 * only grow while identifiers are chosen, so the search resumes there (linear in all, not
 * quadratic, for a member with many links).
 */
function lowestFree(
  spaces: readonly string[],
  used: ReadonlyMap<string, ReadonlySet<number>>,
  cursors: Map<string, number>,
  max: number,
): number | undefined {
  const sets = spaces.map((s) => used.get(s));
  let ident = Math.max(1, ...spaces.map((s) => cursors.get(s) ?? 1));
  while (ident <= max && sets.some((set) => set?.has(ident) === true)) ident++;
  // Advance each space's cursor past what it uses from its old place (ident is about to be used too).
  for (const [i, s] of spaces.entries()) {
    let c = cursors.get(s) ?? 1;
    while (c <= max && (c === ident || sets[i]?.has(c) === true)) c++;
    cursors.set(s, c);
  }
  if (ident <= max) return ident;
  return sets.every((set) => set?.has(0) !== true) ? 0 : undefined;
}

// The demands of a description, read between its links and their checks (./load.ts).

/**
 * Every link end of every network, written or not, as demands on the identifier spaces of
 * members ("net.member"): a bridging end is in the far network's space; the end of a shared
 * link where the shared members are is in both members' spaces (seed §5.3: same identifier).
 */
export function allocateLinks(
  problems: Problems,
  drafted: readonly { ctx: NetworkContext; draft: TopologyDraft; raw: RawNetwork }[],
  previous: ReadonlyMap<string, number>,
): LinkEndAllocation[] {
  const membersOf = new Map(drafted.map((d) => [d.ctx.network, d.draft.members]));
  const demands: Demand[] = [];
  const ends: { end: EndpointAt; network: string; link: string }[] = [];
  for (const { ctx, draft } of drafted) {
    const net = ctx.network;
    for (const d of draft.drafts) {
      const name = linkName(d);
      const all = [...(d.from === undefined ? [] : [d.from]), ...d.to];
      // The shared members: the end whose member has a namesake on its machine in the overlay, when exactly one has.
      let shared: { end: EndpointAt; space: string } | undefined;
      if (d.raw.shared !== undefined) {
        const overlay = membersOf.get(d.raw.shared) ?? [];
        const found = all.flatMap((e) => {
          const m = e.network === undefined ? draft.members.find((x) => x.key === e.member) : undefined;
          const partner =
            m === undefined ? undefined : overlay.find((x) => x.machine === m.machine && x.nameValue === m.nameValue);
          return partner === undefined ? [] : [{ end: e, space: `${d.raw.shared}.${partner.key}` }];
        });
        if (found.length === 1) shared = found[0];
      }
      const group = d.raw.group !== undefined && GROUP_MODES.has(d.mode) ? d.raw.group : undefined;
      for (const e of all) {
        const space = `${e.network ?? net}.${e.member}`;
        const receiverOfGroup = group !== undefined && e !== d.from;
        demands.push({
          key: linkEndKey(net, name, endName(e)),
          spaces: shared?.end === e ? [space, shared.space] : [space],
          path: e.path,
          what: `link ${name} at ${endName(e)}`,
          ...(e.written ? { written: e.ident } : {}),
          ...(receiverOfGroup ? { slot: `${space}\u0000${group}` } : {}),
        });
        ends.push({ end: e, network: net, link: name });
      }
    }
  }
  const decided = decide(demands, previous, LINK_MAX, problems, "link identifier");
  const out: LinkEndAllocation[] = [];
  decided.forEach((x, i) => {
    const at = ends[i];
    if (x === undefined || at === undefined) return;
    at.end.ident = x.ident;
    out.push({ network: at.network, link: at.link, member: endName(at.end), ident: x.ident, allocated: x.allocated });
  });
  return out;
}

/** Session ids of send rows: written, or allocated for rows with a name and no session (per member). */
export function allocateSessions(
  problems: Problems,
  drafted: readonly { ctx: NetworkContext; raw: RawNetwork }[],
  previous: ReadonlyMap<string, number>,
): { list: SessionAllocation[]; byMember: Map<string, Map<string, Map<string, number>>> } {
  const demands: Demand[] = [];
  const named: { network: string; member: string; name: string | undefined }[] = [];
  for (const { ctx, raw } of drafted) {
    if (ctx.schemaError(["tables"], true)) continue;
    for (const [member, tables] of Object.entries(raw.tables ?? {})) {
      if (ctx.schemaError(["tables", member], true) || ctx.schemaError(["tables", member, "send"])) continue;
      const send = tables.send as RawTable<RawSendRow> | undefined;
      if (send === undefined) continue;
      const rows = Array.isArray(send) ? send : (send as { rows: readonly RawSendRow[] }).rows;
      const rowsPath = [...ctx.path, "tables", member, "send", ...(Array.isArray(send) ? [] : ["rows"])];
      rows.forEach((r, i) => {
        if (r.session === undefined && r.name === undefined) return; // reported with the table (./tables.ts)
        demands.push({
          key:
            r.name === undefined
              ? `row\u0000${ctx.network}\u0000${member}\u0000${i}`
              : sessionKey(ctx.network, member, r.name),
          spaces: [`${ctx.network}.${member}`],
          path: [...rowsPath, i],
          what: `send row ${r.name ?? i} of ${ctx.network}.${member}`,
          ...(r.session === undefined ? {} : { written: r.session }),
        });
        named.push({ network: ctx.network, member, name: r.name });
      });
    }
  }
  const decided = decide(demands, previous, SESSION_MAX, problems, "session id");
  const list: SessionAllocation[] = [];
  const byMember = new Map<string, Map<string, Map<string, number>>>();
  decided.forEach((x, i) => {
    const n = named[i];
    if (x === undefined || n === undefined || n.name === undefined) return;
    list.push({ network: n.network, member: n.member, name: n.name, session: x.ident, allocated: x.allocated });
    const net = byMember.get(n.network) ?? new Map<string, Map<string, number>>();
    byMember.set(n.network, net);
    const m = net.get(n.member) ?? new Map<string, number>();
    net.set(n.member, m);
    if (!m.has(n.name)) m.set(n.name, x.ident);
  });
  return { list, byMember };
}

/** The key of a link end in an allocation (and in `previous`). */
export function linkEndKey(network: string, link: string, member: string): string {
  return `link\u0000${network}\u0000${link}\u0000${member}`;
}

/** The key of a named session. */
export function sessionKey(network: string, member: string, name: string): string {
  return `session\u0000${network}\u0000${member}\u0000${name}`;
}

/** An allocation as the previous one of the next allocation: key → identifier. */
export function previousMap(previous: Allocation | undefined): Map<string, number> {
  const map = new Map<string, number>();
  for (const l of previous?.links ?? []) map.set(linkEndKey(l.network, l.link, l.member), l.ident);
  for (const s of previous?.sessions ?? []) map.set(sessionKey(s.network, s.member, s.name), s.session);
  for (const o of previous?.overlays ?? []) map.set(overlayIdKey(o.network, o.link), o.id);
  return map;
}

/** The key of an overlay link's identifier (a VNI, a GRE key: src/intents/overlays.ts). */
export function overlayIdKey(network: string, link: string): string {
  return `overlay\u0000${network}\u0000${link}`;
}
