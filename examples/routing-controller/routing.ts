// A routing controller written against strata's public API only (Device, and LinkEvents for the links' state): it
// runs the same on an Emulation in process and on a P4RuntimeDevice. Given an IP network of routers (members of role
// infra) and hosts, it computes shortest paths over the network's links itself — breadth first, fewest routers
// crossed, the lowest port on a tie — and writes each router's forward rows, one /32 per member it does not reach
// directly through a host link (a router's own hosts are its description's rows). When a link goes down or comes up,
// or a member does (its links then carry nothing), it computes the paths again and writes, in one batch, only the rows
// that changed: a modify for a route that moved, a delete for a member no longer reachable, an insert for one
// reachable again.
//
// A device carries no link state over P4Runtime: the controller hears of links from a LinkEvents its caller passes —
// an Emulation is one (setLink() and setMember() tell it), and a program driving real devices tells its own.
//
// It imports the repository's src/index.ts, which is what the package's "strata" exports: this file is compiled in the
// repository, by the test that runs it (test/api/routing-controller.test.ts); a program of its own imports "strata".

import type { Description, Device, LinkChange, LinkEvents, MemberChange, RowWrite } from "../../src/index.js";

/** A two-way link between two members, each end its port ("r1.2": member r1's link 2). */
export interface Edge {
  /** "NETWORK.NAME", as a LinkChange names it. */
  readonly name: string;
  readonly ends: readonly [End, End];
}
interface End {
  readonly member: string;
  readonly port: number;
}

export interface Topology {
  readonly network: string;
  /** Members of role infra: they forward. */
  readonly routers: readonly string[];
  /** Each member's address (its name). */
  readonly addresses: ReadonlyMap<string, string>;
  readonly edges: readonly Edge[];
}

/** Each router's routes: destination member → the port it sends to it on. */
export type Routes = ReadonlyMap<string, ReadonlyMap<string, number>>;

/** Rows written for one change. */
export interface Written {
  readonly inserted: number;
  readonly modified: number;
  readonly deleted: number;
}

function endOf(text: string, network: string): End {
  const dot = text.lastIndexOf(".");
  const port = Number(text.slice(dot + 1));
  if (dot <= 0 || !Number.isInteger(port)) throw new RangeError(`${network}: link end '${text}' names no port`);
  return { member: text.slice(0, dot), port };
}

/** The routers, addresses and two-way links of `network` (ends written MEMBER.PORT; other links are not routed on). */
export function topologyOf(description: Description, network: string): Topology {
  const net = description.networks[network];
  if (net === undefined) throw new RangeError(`no network '${network}'`);
  const members = Object.entries(net.members);
  const edges: Edge[] = [];
  for (const link of net.links ?? []) {
    const { from, to } = link;
    if (link.mode !== "two-way" || from === undefined || typeof to !== "string") continue;
    edges.push({
      name: `${network}.${link.name ?? `${from}-${to}`}`,
      ends: [endOf(from, network), endOf(to, network)],
    });
  }
  return {
    network,
    routers: members.filter(([, m]) => m.role === "infra").map(([key]) => key),
    addresses: new Map(members.map(([key, m]) => [key, String(m.name)])),
    edges,
  };
}

/**
 * Shortest paths over the links not `down` between members not `membersDown`: for each router, each member it routes
 * to and the port towards it.
 */
export function routesOf(
  topo: Topology,
  down: ReadonlySet<string>,
  membersDown: ReadonlySet<string> = new Set(),
): Routes {
  const isRouter = new Set(topo.routers);
  const neighbours = new Map<string, End[]>(); // member → (neighbour, own port)
  for (const e of topo.edges) {
    const [a, b] = e.ends;
    if (down.has(e.name) || membersDown.has(a.member) || membersDown.has(b.member)) continue;
    neighbours.set(a.member, [...(neighbours.get(a.member) ?? []), { member: b.member, port: a.port }]);
    neighbours.set(b.member, [...(neighbours.get(b.member) ?? []), { member: a.member, port: b.port }]);
  }
  const routes = new Map(topo.routers.map((r) => [r, new Map<string, number>()]));
  for (const dst of topo.addresses.keys()) {
    // Hops to dst from every member that reaches it, crossing routers only.
    const hops = new Map([[dst, 0]]);
    for (let frontier = [dst], n = 1; frontier.length > 0; n++) {
      const next: string[] = [];
      for (const m of frontier)
        for (const { member } of neighbours.get(m) ?? []) {
          if (hops.has(member) || !isRouter.has(member)) continue;
          hops.set(member, n);
          next.push(member);
        }
      frontier = next;
    }
    for (const r of topo.routers) {
      const own = hops.get(r);
      const links = (neighbours.get(r) ?? []).slice().sort((x, y) => x.port - y.port);
      // A host on one of its own links is the description's route, not the controller's.
      if (r === dst || own === undefined || links.some((l) => l.member === dst && !isRouter.has(dst))) continue;
      const via = links.find((l) => hops.get(l.member) === own - 1);
      if (via !== undefined) routes.get(r)?.set(dst, via.port);
    }
  }
  return routes;
}

