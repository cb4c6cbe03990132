// Meshes for the overlays tests: an underlay of sites and routers, an overlay
// with a member on each site's machine and its overlays: intent, and the two
// ways of asking whether it is fully meshed (the analysis, a replay).

import { Analysis } from "../../../src/analysis/analysis.js";
import { report } from "../../../src/analysis/properties.js";
import { compile } from "../../../src/control/compile.js";
import type { Spec } from "../../../src/description/types.js";
import { Engine } from "../../../src/engine/engine.js";
import { batchOf } from "../../pipeline/helpers/engine-run.js";
import { ethernetFrame, ipv4Packet } from "../../pipeline/helpers/packets.js";

type Doc = Record<string, unknown>;

/** How a test mesh is made for one encapsulation: the designs, and how the overlay forwards between its members. */
export interface Kind {
  readonly encapsulation: string;
  readonly underlay: string;
  readonly overlay: "ethernet" | "ipv4";
}

export const KINDS: readonly Kind[] = [
  { encapsulation: "vxlan", underlay: "vxlan", overlay: "ethernet" },
  { encapsulation: "gre", underlay: "gre", overlay: "ipv4" },
  { encapsulation: "ip-in-ip", underlay: "ipv4", overlay: "ipv4" },
];

/** An underlay: `sites` site members s0.. and `routers` routers r0.. (infra), and links by member key. */
export interface Underlay {
  readonly sites: number;
  readonly routers: number;
  readonly links: readonly (readonly [string, string])[];
}

export const two = (from: string, to: string): Doc => ({ from, to, mode: "two-way" });

/** An overlay member's name: a MAC or an IPv4 address (192.168.0.1 + i). */
export function overlayName(kind: Kind, i: number): string {
  return kind.overlay === "ethernet" ? `02:00:00:00:00:${(i + 1).toString(16).padStart(2, "0")}` : `192.168.0.${i + 1}`;
}

/** The description: underlay `u` (routed, with routes:), overlay `o` with members m0.. on the sites' machines. */
export function meshDescription(kind: Kind, u: Underlay, overlays: Doc = {}, more: Doc = {}): Doc {
  const under: Record<string, Doc> = {};
  for (let i = 0; i < u.sites; i++) under[`s${i}`] = { name: `10.0.0.${i + 1}` };
  for (let r = 0; r < u.routers; r++) under[`r${r}`] = { name: `10.0.255.${r + 1}`, role: "infra" };
  const over: Record<string, Doc> = {};
  for (let i = 0; i < u.sites; i++) over[`m${i}`] = { name: overlayName(kind, i), machine: `s${i}` };
  const forwarding = kind.overlay === "ethernet" ? { l2: {} } : { routes: {} };
  return {
    networks: {
      u: { header: kind.underlay, members: under, links: u.links.map(([a, b]) => two(a, b)), routes: {} },
      o: {
        header: kind.overlay,
        members: over,
        overlays: { underlay: "u", encapsulation: kind.encapsulation, ...overlays },
        ...forwarding,
        demands: [{ from: overlays["members"] ?? "*", to: overlays["members"] ?? "*" }],
        ...more,
      },
    },
  };
}

/** Every overlay member sends to every other; the members each packet was delivered to, per (sender, receiver). */
export function replayMesh(
  spec: Spec,
  kind: Kind,
  before: (engine: Engine) => void = () => undefined,
): { sent: string[]; got: string[] } {
  const members = spec.networks.find((n) => n.name === "o")?.members ?? [];
  const engine = Engine.open({ compiled: compile(spec), endpoints: members.map((m) => `o:${m.key}`) });
  engine.connect({ deliveries: true });
  before(engine);
  const got: string[] = [];
  let now = "";
  engine.onDeliver((member) => {
    const m = engine.installed.compiled.members[member];
    got.push(`${now}@${engine.installed.compiled.networks[m?.network ?? -1]?.name}.${m?.key}`);
  });
  const sent: string[] = [];
  try {
    members.forEach((from, s) =>
      members.forEach((to) => {
        if (to === from) return;
        const bytes =
          kind.overlay === "ethernet"
            ? ethernetFrame({ src: from.nameValue, dst: to.nameValue })
            : ipv4Packet({ src: from.nameValue, dst: to.nameValue });
        now = `${from.key}>${to.key}`;
        sent.push(`${now}@o.${to.key}`);
        engine.run(batchOf([{ endpoint: s, bytes, origLen: bytes.length, tsSec: 0, tsNsec: 0 }]));
      }),
    );
  } finally {
    engine.stop();
  }
  return { sent, got };
}

/** The analysis of the overlay: fully reachable, demands met, no loops, and every overlay link implemented. */
export function analysed(spec: Spec): Record<string, boolean> {
  const r = report(new Analysis(compile(spec)));
  const o = r.components.find((c) => c.networks.includes("o"));
  const holds = (name: string): boolean => o?.properties.find((p) => p.name === name)?.holds === true;
  return {
    Fully_reachable: holds("Fully_reachable"),
    No_routing_loops: holds("No_routing_loops"),
    Network_satisfies_communication_demands: holds("Network_satisfies_communication_demands"),
    Underlay_satisfies_layering_demands: r.layering.holds,
  };
}
