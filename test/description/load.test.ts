import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, test, vi } from "vitest";
import { parse as parseYaml } from "yaml";
import { InputError } from "../../src/errors.js";
import { loadSpec, parseSpec } from "../../src/description/load.js";
import { MAX_ERRORS, SpecError } from "../../src/description/problems.js";
import type { NetworkSpec, RowSpec, Spec } from "../../src/description/types.js";

const HUB = "test/fixtures/specs/hub.yaml";

/** The errors of a description as "WHERE: PROBLEM (FIX)" without the file. */
function errorsOf(text: string, file = "t.yaml"): string[] {
  try {
    parseSpec(text, file);
  } catch (err) {
    if (!(err instanceof SpecError)) throw err;
    return err.errors.map((e) => e.message.slice(`${file}: `.length));
  }
  return [];
}

function network(spec: Spec, name: string): NetworkSpec {
  const n = spec.networks.find((x) => x.name === name);
  if (n === undefined) throw new Error(`no network ${name}`);
  return n;
}

function rows(
  n: NetworkSpec,
  member: string,
  role: "acquire" | "forward" | "transmit" | "send" | "receive",
): readonly RowSpec[] {
  return n.tables.get(member)?.[role]?.rows ?? [];
}

describe("a valid description", () => {
  test("the hub example loads into the expected Spec", () => {
    const spec = loadSpec(HUB);
    expect(spec.file).toBe(HUB);
    const lan = network(spec, "lan");
    expect(lan.design.name).toBe("ethernet");
    expect(lan.decrementTtl).toBe(false);
    expect(lan.members.map((m) => [m.key, m.name, m.nameValue, m.role, m.machine])).toEqual([
      ["h1", "02:00:00:00:00:01", 0x0200_0000_0001n, "user", "h1"],
      ["h2", "02:00:00:00:00:02", 0x0200_0000_0002n, "user", "h2"],
      ["h3", "02:00:00:00:00:03", 0x0200_0000_0003n, "user", "h3"],
      ["hub", "02:00:00:00:00:fe", 0x0200_0000_00fen, "infra", "hub"],
    ]);
    expect(lan.links.map((l) => [l.name, l.mode, l.from, l.to, l.record])).toEqual([
      ["h1.1-hub.1", "two-way", { member: "h1", ident: 1 }, [{ member: "hub", ident: 1 }], true],
      ["h2.1-hub.2", "two-way", { member: "h2", ident: 1 }, [{ member: "hub", ident: 2 }], true],
      ["h3.1-hub.3", "two-way", { member: "h3", ident: 1 }, [{ member: "hub", ident: 3 }], true],
    ]);
    expect(lan.links[1]?.at).toEqual({ file: HUB, path: "networks.lan.links[1]", line: 16, column: 9 });

    const flood = rows(lan, "hub", "forward")[3];
    expect(flood?.in).toBe(1);
    expect(flood?.match).toEqual(new Map([["dst", { kind: "exact", value: 0xffff_ffff_ffffn }]]));
    expect(flood?.action).toEqual({ kind: "out", outLinks: [2, 3] });
    expect(flood?.at.line).toBe(55);
    expect(rows(lan, "hub", "acquire")).toMatchObject([{ match: new Map(), action: { kind: "forward" } }]);
    expect(rows(lan, "h1", "forward")).toMatchObject([{ in: "self", action: { kind: "out", outLinks: [1] } }]);
    expect(rows(lan, "h1", "receive")).toMatchObject([{ action: { kind: "deliver" } }]);

    // send: every writable field, src defaulting to the member's own name.
    const send = rows(lan, "h1", "send")[0];
    expect(send?.session).toBe(2);
    expect(send?.action).toEqual({
      kind: "push",
      header: new Map([
        ["dst", 0x0200_0000_0002n],
        ["src", 0x0200_0000_0001n],
        ["type", 0x0800n],
        ["vid", 0n],
        ["pcp", 0n],
        ["ivid", 0n],
      ]),
    });
    expect(lan.tables.get("hub")?.transmit).toBeUndefined();
  });

  const ROUTER =
    `
networks:
  ip:
    header: ipv4
    ttl: decrement
    members:
      h1: { name: 10.0.1.1 }
      r:  { name: 10.0.1.254, role: infra, machine: box }
      h2: { name: 167772674 }          # 10.0.2.2 as an integer
    links:
      - { from: h1.1, to: r.1, mode: two-way }
      - { from: r.2, to: h2.1, mode: two-way, name: r-h2, record: false }
      - { from: r.9, external: uplink, mode: two-way }
      - { external: feed, to: [r.7, h2.7], mode: allcast, group: feeds }
    tables:
      r:
        acquire: { kind: ternary, capacity: 16, rows: [ { in: 1, match: { dst: 10.0.1.254 }, do: receive }, ` +
    `{ do: both } ] }
        forward:
          kind: lpm
          rows:
            - { match: { dst: 10.0.2.0/24 }, out: [2] }
            - { match: { dst: 10.0.1.0/24, src: "*" }, out: 1 }
            - { in: 7, out: [1, 2, 9] }
            - { out: drop }
        transmit: [ { out: 1, via: physical }, { out: 2 } ]
        send: [ { session: 4294967295, header: { dst: 10.0.2.2, proto: 17 } } ]
        receive: [ { match: { proto: 6, dport: "0..1023" }, do: deliver }, { match: { proto: 17 } } ]
`;

  test("an IPv4 router with external, group and explicit tables", () => {
    const ip = network(parseSpec(ROUTER, "router.yaml"), "ip");
    expect(ip.decrementTtl).toBe(true);
    expect(ip.members.find((m) => m.key === "h2")).toMatchObject({ name: "10.0.2.2", nameValue: 0x0a000202n });
    expect(ip.members.find((m) => m.key === "r")?.machine).toBe("box");
    expect(ip.links.map((l) => [l.name, l.mode, l.from, l.to, l.group, l.record])).toEqual([
      ["h1.1-r.1", "two-way", { member: "h1", ident: 1 }, [{ member: "r", ident: 1 }], undefined, true],
      ["r-h2", "two-way", { member: "r", ident: 2 }, [{ member: "h2", ident: 1 }], undefined, false],
      ["uplink", "two-way", { member: "r", ident: 9 }, { external: "uplink" }, undefined, true],
      [
        "feed",
        "allcast",
        { external: "feed" },
        [
          { member: "r", ident: 7 },
          { member: "h2", ident: 7 },
        ],
        "feeds",
        true,
      ],
    ]);
    const r = ip.tables.get("r");
    expect(r?.acquire).toMatchObject({ role: "acquire", kind: "ternary", capacity: 16 });
    expect(r?.acquire?.rows[1]?.action).toEqual({ kind: "both" });
    expect(rows(ip, "r", "forward").map((row) => row.action)).toEqual([
      { kind: "out", outLinks: [2] },
      { kind: "out", outLinks: [1] },
      { kind: "out", outLinks: [1, 2, 9] },
      { kind: "drop" },
    ]);
    // The wildcard leaves src out of the match.
    expect([...(rows(ip, "r", "forward")[1]?.match.keys() ?? [])]).toEqual(["dst"]);
    expect(rows(ip, "r", "transmit").map((row) => [row.out, row.action.kind])).toEqual([
      [1, "physical"],
      [2, "physical"],
    ]);
    const send = rows(ip, "r", "send")[0];
    expect(send?.session).toBe(4294967295);
    expect(send?.action).toEqual({
      kind: "push",
      header: new Map([
        ["src", 0x0a0001fen],
        ["dst", 0x0a000202n],
        ["proto", 17n],
        ["ttl", 64n],
        ["dscp", 0n],
      ]),
    });
    expect(rows(ip, "r", "receive")[0]?.match.get("dport")).toEqual({ kind: "range", lo: 0n, hi: 1023n });
  });

  test("JSON gives the same Spec as YAML", () => {
    const yaml = parseSpec(ROUTER, "router.yaml");
    const json = parseSpec(JSON.stringify(parseYaml(ROUTER), null, 2), "router.json");
    const strip = (s: Spec): unknown =>
      JSON.parse(
        JSON.stringify(s, (k, v: unknown) =>
          k === "at" ? undefined : typeof v === "bigint" ? v.toString() : v instanceof Map ? [...v] : v,
        ),
      );
    expect(strip(json)).toEqual(strip({ ...yaml, file: "router.json" }));
  });

  test("x- keys hold anchors that networks merge in", () => {
    const spec = parseSpec(
      `x-lan: &lan\n  header: cna\n  members: { a: { name: 1 } }\nnetworks:\n ` +
        ` one: { <<: *lan }\n  two:\n    <<: *lan\n    ttl: keep\n`,
      "x.yaml",
    );
    expect(spec.networks.map((n) => [n.name, n.design.name, n.members.length])).toEqual([
      ["one", "cna", 1],
      ["two", "cna", 1],
    ]);
  });

  test("large integers keep their precision", () => {
    const spec = parseSpec(
      `networks:\n  six:\n    header: ipv6\n    members:\n      a: { name: 42540766411282592856903984951653826561 }\n`,
      "v6.yaml",
    );
    expect(network(spec, "six").members[0]?.name).toBe("2001:db8::1");
  });

  test("a two-way link shares its identifier at each end; links of one group share one too", () => {
    const text = `${BASE}
    links:
      - { from: h1.1, to: sw.1, mode: two-way }
      - { from: h1.2, to: [sw.2, h2.2], mode: allcast, group: g }
      - { from: sw.2, to: [h1.2, h2.2], mode: allcast, group: g }
    tables:
      sw:
        acquire: [ { in: 1, do: forward }, { in: 2, do: forward } ]
        forward: [ { in: 1, out: 1 }, { in: 2, out: 2 } ]
`;
    expect(errorsOf(text)).toEqual([]);
  });
});

