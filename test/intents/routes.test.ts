// The routes intent compiled to rows: aggregation, shortest paths (costs, ECMP
// through anycast, only infra members relay), hand rows beside the intent's, and
// bad intents as one line each.

import { describe, expect, test } from "vitest";
import { errorsOf, load } from "./helpers/load.js";
import { compile } from "../../src/control/compile.js";
import type { Spec } from "../../src/description/types.js";
import { aggregate, type Route } from "../../src/intents/aggregate.js";

type Doc = Record<string, unknown>;

/** An ipv4 network `ip` of routers r1.. (infra) and hosts h1.. with these links, and what else it says. */
function ipNet(members: Record<string, string>, links: readonly Doc[], more: Doc = {}): string {
  const m = Object.fromEntries(
    Object.entries(members).map(([k, name]) => [k, { name, ...(k.startsWith("h") ? {} : { role: "infra" }) }]),
  );
  return JSON.stringify({ networks: { ip: { header: "ipv4", ttl: "decrement", members: m, links, ...more } } });
}

const two = (from: string, to: string, extra: Doc = {}): Doc => ({ from, to, mode: "two-way", ...extra });

/** A line h1 - r1 - r2 - h2. */
const LINE = ipNet({ r1: "10.0.0.1", r2: "10.0.0.2", h1: "10.0.1.1", h2: "10.0.2.1" }, [
  two("h1.1", "r1.1"),
  two("r1.2", "r2.1"),
  two("r2.2", "h2.1"),
]);

/** Each compiled row of a member's table as "text". */
function rowsOf(text: string, member: string, role: "acquire" | "forward" | "receive"): string[] {
  const c = compile(load(text));
  return c.members.find((m) => m.key === member)?.tables[role]?.rows.map((r) => r.text) ?? [];
}

/** A route to `value`/`len` (a number: an IPv4-wide field's values are numbers, ./aggregate.ts asNumbers). */
const r = (value: number, len: number, out: number, index = value): Route<number | bigint> => ({
  value,
  len,
  out,
  first: index,
  last: index,
  count: 1,
});
/** The same routes with bigint values, as an IPv6-wide field holds them. */
const big = (routes: readonly Route<number | bigint>[]): Route<number | bigint>[] =>
  routes.map((x) => ({ ...x, value: BigInt(x.value) }));
const show = (routes: readonly Route<number | bigint>[]): string[] => routes.map((x) => `${x.value}/${x.len}>${x.out}`);

describe("exact aggregation", () => {
  const CASES: { name: string; routes: Route<number | bigint>[]; want: string[] }[] = [
    { name: "two siblings, one next hop", routes: [r(0, 32, 1), r(1, 32, 1)], want: ["0/31>1"] },
    { name: "four in a row", routes: [r(4, 32, 1), r(5, 32, 1), r(6, 32, 1), r(7, 32, 1)], want: ["4/30>1"] },
    { name: "not siblings (1 and 2)", routes: [r(1, 32, 1), r(2, 32, 1)], want: ["1/32>1", "2/32>1"] },
    { name: "two next hops", routes: [r(0, 32, 1), r(1, 32, 2)], want: ["0/32>1", "1/32>2"] },
    {
      name: "the parent is a destination of its own",
      routes: [r(0, 32, 1), r(1, 32, 1), r(0, 31, 2)],
      want: ["0/32>1", "1/32>1", "0/31>2"],
    },
    { name: "an odd one left over", routes: [r(4, 32, 1), r(5, 32, 1), r(6, 32, 1)], want: ["6/32>1", "4/31>1"] },
    {
      name: "out of order, nested prefixes: a length at a time",
      routes: [r(5, 32, 1), r(4, 32, 1), r(0, 24, 2), r(6, 31, 1)],
      want: ["4/30>1", "0/24>2"],
    },
    {
      name: "the same in IPv6's width",
      routes: big([r(0, 128, 1), r(1, 128, 1), r(2, 127, 1)]),
      want: ["0/126>1"],
    },
  ];
  test.each(CASES)("$name", ({ name, routes, want }) => {
    expect(show(aggregate(routes, name.includes("IPv6") ? 128 : 32))).toEqual(want);
  });

  test.each([32, 128])("in order or not, the same rows (width %i)", (width) => {
    const some = [0, 1, 2, 3, 5, 6, 7, 9].map((v) => r(v, width, v === 9 ? 2 : 1));
    const routes = width > 48 ? big(some) : some;
    expect(show(aggregate(routes, width))).toEqual(show(aggregate([...routes].reverse(), width)));
    expect(show(aggregate(routes, width))).toEqual([
      `5/${width}>1`,
      `9/${width}>2`,
      `6/${width - 1}>1`,
      `0/${width - 2}>1`,
    ]);
  });

  test("a merged row names its first and last destination and how many", () => {
    const [row] = aggregate([r(0, 32, 1, 7), r(1, 32, 1, 9)], 32);
    expect(row).toMatchObject({ first: 7, last: 9, count: 2 });
  });
});

