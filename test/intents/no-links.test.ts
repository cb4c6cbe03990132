// A member that reaches nobody under routes: (no links, or none it sends on) is
// still a member (seed §2.2.2): it acquires and delivers what is addressed to it,
// its forward table has no row, nobody routes to it, and the analysis counts the
// pairs it is not in as unreached. Each case is a description, the lone member's
// rows, and the member pairs `strata analyze` finds reached, counted by hand from
// the links.

import { describe, expect, test } from "vitest";
import { Analysis } from "../../src/analysis/analysis.js";
import { report } from "../../src/analysis/properties.js";
import { compile } from "../../src/control/compile.js";
import { parseSpec } from "../../src/description/load.js";
import { SpecError } from "../../src/description/problems.js";

type Doc = Record<string, unknown>;

const two = (from: string, to: string): Doc => ({ from, to, mode: "two-way" });
const infra = (name: string, more: Doc = {}): Doc => ({ name, role: "infra", ...more });

/** A network `ip` of this header with these members and links, routed by routes: (and what else it says). */
function routed(header: string, members: Doc, links: readonly Doc[], more: Doc = {}): Doc {
  return { ip: { header, members, links, routes: {}, ...more } };
}

/** A tenant IPv4 network meshed over a routed fabric by IP in IP, with a fourth tenant member outside the mesh. */
const OVERLAY: Doc = {
  fabric: {
    header: "ipv4",
    members: { s1: { name: "10.0.0.1" }, s2: { name: "10.0.0.2" }, s3: { name: "10.0.0.3" }, r1: infra("10.0.255.1") },
    links: [two("s1", "r1"), two("s2", "r1"), two("s3", "r1")],
    routes: {},
  },
  tenant: {
    header: "ipv4",
    members: {
      t1: infra("192.168.0.1", { machine: "s1" }),
      t2: infra("192.168.0.2", { machine: "s2" }),
      t3: infra("192.168.0.3", { machine: "s3" }),
      t4: infra("192.168.0.4"),
    },
    overlays: { members: ["t1", "t2", "t3"], underlay: "fabric", encapsulation: "ip-in-ip" },
    routes: {},
  },
};

interface Case {
  readonly name: string;
  readonly networks: Doc;
  /** The lone member, "network.member". */
  readonly lone: string;
  readonly acquire: readonly string[];
  /** Each network's member pairs reached, of all. */
  readonly pairs: Readonly<Record<string, readonly [number, number]>>;
}

const CASES: readonly Case[] = [
  {
    name: "a host with no links beside a router and two hosts",
    networks: routed(
      "ipv4",
      { r1: infra("10.0.0.1"), h1: { name: "10.0.0.2" }, h2: { name: "10.0.0.3" }, lone: { name: "10.0.0.9" } },
      [two("h1", "r1"), two("h2", "r1")],
    ),
    lone: "ip.lone",
    acquire: ["dst 10.0.0.9 → receive"],
    pairs: { ip: [6, 12] },
  },
  {
    name: "a router with no links, owning a prefix",
    networks: routed(
      "ipv4",
      { r1: infra("10.0.0.1"), h1: { name: "10.0.0.2" }, r9: infra("10.0.0.9") },
      [two("h1", "r1")],
      { routes: { prefixes: { r9: ["10.9.0.0/16"] } } },
    ),
    lone: "ip.r9",
    acquire: ["dst 10.0.0.9 → receive", "dst 10.9.0.0/16 → receive", "any → forward"],
    pairs: { ip: [2, 6] },
  },
  {
    name: "a host reached by a one-way link, sending on none",
    networks: routed("ipv4", { r1: infra("10.0.0.1"), h1: { name: "10.0.0.2" }, h3: { name: "10.0.0.3" } }, [
      two("h1", "r1"),
      { from: "r1", to: "h3" },
    ]),
    lone: "ip.h3",
    acquire: ["dst 10.0.0.3 → receive"],
    pairs: { ip: [4, 6] },
  },
  {
    name: "an IPv6 host with no links",
    networks: routed("ipv6", { r1: infra("2001:db8::1"), h1: { name: "2001:db8::2" }, h9: { name: "2001:db8::9" } }, [
      two("h1", "r1"),
    ]),
    lone: "ip.h9",
    acquire: ["dst 2001:db8::9 → receive"],
    pairs: { ip: [2, 6] },
  },
  {
    name: "the only member of its network",
    networks: routed("ipv4", { r1: infra("10.0.0.1") }, []),
    lone: "ip.r1",
    acquire: ["dst 10.0.0.1 → receive", "any → forward"],
    pairs: { ip: [0, 0] },
  },
  {
    name: "an overlay member outside the mesh, with no links",
    networks: OVERLAY,
    lone: "tenant.t4",
    acquire: ["dst 192.168.0.4 → receive", "any → forward"],
    pairs: { fabric: [12, 12], tenant: [6, 12] },
  },
];

describe("a member that reaches nobody under routes:", () => {
  test.each(CASES)("$name: its own rows, no forward row, and the pairs reached", (c) => {
    const compiled = compile(parseSpec(JSON.stringify({ networks: c.networks }), "t.yaml"));
    const m = compiled.members.find((x) => x.qualified === c.lone);
    const rows = (role: "acquire" | "forward" | "receive"): string[] => m?.tables[role]?.rows.map((r) => r.text) ?? [];
    expect(rows("acquire")).toEqual(c.acquire);
    expect(rows("forward")).toEqual([]);
    expect(rows("receive")).toEqual(["any → deliver"]);
    const r = report(new Analysis(compiled));
    const pairs = Object.fromEntries(r.components.map((k) => [k.name, [k.reachable.pairs, k.reachable.of]]));
    expect(pairs).toEqual(c.pairs);
    for (const k of r.components) expect(k.properties.find((p) => p.name === "No_routing_loops")?.holds).toBe(true);
  });

  test("a demand on it is refused in one line: no path leads there", () => {
    const [plain] = CASES;
    const networks = structuredClone(plain?.networks) as { ip: Doc };
    networks.ip.demands = [{ from: "h1", to: "lone" }];
    let messages: string[] = [];
    try {
      parseSpec(JSON.stringify({ networks }), "t.yaml");
    } catch (err) {
      if (!(err instanceof SpecError)) throw err;
      messages = err.errors.map((e) => e.message.replace(/^t\.yaml: \d+:\d+ /, ""));
    }
    expect(messages).toEqual([
      "networks.ip.demands[0]: lone cannot be reached from h1: no path over ip's links leads there " +
        "through infra members (link h1 to lone's side, or remove the demand)",
    ]);
  });
});