/** Three members; cases append at line 8. */
const BASE = `networks:
  lan:
    header: ethernet
    members:
      h1: { name: "02:00:00:00:00:01" }
      h2: { name: "02:00:00:00:00:02" }
      sw: { name: "02:00:00:00:00:fe", role: infra }`;

const LINKS = `
    links:
      - { from: h1.1, to: sw.1, mode: two-way }
      - { from: sw.2, to: h2.1 }`;

/** [case, description, expected errors: [where, text] in order]. */
const BAD: [string, string, [string, string][]][] = [
  [
    "YAML syntax",
    `networks:\n  lan: [1,\n`,
    [["3:1", "syntax error: flow sequence in block collection must be sufficiently indented"]],
  ],
  [
    "YAML duplicate key",
    `${BASE}\n      h1: { name: "02:00:00:00:00:09" }\n`,
    [["8:7", "syntax error: map keys must be unique (each key may appear once"]],
  ],
  [
    "JSON duplicate key",
    `{"networks": {"a": {"header": "cna", "members": {}}, "a": {}}}`,
    [["1:54", "map keys must be unique"]],
  ],
  ["JSON syntax", `{"networks": {"a": }`, [["1:", "syntax error:"]]],
  ["two documents", `networks: {}\n---\nx: 1\n`, [["2:1", "a description is a single YAML document"]]],
  [
    "bare wildcard",
    `${BASE}\n    tables: { sw: { acquire: [ { match: { dst: * }, do: receive } ] } }\n`,
    [["8:48", 'syntax error: alias cannot be an empty string (a wildcard is written "*" with quotes']],
  ],
  ["alias without anchor", `networks: *nets\n`, [["1:11", "alias *nets has no anchor &nets before it"]]],
  ["empty", ``, [["", "the description is empty; it needs a top-level `networks:` map"]]],
  ["comments only", `# nothing yet\n`, [["", "the description is empty"]]],
  ["not a map", `- a\n- b\n`, [["1:1", "must be a map with the key networks, got a list"]]],
  [
    "no networks",
    `networks: {}\n`,
    [["1:11 networks", "must not be empty (expected a map from network name to network)"]],
  ],
  [
    "unknown top-level key",
    `netwroks: {}\n`,
    [
      ["1:1:", "missing key 'networks'"],
      ["1:1 netwroks", "unknown key 'netwroks' (did you mean 'networks'?)"],
    ],
  ],
  [
    "unknown key with suggestion",
    `${BASE}\n    links: [ { from: h1.1, to: sw.1, mdoe: two-way } ]\n`,
    [["8:38 networks.lan.links[0].mdoe", "unknown key 'mdoe' (did you mean 'mode'?)"]],
  ],
  [
    "unknown key without suggestion",
    `${BASE}\n    colour: blue\n`,
    [
      [
        "8:5 networks.lan.colour",
        "unknown key 'colour' (valid keys here: header, ttl, members, links, nonlocal, tables, routes, l2, " +
          "overlays, demands)",
      ],
    ],
  ],
  [
    "bad role",
    `${BASE}\n      h3: { name: "02:00:00:00:00:03", role: host }\n`,
    [["8:46 networks.lan.members.h3.role", "must be user or infra, got 'host'"]],
  ],
  [
    "bad network name",
    `networks:\n  1lan: { header: cna, members: { a: { name: 1 } } }\n`,
    [["2:3 networks.1lan", "'1lan' is not allowed as a key here (a key must be a name: a letter"]],
  ],
  [
    "bad header name",
    `${BASE.replace("ethernet", "ethernt")}\n`,
    [
      [
        "3:13 networks.lan.header",
        "unknown header design 'ethernt' (did you mean 'ethernet'? designs: " +
          "ethernet, ipv4, ipv6, cna, gre, vxlan, mpls)",
      ],
    ],
  ],
  [
    "ttl without a hop limit",
    `${BASE.replace("ethernet", "ethernet\n    ttl: decrement")}\n`,
    [["4:10 networks.lan.ttl", "ttl: decrement needs a design with a TTL or hop limit; ethernet has none"]],
  ],
  [
    "bad member name",
    `${BASE}\n      h3: { name: "02:00:00:00:03" }\n`,
    [["8:19 networks.lan.members.h3.name", "'02:00:00:00:03' is not a MAC address"]],
  ],
  [
    "member name is a pattern",
    `${BASE}\n      h3: { name: "02:00:00:00:00:00/8" }\n`,
    [["8:19", "is a pattern; dst takes one exact value here"]],
  ],
  [
    "duplicate member name",
    `${BASE}\n      h3: { name: "02-00-00-00-00-01" }\n`,
    [
      [
        "8:19 networks.lan.members.h3.name",
        "02-00-00-00-00-01 is already the name of h1 (member names (addresses) are unique in a network)",
      ],
    ],
  ],
  [
    "duplicate link identifier at a member",
    `${BASE}${LINKS}\n      - { from: h2.2, to: sw.1 }\n`,
    [
      [
        "11:27 networks.lan.links[2].to",
        "sw already uses identifier 1 for link h1.1-sw.1 (links[0]) (at a " +
          "member only the two directions of a two-way link, or links of one " +
          "group, share an identifier; the first free one at sw is 3)",
      ],
    ],
  ],
  [
    "identifier reused by another direction",
    `${BASE}${LINKS}\n      - { from: h2.1, to: sw.3 }\n`,
    [["11:17 networks.lan.links[2].from", "h2 already uses identifier 1 for link sw.2-h2.1 (links[1])"]],
  ],
  [
    "identifier too large",
    `${BASE}\n    links: [ { from: h1.65521, to: sw.1 } ]\n`,
    [["8:22 networks.lan.links[0].from", "link identifier 65521 is larger than 65520"]],
  ],
  [
    "endpoint names no member",
    `${BASE}\n    links: [ { from: h1.1, to: sv.1 } ]\n`,
    [["8:32 networks.lan.links[0].to", "no member 'sv' in network lan (did you mean 'sw'? members: h1, h2, sw)"]],
  ],
  [
    "endpoint syntax",
    `${BASE}\n    links: [ { from: h1.x, to: sw.1 } ]\n`,
    [
      [
        "8:22 networks.lan.links[0].from",
        "must be an endpoint memberKey.identifier, like h1.1, or memberKey to " +
          "have the identifier allocated, like h1; lanB:sw.5 or lanB:sw for a " +
          "member of another network, got 'h1.x'",
      ],
    ],
  ],
  [
    "link to itself",
    `${BASE}\n    links: [ { from: h1.1, to: h1.2 } ]\n`,
    [["8:32 networks.lan.links[0].to", "h1 is the sender of this link and cannot also be its receiver"]],
  ],
  [
    "link without to",
    `${BASE}\n    links: [ { from: h1.1 } ]\n`,
    [["8:14 networks.lan.links[0]", "missing key 'to' (add to: MEMBER.ID, or external: NAME"]],
  ],
  [
    "group link without group",
    `${BASE}\n    links: [ { from: sw.5, to: [h1.2, h2.2], mode: allcast } ]\n`,
    [["8:52 networks.lan.links[0].mode", "an allcast link needs a group"]],
  ],
  [
    "group on a one-way link",
    `${BASE}\n    links: [ { from: sw.5, to: h1.2, group: g } ]\n`,
    [["8:45 networks.lan.links[0].group", "`group` is only for allcast and anycast links"]],
  ],
  [
    "one-way link with two receivers",
    `${BASE}\n    links: [ { from: sw.5, to: [h1.2, h2.2] } ]\n`,
    [["8:32 networks.lan.links[0].to", "a one-way link has exactly one receiver; this one lists 2"]],
  ],
  [
    "two-way group link",
    `${BASE}\n    links: [ { from: sw.5, to: [h1.2, h2.2], mode: two-way } ]\n`,
    [["8:32", "a two-way link cannot be a group link"]],
  ],
  [
    "two links of one group sent on one identifier",
    `${BASE}\n    links:\n      - { from: sw.5, to: [h1.2], mode: allcast, group: g }\n` +
      `      - { from: sw.5, to: [h2.2], mode: allcast, group: g, name: again }\n`,
    [
      [
        "10:17 networks.lan.links[1].from",
        "sw already sends on identifier 5 (link sw.5-g); a member has one link per group to send on",
      ],
    ],
  ],
  [
    "receiver twice",
    `${BASE}\n    links: [ { from: sw.5, to: [h1.2, h1.3], mode: allcast, group: g } ]\n`,
    [["8:39 networks.lan.links[0].to[1]", "h1 is already a receiver of this link"]],
  ],
  [
    "group named like a member",
    `${BASE}\n    links: [ { from: sw.5, to: [h1.2], mode: allcast, group: h2 } ]\n`,
    [["8:62 networks.lan.links[0].group", "group 'h2' has the name of a member"]],
  ],
  [
    "anycast sender is a receiver",
    `${BASE}\n    links:\n      - { from: sw.5, to: [h1.2], mode: anycast, group: g }\n` +
      `      - { from: h1.2, to: [sw.5], mode: anycast, group: g }\n`,
    [
      ["10:17 networks.lan.links[1].from", "h1 would both send to and receive from anycast group 'g' (see links[0])"],
      ["10:28 networks.lan.links[1].to[0]", "sw would both send to and receive from anycast group 'g' (see links[0])"],
    ],
  ],
  [
    "group with two modes",
    `${BASE}\n    links:\n      - { from: sw.5, to: [h1.2], mode: anycast, group: g }\n` +
      `      - { from: sw.6, to: [h2.2], mode: allcast, group: g }\n`,
    [["10:41 networks.lan.links[1].mode", "group 'g' is anycast in links[0]"]],
  ],
  [
    "external name is a member",
    `${BASE}\n    links: [ { from: sw.9, external: h1 } ]\n`,
    [["8:38 networks.lan.links[0].external", "'h1' is a member of lan; an external end is outside the network"]],
  ],
  [
    "external name twice",
    `${BASE}\n    links:\n      - { from: sw.9, external: up }\n      - { external: up, to: sw.8 }\n`,
    [["10:21 networks.lan.links[1].external", "external end 'up' is already used by links[0]"]],
  ],
  [
    "external with from and to",
    `${BASE}\n    links: [ { from: sw.9, to: h1.1, external: up } ]\n`,
    [["8:48 networks.lan.links[0].external", "a link with `from` and `to` inside the network has no external end"]],
  ],
  [
    "link name twice",
    `${BASE}\n    links:\n      - { from: sw.1, to: h1.1, name: a }\n      - { from: sw.2, to: h2.1, name: a }\n`,
    [["10:39 networks.lan.links[1].name", "link name 'a' is already used by links[0]"]],
  ],
  [
    "table for no member",
    `${BASE}${LINKS}\n    tables:\n      sx: { acquire: [ { do: forward } ] }\n`,
    [["12:7 networks.lan.tables.sx", "no member 'sx' in network lan (did you mean 'sw'?"]],
  ],
  [
    "row naming another member's link",
    `${BASE}${LINKS}\n    tables:\n      sw: { forward: [ { out: 7 } ] }\n`,
    [["12:31 networks.lan.tables.sw.forward[0].out", "sw has no link 7 (sw sends on 1 (h1.1-sw.1) or 2 (sw.2-h2.1))"]],
  ],
  [
    "in on a link the member only sends on",
    `${BASE}${LINKS}\n    tables:\n      sw: { acquire: [ { in: 2, do: forward } ] }\n`,
    [
      [
        "12:30 networks.lan.tables.sw.acquire[0].in",
        "sw only sends on link 2 (sw.2-h2.1); `in` names a link it receives on (sw receives on 1 (h1.1-sw.1))",
      ],
    ],
  ],
  [
    "out on a link the member only receives on",
    `${BASE}${LINKS}\n    tables:\n      h2: { forward: [ { out: 1 } ] }\n`,
    [
      [
        "12:31 networks.lan.tables.h2.forward[0].out",
        "h2 only receives on link 1 (sw.2-h2.1); `out` names a link it sends on (h2 sends on no link)",
      ],
    ],
  ],
  [
    "out list with a bad port",
    `${BASE}${LINKS}\n    tables:\n      sw: { forward: [ { out: [1, 3] } ] }\n`,
    [["12:35 networks.lan.tables.sw.forward[0].out[1]", "sw has no link 3"]],
  ],
  [
    "out list twice",
    `${BASE}${LINKS}\n    tables:\n      sw: { forward: [ { out: [1, 1] } ] }\n`,
    [["12:31 networks.lan.tables.sw.forward[0].out", "lists 1 twice"]],
  ],
  [
    "bad field name",
    `${BASE}${LINKS}\n    tables:\n      sw: { acquire: [ { match: { dest: "02:00:00:00:00:01" }, do: receive } ] }\n`,
    [
      [
        "12:35 networks.lan.tables.sw.acquire[0].match.dest",
        "ethernet has no field 'dest' (did you mean 'dst'? fields: dst, src, type, vid, pcp, ivid)",
      ],
    ],
  ],
  [
    "in inside match",
    `${BASE}${LINKS}\n    tables:\n      sw: { acquire: [ { match: { in: 1 }, do: receive } ] }\n`,
    [
      [
        "12:35 networks.lan.tables.sw.acquire[0].match.in",
        "`in` is not a header field (write in: beside match:, not inside it)",
      ],
    ],
  ],
  [
    "value too wide",
    `${BASE}${LINKS}\n    tables:\n      sw: { acquire: [ { match: { type: 0x10000 }, do: receive } ] }\n`,
    [
      [
        "12:41 networks.lan.tables.sw.acquire[0].match.type",
        "0x10000 does not fit in type (16 bits) (the largest value is 65535 (0xffff))",
      ],
    ],
  ],
  [
    "non-canonical prefix",
    `${BASE}${LINKS}\n    tables:\n      sw: { forward: [ { match: { dst: "02:00:00:00:00:01/40" }, out: 1 } ] }\n`,
    [["12:40 networks.lan.tables.sw.forward[0].match.dst", "did you mean 02:00:00:00:00:00/40?"]],
  ],
  [
    "bad acquire action",
    `${BASE}${LINKS}\n    tables:\n      sw: { acquire: [ { do: deliver } ] }\n`,
    [["12:30 networks.lan.tables.sw.acquire[0].do", "must be forward, receive, both or shared, got 'deliver'"]],
  ],
  [
    "in in a receive row",
    `${BASE}${LINKS}\n    tables:\n      sw: { receive: [ { in: 1, do: deliver } ] }\n`,
    [
      [
        "12:30 networks.lan.tables.sw.receive[0].in",
        "receive rows have no in: the model keys receive on the header only (remove it)",
      ],
    ],
  ],
  [
    "receive into another network",
    `${BASE}${LINKS}\n    tables:\n      sw: { receive: [ { do: { link: ip.1 } } ] }\n`,
    [
      [
        "12:38 networks.lan.tables.sw.receive[0].do.link",
        "there is no network 'ip' (the overlay must be one of the description's networks: lan)",
      ],
    ],
  ],
  [
    "transmit via a session",
    `${BASE}${LINKS}\n    tables:\n      sw: { transmit: [ { out: 1, via: { session: lanB.1 } } ] }\n`,
    [
      [
        "12:51 networks.lan.tables.sw.transmit[0].via.session",
        "there is no network 'lanB' (did you mean 'lan'? the underlay must be one of the description's networks: lan)",
      ],
    ],
  ],
  [
    "transmit out twice",
    `${BASE}${LINKS}\n    tables:\n      sw: { transmit: [ { out: 1 }, { out: 1 } ] }\n`,
    [["12:44 networks.lan.tables.sw.transmit[1].out", "link 1 already has a transmit row (row 0)"]],
  ],
  [
    "send session twice",
    `${BASE}${LINKS}\n    tables:\n      sw: { send: [ { session: 1 }, { session: 1 } ] }\n`,
    [["12:48 networks.lan.tables.sw.send[1].session", "session 1 already has a send row (row 0)"]],
  ],
  [
    "send with a pattern",
    `${BASE}${LINKS}\n    tables:\n      sw: { send: [ { session: 1, header: { type: "0x0800/8" } } ] }\n`,
    [["12:51 networks.lan.tables.sw.send[0].header.type", "'0x0800/8' is a pattern; type takes one exact value here"]],
  ],
  [
    "send naming a read-only field",
    `networks:\n  ip:\n    header: ipv4\n    members: { a: { name: 10.0.0.1 ` +
      `} }\n    tables:\n      a: { send: [ { session: 1, header: { dport: 53 ` +
      `} } ] }\n`,
    [
      [
        "6:44 networks.ip.tables.a.send[0].header.dport",
        "dport is read-only in ipv4: send cannot write it (writable fields: src, dst, proto, ttl, dscp)",
      ],
    ],
  ],
  [
    "session out of range",
    `${BASE}${LINKS}\n    tables:\n      sw: { send: [ { session: 4294967296 } ] }\n`,
    [["12:32 networks.lan.tables.sw.send[0].session", "must be a session identifier in 0..4294967295, got 4294967296"]],
  ],
  [
    "capacity too small",
    `${BASE}${LINKS}\n    tables:\n      sw: { acquire: { capacity: 1, rows: [ { do: forward }, ` +
      `{ do: receive } ] } }\n`,
    [["12:34 networks.lan.tables.sw.acquire.capacity", "2 rows do not fit in capacity 1"]],
  ],
  [
    "capacity too large",
    `${BASE}${LINKS}\n    tables:\n      sw: { acquire: { capacity: 2000000, rows: [] } }\n`,
    [
      [
        "12:34 networks.lan.tables.sw.acquire.capacity",
        "must be a row count in 1..1048576, got 2000000 (it must be at most 1048576)",
      ],
    ],
  ],
  [
    "kind on a transmit table",
    `${BASE}${LINKS}\n    tables:\n      sw: { transmit: { kind: lpm, rows: [] } }\n`,
    [["12:31 networks.lan.tables.sw.transmit.kind", "a transmit table matches its out-link exactly"]],
  ],
  [
    "a table that is neither",
    `${BASE}${LINKS}\n    tables:\n      sw: { acquire: forward }\n`,
    [
      [
        "12:22 networks.lan.tables.sw.acquire",
        "must be a list of rows, or a map with kind, capacity and rows, got 'forward'",
      ],
    ],
  ],
  [
    "unknown table",
    `${BASE}${LINKS}\n    tables:\n      sw: { acqiure: [] }\n`,
    [["12:13 networks.lan.tables.sw.acqiure", "unknown key 'acqiure' (did you mean 'acquire'?)"]],
  ],
  [
    "schema and model errors together; rows are not checked against links left out",
    `${BASE}\n      h3: { name: "02:00:00:00:00:01" }\n    links: [ { from: h1.1, to: sw.1, mdoe: two-way } ]\n` +
      `    tables:\n      sw: { forward: [ { out: 9 } ], acquire: [ { do: x } ] }\n`,
    [
      ["8:19 networks.lan.members.h3.name", "02:00:00:00:00:01 is already the name of h1"],
      ["9:38 networks.lan.links[0].mdoe", "unknown key 'mdoe'"],
      ["11:55 networks.lan.tables.sw.acquire[0].do", "must be forward, receive, both or shared, got 'x'"],
    ],
  ],
  [
    "a table with a schema error leaves the member's other tables checked",
    `${BASE}${LINKS}\n    tables:\n      sw: { forward: [ { out: 9 } ], acquire: [ { do: x } ] }\n`,
    [
      ["12:31 networks.lan.tables.sw.forward[0].out", "sw has no link 9"],
      ["12:55 networks.lan.tables.sw.acquire[0].do", "must be forward, receive, both or shared, got 'x'"],
    ],
  ],
  [
    "several errors, in source order, across passes",
    `networks:
  a:
    header: cna
    members: { x: { name: 1 }, y: { name: 1 } }
    links: [ { from: x.1, to: z.1 } ]
  b:
    header: cna
    members: { p: { name: 1, role: boss } }
  c:
    header: ipv5
    members: { q: { name: 1 } }
`,
    [
      ["4:43 networks.a.members.y.name", "1 is already the name of x"],
      ["5:31 networks.a.links[0].to", "no member 'z' in network a"],
      ["8:36 networks.b.members.p.role", "must be user or infra, got 'boss'"],
      ["10:13 networks.c.header", "unknown header design 'ipv5' (did you mean 'ipv4'?"],
    ],
  ],
];