describe("routes over the links", () => {
  const DIAMOND_MEMBERS = { s: "10.0.0.1", m1: "10.0.0.2", m2: "10.0.0.3", d: "10.0.0.4" };
  // s reaches m1 and m2 through one anycast link (group mid), and m1 alone through a point-to-point link.
  const diamond = (costs?: Doc): string =>
    ipNet(
      DIAMOND_MEMBERS,
      [
        { from: "s.1", to: ["m1.1", "m2.1"], mode: "anycast", group: "mid" },
        two("s.2", "m1.2", { name: "s-m1" }),
        two("m1.3", "d.1", { name: "m1-d" }),
        two("m2.3", "d.2", { name: "m2-d" }),
      ],
      { routes: costs === undefined ? {} : { costs } },
    );
  const CASES: { name: string; text: string; member: string; want: string[] }[] = [
    {
      name: "a line: each router's next hop toward each member",
      text: LINE,
      member: "r1",
      want: ["dst 10.0.0.2/32 → out 2", "dst 10.0.1.1/32 → out 1", "dst 10.0.2.1/32 → out 2"],
    },
    {
      name: "a host sends everything on its one link",
      text: LINE,
      member: "h1",
      want: ["dst 10.0.0.1/32 → out 1", "dst 10.0.0.2/32 → out 1", "dst 10.0.2.1/32 → out 1"],
    },
    {
      name: "equal-cost next hops through an anycast group: ECMP",
      text: diamond(),
      member: "s",
      want: ["dst 10.0.0.2/32 → out 2", "dst 10.0.0.3/32 → out 1", "dst 10.0.0.4/32 → out 1"],
    },
    {
      name: "costs make one receiver farther: the point-to-point link to the near one",
      text: diamond({ "m2-d": 5 }),
      member: "s",
      want: ["dst 10.0.0.2/32 → out 2", "dst 10.0.0.3/32 → out 1", "dst 10.0.0.4/32 → out 2"],
    },
    {
      name: "a user member relays nothing: no route through h2",
      text: ipNet({ r1: "10.0.0.1", h2: "10.0.2.1", r3: "10.0.0.3" }, [two("r1.1", "h2.1"), two("h2.2", "r3.1")], {
        routes: {},
      }),
      member: "r1",
      want: ["dst 10.0.2.1/32 → out 1"],
    },
  ];
  test.each(CASES)("$name", ({ text, member, want }) => {
    const doc = JSON.parse(text) as { networks: { ip: Doc } };
    doc.networks.ip["routes"] ??= {};
    expect(rowsOf(JSON.stringify(doc), member, "forward")).toEqual(want);
  });

  test("a member acquires its own name and prefixes for delivery; a router forwards the rest", () => {
    const text = ipNet({ r1: "10.0.0.1", h1: "10.0.1.1" }, [two("h1.1", "r1.1")], {
      routes: { prefixes: { r1: ["10.9.0.0/16"] } },
    });
    expect(rowsOf(text, "r1", "acquire")).toEqual([
      "dst 10.0.0.1 → receive",
      "dst 10.9.0.0/16 → receive",
      "any → forward",
    ]);
    expect(rowsOf(text, "h1", "acquire")).toEqual(["dst 10.0.1.1 → receive"]);
    expect(rowsOf(text, "h1", "forward")).toEqual(["dst 10.0.0.1/32 → out 1", "dst 10.9.0.0/16 → out 1"]);
    expect(rowsOf(text, "h1", "receive")).toEqual(["any → deliver"]);
  });
});