/** The writes that take the routers' routes from `was` to `now`: only those that differ. */
export function changedRows(topo: Topology, was: Routes, now: Routes): RowWrite[] {
  const out: RowWrite[] = [];
  const row = (dst: string, port: number) => ({ match: { dst: `${topo.addresses.get(dst) ?? ""}/32` }, out: port });
  for (const router of topo.routers) {
    const member = `${topo.network}:${router}`;
    const before = was.get(router) ?? new Map<string, number>();
    const after = now.get(router) ?? new Map<string, number>();
    for (const [dst, port] of after) {
      const old = before.get(dst);
      if (old !== port)
        out.push({ op: old === undefined ? "insert" : "modify", member, table: "forward", row: row(dst, port) });
    }
    for (const [dst, port] of before)
      if (!after.has(dst)) out.push({ op: "delete", member, table: "forward", row: row(dst, port) });
  }
  return out;
}

export interface Routing {
  /** The routes written now. */
  readonly routes: Routes;
  /** The links down now ("NETWORK.NAME"). */
  readonly down: ReadonlySet<string>;
  /** This network's members down now (their keys), where the LinkEvents tells of members. */
  readonly membersDown: ReadonlySet<string>;
  /** Rows written: the first batch (every route), then one per change of this network's links. */
  readonly written: readonly Written[];
  /** Resolves when the rows of every change so far are written (rejects with the first write that failed). */
  settled(): Promise<void>;
  /** Stops listening. */
  stop(): void;
}

const count = (batch: readonly RowWrite[], op: RowWrite["op"]): number => batch.filter((w) => w.op === op).length;

/** Computes `network`'s routes, writes them through `device`, and rewrites what changes as `links` tells of links. */
export async function routing(
  device: Device,
  description: Description,
  network: string,
  links?: LinkEvents,
): Promise<Routing> {
  const topo = topologyOf(description, network);
  const ours = new Set(topo.edges.map((e) => e.name));
  const down = new Set<string>();
  const membersDown = new Set<string>();
  let routes: Routes = new Map();
  const written: Written[] = [];
  const apply = async (linksDown: ReadonlySet<string>, members: ReadonlySet<string>): Promise<void> => {
    const now = routesOf(topo, linksDown, members);
    const batch = changedRows(topo, routes, now);
    if (batch.length > 0) await device.write(batch);
    routes = now;
    written.push({
      inserted: count(batch, "insert"),
      modified: count(batch, "modify"),
      deleted: count(batch, "delete"),
    });
  };
  await apply(new Set(), new Set());
  let writes: Promise<void> = Promise.resolve();
  let failed: unknown;
  const recompute = (): void => {
    // This change's view, whatever changes before its turn comes.
    const [linksNow, membersNow] = [new Set(down), new Set(membersDown)];
    writes = writes
      .then(() => apply(linksNow, membersNow))
      .catch((e: unknown) => {
        failed ??= e;
      });
  };
  const offLinks = links?.onLinkChange((change: LinkChange) => {
    const mine = change.links.filter((l) => ours.has(l));
    if (mine.length === 0) return;
    for (const l of mine) change.up ? down.delete(l) : down.add(l);
    recompute();
  });
  const offMembers = links?.onMemberChange?.((change: MemberChange) => {
    const mine = change.members.flatMap((m) => (m.startsWith(`${network}:`) ? [m.slice(network.length + 1)] : []));
    if (mine.length === 0) return;
    for (const m of mine) change.up ? membersDown.delete(m) : membersDown.add(m);
    recompute();
  });
  return {
    get routes() {
      return routes;
    },
    down,
    membersDown,
    written,
    settled: async () => {
      await writes;
      if (failed !== undefined) throw failed;
    },
    stop: () => {
      offLinks?.();
      offMembers?.();
    },
  };
}