/**
 * A number written `n` in one place of a small layered description, every other place plain:
 * `at` names the place (endpoint, in, out, out-list, transmit, session, via, link, value, prefix).
 */
function numbered(at: string, n: string): string {
  const w = (place: string, plain: string): string => (place === at ? n : plain);
  return `networks:
  lan:
    header: ethernet
    members: { a: { name: "02:00:00:00:00:01" }, b: { name: "02:00:00:00:00:02" } }
    links: [ { from: a.${w("endpoint", "1")}, to: b.1, mode: two-way } ]
    tables:
      a:
        send: [ { session: ${w("session", "1")}, header: { type: 0x0800 } } ]
        forward: [ { in: self, out: ${w("out", "1")} }, { in: ${w("in", "1")}, out: [${w("out-list", "1")}] } ]
        transmit: [ { out: ${w("transmit", "1")} } ]
      b:
        acquire: [ { match: { type: ${w("value", "0x0800")} }, do: receive } ]
        receive: [ { do: { link: ip.${w("link", "1")} } } ]
  ip:
    header: ipv4
    members: { a: { name: 10.0.0.1 }, b: { name: 10.0.0.2 } }
    links: [ { from: a.1, to: b.1, mode: two-way } ]
    tables:
      a: { transmit: [ { out: 1, via: { session: lan.${w("via", "1")} } } ] }
      b: { acquire: [ { match: { dst: 10.0.0.0/${w("prefix", "8")} }, do: receive } ] }
`;
}