describe("hand rows beside the intent's", () => {
  const withHand = (tables: Doc, demands: Doc[] = []): string => {
    const doc = JSON.parse(LINE) as { networks: { ip: Doc } };
    Object.assign(doc.networks.ip, { routes: {}, tables, demands });
    return JSON.stringify(doc);
  };

  test("a hand row comes first; the intent's row for the same match is left out, said once", () => {
    const notes: string[] = [];
    const text = withHand({ r1: { forward: [{ match: { dst: "10.0.2.1/32" }, out: "drop" }] } });
    const spec = load(text, (l) => notes.push(l));
    const rows = spec.networks[0]?.tables.get("r1")?.forward?.rows ?? [];
    expect(rows.map((x) => (x.intent === undefined ? "hand" : x.intent.destination))).toEqual(["hand", "r2", "h1"]);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain("1 row of the routes intent for r1's forward table is written by hand here");
  });

  const BAD: { name: string; text: string; want: string }[] = [
    {
      name: "a hand row drops what a demand asks for",
      text: withHand({ r1: { forward: [{ match: { dst: "10.0.2.1" }, out: "drop" }] } }, [{ from: "h1", to: "h2" }]),
      want:
        "networks.ip.tables.r1.forward[0]: this hand row drops what networks.ip.demands[0] asks for " +
        "(h1 → h2) at r1",
    },
    {
      name: "a hand row sends it back, round a loop",
      text: withHand({ r2: { forward: [{ match: { dst: "10.0.2.0/24" }, out: 1 }] } }, [{ from: "h1", to: "h2" }]),
      want:
        "networks.ip.tables.r2.forward[0]: this hand row sends what networks.ip.demands[0] asks for " +
        "(h1 → h2) round a loop back to r1",
    },
    {
      name: "a hand table's capacity cannot hold the intent's rows too",
      text: withHand({ r1: { forward: { capacity: 1, rows: [{ match: { dst: "10.9.0.0/16" }, out: 1 }] } } }),
      want: "networks.ip.tables.r1.forward.capacity: capacity 1 cannot hold 1 hand rows and the routes intent's 3",
    },
    {
      name: "a hand table's kind cannot hold the intent's prefixes",
      text: withHand({ r1: { forward: { kind: "exact", rows: [{ match: { dst: "10.9.0.1" }, out: 1 }] } } }),
      want: "networks.ip.tables.r1.forward.kind: kind exact cannot hold the routes intent's prefix rows",
    },
  ];
  test.each(BAD)("$name: one line", ({ text, want }) => {
    const errors = errorsOf(text);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^\d+:\d+ /);
    expect(errors[0]).toContain(want);
  });
});

describe("bad intents: one line each, naming the place and the fix", () => {
  const net = (more: Doc, header = "ipv4"): string => {
    const doc = JSON.parse(LINE) as { networks: { ip: Doc } };
    Object.assign(doc.networks.ip, { header, ...more });
    if (header === "ethernet")
      doc.networks.ip["members"] = {
        r1: { name: "02:00:00:00:00:01", role: "infra" },
        h1: { name: "02:00:00:00:00:02" },
      };
    if (header === "ethernet") doc.networks.ip["links"] = [two("h1.1", "r1.1")];
    if (header === "ethernet") delete doc.networks.ip["ttl"];
    return JSON.stringify(doc);
  };
  const CASES: { name: string; text: string; want: string }[] = [
    {
      name: "routes on an Ethernet network",
      text: net({ routes: {} }, "ethernet"),
      want:
        "networks.ip.routes: routes are for IP networks: ip's header is ethernet " +
        "(an Ethernet network's intent is l2:, forwarding to its hosts and a flood tree for broadcast; " +
        "routes: is for an ipv4 or ipv6 network)",
    },
    {
      name: "a cost for a link that is not there",
      text: net({ routes: { costs: { "r1.2-r3.1": 2 } } }),
      want: `networks.ip.routes.costs["r1.2-r3.1"]: no link named 'r1.2-r3.1' in network ip (did you mean 'r1.2-r2.1'?`,
    },
    {
      name: "a prefix longer than the address",
      text: net({ routes: { prefixes: { r1: ["10.9.0.0/33"] } } }),
      want: "networks.ip.routes.prefixes.r1[0]: prefix length 33 is longer than dst (32 bits)",
    },
    {
      name: "an address outside the design's width",
      text: net({ routes: { prefixes: { r1: ["300.0.0.0/8"] } } }),
      want: "networks.ip.routes.prefixes.r1[0]: ",
    },
    {
      name: "prefixes of an unknown member",
      text: net({ routes: { prefixes: { r9: ["10.9.0.0/16"] } } }),
      want: "networks.ip.routes.prefixes.r9: no member 'r9' in network ip (did you mean 'r1'?",
    },
    {
      name: "a demand naming an unknown member",
      text: net({ routes: {}, demands: [{ from: "h1", to: ["h2", "h7"] }] }),
      want: "networks.ip.demands[0].to[1]: no member 'h7' in network ip",
    },
    {
      name: "an unreachable destination",
      text: ipNet({ r1: "10.0.0.1", h1: "10.0.1.1", h2: "10.0.2.1" }, [two("h1.1", "r1.1")], {
        routes: {},
        demands: [{ from: "h1", to: "h2" }],
      }),
      want:
        "networks.ip.demands[0]: h2 cannot be reached from h1: no path over ip's links leads there " +
        "through infra members (link h1 to h2's side, or remove the demand)",
    },
    {
      name: "an unknown key in routes",
      text: net({ routes: { cost: {} } }),
      want: "networks.ip.routes.cost: unknown key 'cost'",
    },
  ];
  test.each(CASES)("$name", ({ text, want }) => {
    const errors = errorsOf(text);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(want);
  });
});