// Identifiers are decimal, and no decimal has leading zeros, wherever a description writes one.
describe("numbers as written", () => {
  const LEADING = "leading zeros are ambiguous (octal to some tools)";
  test.each([
    ["endpoint", "01", "5:22 networks.lan.links[0].from", `identifier '01': ${LEADING} (write a.1)`],
    ["in", "00001", "9:48 networks.lan.tables.a.forward[1].in", `identifier '00001': ${LEADING} (write 1)`],
    ["in", "0x1", "9:48 networks.lan.tables.a.forward[1].in", "identifier '0x1' is not written in decimal (write 1)"],
    ["in", "1e0", "9:48 networks.lan.tables.a.forward[1].in", "identifier '1e0' is not written in decimal (write 1)"],
    ["out", "00001", "9:37 networks.lan.tables.a.forward[0].out", `identifier '00001': ${LEADING} (write 1)`],
    [
      "out-list",
      "0x1",
      "9:57 networks.lan.tables.a.forward[1].out[0]",
      "identifier '0x1' is not written in decimal (write 1)",
    ],
    ["transmit", "01", "10:28 networks.lan.tables.a.transmit[0].out", `identifier '01': ${LEADING} (write 1)`],
    ["session", "001", "8:28 networks.lan.tables.a.send[0].session", `identifier '001': ${LEADING} (write 1)`],
    [
      "session",
      "1.0",
      "8:28 networks.lan.tables.a.send[0].session",
      "identifier '1.0' is not written in decimal (write 1)",
    ],
    [
      "via",
      "01",
      "19:50 networks.ip.tables.a.transmit[0].via.session",
      `session identifier '01': ${LEADING} (write lan.1)`,
    ],
    [
      "link",
      "00001",
      "13:34 networks.lan.tables.b.receive[0].do.link",
      `link identifier '00001': ${LEADING} (write ip.1)`,
    ],
    [
      "value",
      "0800",
      "12:37 networks.lan.tables.b.acquire[0].match.type",
      `'0800': ${LEADING} (write 800 in decimal, or give the base: 0x…, 0o…, 0b…)`,
    ],
    [
      "prefix",
      "08",
      "20:39 networks.ip.tables.b.acquire[0].match.dst",
      `prefix length '08': ${LEADING} (write 10.0.0.0/8)`,
    ],
  ])("%s written %s", (at, n, where, problem) => {
    expect(errorsOf(numbered("none", ""))).toEqual([]);
    expect(errorsOf(numbered(at, n))).toEqual([`${where}: ${problem}`]);
  });
});

// `record:` says whether a link is recorded; its old name `capture:` is read the same way, with a note.
describe("record: and its old name capture:", () => {
  const withLink = (keys: string): string => `${BASE}
    links:
      - { from: h1.1, to: sw.1${keys} }
`;
  const NOTE = "capture: is now record: (the old name is read the same way)";
  test.each([
    { keys: "", record: true, notes: [] },
    { keys: ", record: false", record: false, notes: [] },
    { keys: ", record: true", record: true, notes: [] },
    { keys: ", capture: false", record: false, notes: [`n.yaml: 9:33 networks.lan.links[0]: ${NOTE}`] },
    { keys: ", capture: true", record: true, notes: [`n.yaml: 9:33 networks.lan.links[0]: ${NOTE}`] },
  ])("a link written `{ from, to$keys }`", ({ keys, record, notes }) => {
    const warned: string[] = [];
    const spec = parseSpec(withLink(keys), "n.yaml", { warn: (line) => warned.push(line) });
    expect(spec.networks[0]?.links.map((l) => l.record)).toEqual([record]);
    expect(warned).toEqual(notes);
  });

  test("not both", () => {
    expect(errorsOf(withLink(", record: false, capture: false"))).toEqual([
      "9:48 networks.lan.links[0].capture: a link writes both record: and capture: " +
        "(keep record: only; capture: is its old name)",
    ]);
  });

  test("the note is a line on strata's stderr, and the description is valid", () => {
    const file = join(mkdtempSync(join(tmpdir(), "strata-record-")), "n.yaml");
    writeFileSync(file, withLink(", capture: false"));
    const cli = new URL("../../dist/src/cli/main.js", import.meta.url).pathname;
    const r = spawnSync(process.execPath, [cli, "check", file], { encoding: "utf8" });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe(`strata: warning: ${file}: 9:33 networks.lan.links[0]: ${NOTE}\n`);
    rmSync(file);
  });
});

describe("a bad description", () => {
  test.each(BAD)("%s", (_name, text, expected) => {
    const got = errorsOf(text);
    expect(got, got.join("\n")).toHaveLength(expected.length);
    for (const [i, [where, message]] of expected.entries()) {
      expect(got[i]?.startsWith(where), `${got[i]} should start with ${where}`).toBe(true);
      expect(got[i]).toContain(message);
    }
  });

  test("errors are capped, saying how many were left out", () => {
    const members = Array.from({ length: MAX_ERRORS + 10 }, (_, i) => `      m${i}: { name: "not-a-mac" }`).join("\n");
    let caught: unknown;
    try {
      parseSpec(`networks:\n  lan:\n    header: ethernet\n    members:\n${members}\n`, "many.yaml");
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(SpecError);
    const err = caught as SpecError;
    expect(err.errors).toHaveLength(MAX_ERRORS);
    expect(err.omitted).toBe(10);
    expect(err.lines().at(-1)).toBe("many.yaml: 10 more errors not shown");
    expect(err.message).toBe(err.errors[0]?.message);
    expect(err.errors[0]?.message).toMatch(
      /^many\.yaml: 5:19 networks\.lan\.members\.m0\.name: 'not-a-mac' is not a MAC address/,
    );
  });

  test("a SpecError is an InputError whose parts are the first error's", () => {
    let caught: unknown;
    try {
      parseSpec(`${BASE}\n      h3: { name: "02:00:00:00:00:01" }\n`, "d.yaml");
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(InputError);
    expect(caught).toMatchObject({
      file: "d.yaml",
      where: "8:19 networks.lan.members.h3.name",
      problem: "02:00:00:00:00:01 is already the name of h1",
    });
  });
});

describe("files", () => {
  const dir = mkdtempSync(join(tmpdir(), "strata-spec-"));

  test.each<[string, string]>([
    ["missing file", join(dir, "nope.yaml")],
    ["directory", dir],
  ])("%s → cannot read file", (_name, path) => {
    expect(() => loadSpec(path)).toThrow(SpecError);
    expect(() => loadSpec(path)).toThrow(
      /cannot read file: (no such file|it is a directory) \(give the path of a \.yaml or \.json network description\)/,
    );
  });

  test("a JSON file reports JSON positions", () => {
    const path = join(dir, "bad.json");
    writeFileSync(
      path,
      `{\n  "networks": {\n    "a": { "header": "cna", "members": { "x": { "name": 1, "rol": "user" } } }\n  }\n}\n`,
    );
    expect(() => loadSpec(path)).toThrow(
      `${path}: 3:60 networks.a.members.x.rol: unknown key 'rol' (did you mean 'role'?)`,
    );
  });

  // Counted, not timed (a busy machine makes any load slow): what would make every load slow is compiling the JSON
  // Schema again, which takes longer than loading a description.
  test("the schema is compiled once, not once per description loaded", () => {
    loadSpec(HUB);
    const compiles = vi.spyOn(Ajv2020.prototype, "compile");
    try {
      for (let i = 0; i < 20; i++) loadSpec(HUB);
      expect(compiles).not.toHaveBeenCalled();
    } finally {
      compiles.mockRestore();
    }
  });
});
