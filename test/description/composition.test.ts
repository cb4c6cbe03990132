// The model's rules for composing networks (seed §5), one case each: layering
// (§5.2.4), subduction (§5.3) and bridging (§5.1). Each description is the
// smallest that breaks the rule; the test names the error and where it points.

import { describe, expect, test } from "vitest";
import { parseSpec } from "../../src/description/load.js";
import { SpecError } from "../../src/description/problems.js";

function errorsOf(text: string): string[] {
  try {
    parseSpec(text, "t.yaml");
  } catch (err) {
    if (!(err instanceof SpecError)) throw err;
    return err.errors.map((e) => e.message.slice("t.yaml: ".length));
  }
  return [];
}

/** An Ethernet network `name` with members (key → [mac byte, machine]) and extra YAML lines. */
function eth(name: string, members: Record<string, [number, string?]>, rest = ""): string {
  const ms = Object.entries(members)
    .map(
      ([k, [b, machine]]) =>
        `      ${k}: { name: ` +
        `"02:00:00:00:00:${b.toString(16).padStart(2, "0")}"${machine === undefined ? "" : `, machine: ${machine}`} }`,
    )
    .join("\n");
  return `  ${name}:\n    header: ethernet\n    members:\n${ms}\n${rest}`;
}

/** A network's `tables:` key over the rows given, or nothing when there are none. */
function tablesOf(rows: string): string {
  return rows === "" ? "" : `    tables:\n${rows}`;
}

/** Network lan: members a ↔ b, a's send rows `send` (a on a machine of its own, when given). */
function lanAB(send: string, a: [number, string?] = [1]): string {
  return eth(
    "lan",
    { a, b: [2] },
    `    links: [ { from: a.1, to: b.1, mode: two-way } ]\n    tables:\n      a: { send: ${send} }\n`,
  );
}

/** An IPv4 network `ip` over Ethernet, each side written by the case. */
function ipOver(
  ipTables: string,
  lanTables: string,
  lanMembers: Record<string, [number, string?]> = { h1: [1], r: [0xfe] },
): string {
  return `networks:
${eth("lan", lanMembers, `    links: [ { from: h1.1, to: r.1, mode: two-way } ]\n${tablesOf(lanTables)}`)}
  ip:
    header: ipv4
    members:
      h1: { name: 10.0.0.1 }
      r: { name: 10.0.0.254 }
    links: [ { from: h1.1, to: r.1, mode: two-way } ]
${tablesOf(ipTables)}
`;
}

const LAN_SEND = `      h1: { send: [ { session: 1, header: { dst: "02:00:00:00:00:fe", type: 0x0800 } } ] }\n`;
const LAN_RECV = `      r: { receive: [ { match: { type: 0x0800 }, do: { link: ip.1 } } ] }\n`;

type Case = [name: string, text: string, errors: [where: string, problem: string][]];

const LAYERING: Case[] = [
  [
    "a valid layering",
    ipOver(`      h1: { transmit: [ { out: 1, via: { session: lan.1 } } ] }\n`, LAN_SEND + LAN_RECV),
    [],
  ],
  [
    "the underlay is not a network",
    ipOver(`      h1: { transmit: [ { out: 1, via: { session: lann.1 } } ] }\n`, LAN_SEND),
    [
      [
        "networks.ip.tables.h1.transmit[0].via.session",
        "there is no network 'lann' (did you mean 'lan'? the underlay must be " +
          "one of the description's networks: lan, ip)",
      ],
    ],
  ],
  [
    "a session of the network itself",
    ipOver(`      h1: { transmit: [ { out: 1, via: { session: ip.1 } } ] }\n`, LAN_SEND),
    [
      [
        "networks.ip.tables.h1.transmit[0].via.session",
        "a session of ip itself: layering joins two different networks (name the underlay network, not ip)",
      ],
    ],
  ],
  [
    "not NETWORK.SESSION",
    ipOver(`      h1: { transmit: [ { out: 1, via: { session: lan } } ] }\n`, LAN_SEND),
    [
      [
        "networks.ip.tables.h1.transmit[0].via.session",
        "'lan' is not NETWORK.SESSION (write an underlay network and a session " +
          "of its member on this machine, like lanA.1 (or lanA.NAME for a send " +
          "row with a name))",
      ],
    ],
  ],
  [
    "no underlay member on the machine",
    ipOver(`      h1: { transmit: [ { out: 1, via: { session: lan.1 } } ] }\n`, LAN_SEND, {
      h1: [1, "box"],
      r: [0xfe],
    }),
    [
      [
        "networks.ip.tables.h1.transmit[0].via.session",
        "no member of lan runs on machine h1 (the machine of h1): layering " +
          "hands packets between members on one machine (give the underlay member " +
          "of lan `machine: h1`, or name a network with a member there)",
      ],
    ],
  ],
  [
    "two underlay members on the machine",
    ipOver(`      h1: { transmit: [ { out: 1, via: { session: lan.1 } } ] }\n`, LAN_SEND, { h1: [1], r: [0xfe, "h1"] }),
    [
      [
        "networks.ip.tables.h1.transmit[0].via.session",
        "2 members of lan run on machine h1 (h1, r): an overlay member attaches " +
          "to at most one member of each underlay network (put one of them on " +
          "another machine)",
      ],
    ],
  ],
  [
    "no send row for the session",
    ipOver(`      h1: { transmit: [ { out: 1, via: { session: lan.7 } } ] }\n`, LAN_SEND),
    [
      [
        "networks.ip.tables.h1.transmit[0].via.session",
        "lan.h1 has no send row for session 7: its send table puts lan's header on the packet (sessions of lan.h1: 1)",
      ],
    ],
  ],
  [
    "one session for two overlay links",
    `networks:
${lanAB("[ { session: 1 } ]")}
  ip:
    header: ipv4
    members: { a: { name: 10.0.0.1 }, b: { name: 10.0.0.2 } }
    links: [ { from: a.1, to: b.1 }, { from: a.2, to: b.2 } ]
    tables:
      a: { transmit: [ { out: 1, via: { session: lan.1 } }, { out: 2, via: { session: lan.1 } } ] }
`,
    [
      [
        "networks.ip.tables.a.transmit[1].via.session",
        "session 1 of lan.a already implements ip.a out 1: one session " +
          "implements one overlay link (give this link a session of its own)",
      ],
    ],
  ],
  [
    "an underlay member attached to two overlay members",
    `networks:
${lanAB("[ { session: 1 }, { session: 2 } ]", [1, "m"])}
  ip:
    header: ipv4
    members: { x: { name: 10.0.0.1, machine: m }, y: { name: 10.0.0.2, machine: m }, z: { name: 10.0.0.3 } }
    links: [ { from: x.1, to: z.1 }, { from: y.1, to: z.2 } ]
    tables:
      x: { transmit: [ { out: 1, via: { session: lan.1 } } ] }
      y: { transmit: [ { out: 1, via: { session: lan.2 } } ] }
`,
    [
      [
        "networks.ip.tables.y.transmit[0].via.session",
        "lan.a is already the attachment of ip.x: an underlay member is the " +
          "attachment of at most one member of each overlay network (put ip.y on " +
          "a machine of its own)",
      ],
    ],
  ],
  [
    "a layered link of a local group",
    `networks:
${lanAB("[ { session: 1 } ]")}
  ip:
    header: ipv4
    members: { a: { name: 10.0.0.1 }, b: { name: 10.0.0.2 }, c: { name: 10.0.0.3 } }
    links: [ { from: a.1, to: [b.1, c.1], mode: allcast, group: all } ]
    tables:
      a: { transmit: [ { out: 1, via: { session: lan.1 } } ] }
`,
    [
      [
        "networks.ip.tables.a.transmit[0].via.session",
        "link 1 of a implements group 'all', which is local: only links of " +
          "nonlocal groups are implemented by layering (declare it nonlocal: " +
          "`nonlocal: [all]` in network ip)",
      ],
    ],
  ],
  [
    "ExternalLink to a link the overlay member does not receive on",
    ipOver("", `      r: { receive: [ { do: { link: ip.4 } } ] }\n`),
    [
      [
        "networks.lan.tables.r.receive[0].do.link",
        "ip.r receives on no link 4: the packet would arrive on a link it does not have (r receives on 1)",
      ],
    ],
  ],
  [
    "layering that is not a hierarchy",
    ipOver(`      r: { receive: [ { do: { link: lan.1 } } ] }\n`, LAN_RECV),
    [
      [
        "networks.ip.tables.r.receive[0].do.link",
        "layering is not a hierarchy: ip is layered on lan is layered on ip (a " +
          "network cannot depend on itself, directly or through others; implement " +
          "one of these links physically or by another network)",
      ],
    ],
  ],
];

/** A tenant network sharing core's link gw.2 ↔ mb.1; `tenant` and `core` add table lines. */
function shared(
  tenant: string,
  core: string,
  link = "{ from: gw.2, to: mb.1, mode: two-way, shared: tenant }",
  tenantHeader = "ethernet",
): string {
  const names = tenantHeader === "ethernet" ? ['"02:00:00:00:00:01"', '"02:00:00:00:00:fe"'] : ["1", "254"];
  const coreLinks = `    links: [ ${link}, { from: gw.3, to: h2.1, mode: two-way } ]\n`;
  return (
    `networks:
  tenant:
    header: ${tenantHeader}
    members:
      t1: { name: ${names[0]} }
      gw: { name: ${names[1]} }
    links: [ { from: t1.1, to: gw.1, mode: two-way } ]
${tenant === "" ? "" : `    tables:\n${tenant}\n`}` +
    `${eth("core", { gw: [0xfe], mb: [0xfd], h2: [2] }, coreLinks + tablesOf(core))}
`
  );
}

const SUBDUCTION: Case[] = [
  [
    "a valid subduction",
    shared(
      `      gw: { forward: [ { out: shared } ], acquire: [ { in: 2, do: forward } ] }`,
      `      gw: { acquire: [ { in: 2, do: shared } ], forward: [ { in: shared, out: 2 } ] }\n`,
    ),
    [],
  ],
  [
    "a shared group link",
    shared("", "", "{ from: gw.2, to: [mb.1, h2.2], mode: allcast, group: g, shared: tenant }"),
    [
      [
        "networks.core.links[0].shared",
        "a shared link is a point-to-point link between two members of this " +
          "network (a shared link cannot be a group link, external or bridging " +
          "(seed §5.3.1); remove shared, or make it one-way or two-way inside the " +
          "network)",
      ],
    ],
  ],
  [
    "shared with a network of another design",
    shared("", "", undefined, "cna"),
    [
      [
        "networks.core.links[0]",
        "shared link gw.2-mb.1: core is ethernet and tenant is cna; bridged and " +
          "subducted networks have one header design (join networks of one " +
          "design, or layer one on the other)",
      ],
    ],
  ],
  [
    "no shared member",
    shared("", "", "{ from: h2.5, to: mb.5, mode: two-way, shared: tenant }"),
    [
      [
        "networks.core.links[0]",
        "no member of tenant has the name and machine of an end of shared link " +
          "h2.5-mb.5 (the shared members are one member of core and one of tenant " +
          "with the same name on the same machine, at exactly one end of the " +
          "link)",
      ],
    ],
  ],
  [
    "the shared identifier is taken at the overlay member",
    shared("", "", "{ from: gw.1, to: mb.1, mode: two-way, shared: tenant }"),
    [
      [
        "networks.core.links[0]",
        "core shared link gw.1-mb.1: tenant.gw already uses identifier 1 for " +
          "link t1.1-gw.1 (give this link an identifier that gw does not use yet)",
      ],
    ],
  ],
  [
    "do: shared at a member that shares no link",
    shared("", `      h2: { acquire: [ { in: 1, do: shared } ] }\n`),
    [
      [
        "networks.core.tables.h2.acquire[0]",
        "core.h2 shares no link: do: shared hands a packet to the overlay's " +
          "shared member (declare the link in this network with shared: OVERLAY, " +
          "or acquire the packet here)",
      ],
    ],
  ],
  [
    "do: shared on a link that is not shared",
    shared("", `      gw: { acquire: [ { in: 3, do: shared } ] }\n`),
    [
      [
        "networks.core.tables.gw.acquire[0]",
        "do: shared applies to packets arriving on a shared link (write in: 2 (the shared links of gw))",
      ],
    ],
  ],
  [
    "out: shared at the underlay member",
    shared("", `      gw: { forward: [ { in: 3, out: shared } ] }\n`),
    [
      [
        "networks.core.tables.gw.forward[0]",
        "core.gw is not the overlay's shared member of any shared link: out: " +
          "shared hands the packet to the underlay's shared member (only the " +
          "overlay member of a shared pair writes out: shared)",
      ],
    ],
  ],
  [
    "a handed-over packet sent onto a link that is not shared",
    shared("", `      gw: { forward: [ { in: shared, out: 3 } ] }\n`),
    [
      [
        "networks.core.tables.gw.forward[0]",
        "a packet handed over by the overlay (in: shared) must leave on a " +
          "shared link, as the overlay could have sent it (out: 2)",
      ],
    ],
  ],
  [
    "a forward row for any in-link at the underlay's shared member",
    shared("", `      gw: { forward: [ { in: shared, out: 2 }, { out: 3 } ] }\n`),
    [
      [
        "networks.core.tables.gw.forward[1]",
        "core.gw shares a link, so its forward rows name their in-link: without " +
          "one, this row would also take packets the overlay hands over (in: " +
          "shared), which must leave on a shared link (add in: to this row (in: " +
          "shared for handed-over packets))",
      ],
    ],
  ],
  [
    "in: shared in an acquire row",
    shared("", `      gw: { acquire: [ { in: shared, do: forward } ] }\n`),
    [
      [
        "networks.core.tables.gw.acquire[0]",
        "in: shared is for forward rows: packets a shared member hands over " +
          "(SharedForward) (in an acquire row, name the link the packet arrives " +
          "on)",
      ],
    ],
  ],
  [
    "a member shared among three networks",
    shared("", "") +
      eth("third", { gw: [0xfe], x: [9] }, "    links: [ { from: gw.7, to: x.1, mode: two-way, shared: tenant } ]\n"),
    [
      [
        "networks.third.links[0]",
        "tenant.gw is already shared with core; with third.gw it would be " +
          "shared among three networks (a member is shared with at most one other " +
          "network (seed §5.3.2))",
      ],
    ],
  ],
];

/** lanA and lanB joined by a bridging link sw1.9 ↔ lanB:sw2.9, with extra YAML. */
function bridged(
  aMembers: Record<string, [number, string?]> = { h1: [1], sw1: [0xf1] },
  link = `{ from: sw1.9, to: "lanB:sw2.9", mode: two-way }`,
  extraA = "",
  extraB = "",
  nonlocal = "",
): string {
  const linksA = `    links: [ { from: h1.1, to: sw1.1, mode: two-way }, ${link}${extraA} ]\n`;
  const nonlocalA = nonlocal === "" ? "" : `    nonlocal: [${nonlocal}]\n`;
  const linksB = `    links: [ { from: h3.1, to: sw2.1, mode: two-way }${extraB} ]\n`;
  return `networks:
${eth("lanA", aMembers, linksA + nonlocalA)}
${eth("lanB", { h3: [3], sw2: [0xf2] }, `${linksB}    tables:\n      sw2: { forward: [ { in: 9, out: 1 } ] }\n`)}
`;
}

/**
 * lanA and lanB bridged by lanA's link sw1.9 ↔ lanB:sw2.9 (mode `mode`), implemented by sessions
 * of the GRE network wan between the switches' machines (seed Figure 8); `receiveA` and
 * `receiveB` are wan's receive rows at each end, `transmitB` lanB.sw2's transmit rows.
 */
function bridgedOverGre(
  receiveA: string,
  receiveB: string,
  transmitB = "[ { out: 9, via: { session: wan.1 } } ]",
  mode = "two-way",
): string {
  return `networks:
${eth(
  "lanA",
  { h1: [1], sw1: [0xf1] },
  `    links:
      - { from: h1.1, to: sw1.1, mode: two-way }
      - { from: sw1.9, to: "lanB:sw2.9", mode: ${mode}, name: trunk }
    tables:
      sw1: { transmit: [ { out: 1 }, { out: 9, via: { session: wan.1 } } ] }
`,
)}
${eth(
  "lanB",
  { h3: [3], sw2: [0xf2] },
  `    links: [ { from: h3.1, to: sw2.1, mode: two-way } ]
    tables:
      sw2: { acquire: [ { in: 9, do: forward } ], forward: [ { in: 9, out: 1 } ], transmit: ${transmitB} }
`,
)}
  wan:
    header: gre
    members: { sw1: { name: 192.0.2.1 }, sw2: { name: 192.0.2.2 } }
    links: [ { from: sw1.1, to: sw2.1, mode: two-way } ]
    tables:
      sw1: { send: [ { session: 1, header: { dst: 192.0.2.2, type: 0x6558 } } ], receive: [ ${receiveA} ] }
      sw2: { send: [ { session: 1, header: { dst: 192.0.2.1, type: 0x6558 } } ], receive: [ ${receiveB} ] }
`;
}

const BRIDGING_LAYERED: Case[] = [
  [
    "a bridging link implemented by a session, at both ends",
    bridgedOverGre("{ do: { link: lanA.9 } }", "{ do: { link: lanB.9 } }"),
    [],
  ],
  ["the same, the link named", bridgedOverGre("{ do: { link: lanA.trunk } }", "{ do: { link: lanB.trunk } }"), []],
  [
    "the session pops into the link at the far end only",
    bridgedOverGre("{ do: deliver }", "{ do: { link: lanB.9 } }", "[ { out: 9, via: { session: wan.1 } } ]"),
    [],
  ],
  [
    "ExternalLink onto a one-way bridging link at its sender",
    bridgedOverGre("{ do: { link: lanA.9 } }", "{ do: deliver }", "[ ]", "one-way"),
    [
      [
        "networks.wan.tables.sw1.receive[0].do.link",
        "lanA.sw1 receives on no link 9: the packet would arrive on a link it does not have (sw1 receives on 1)",
      ],
    ],
  ],
];

const BRIDGING: Case[] = [
  ["a valid bridging", bridged(), []],
  [
    "to a network that does not exist",
    bridged(undefined, `{ from: sw1.9, to: "lanC:sw2.9" }`),
    [
      [
        "networks.lanA.links[1]",
        "link sw1.9-lanC:sw2.9 reaches lanC:sw2: there is no network 'lanC' " +
          "(did you mean 'lanA'? networks: lanA, lanB)",
      ],
    ],
  ],
  [
    "to a member that does not exist",
    bridged(undefined, `{ from: sw1.9, to: "lanB:sw3.9" }`),
    [
      [
        "networks.lanA.links[1]",
        "link sw1.9-lanB:sw3.9: no member 'sw3' in network lanB (did you mean 'sw2'? members of lanB: h3, sw2)",
      ],
    ],
  ],
  [
    "names that are not unique across the bridged set",
    bridged({ h1: [3], sw1: [0xf1] }),
    [
      [
        "networks.lanB.members.h3",
        "02:00:00:00:00:03 is already the name of lanA.h1: networks bridged " +
          "together (lanA, lanB) have disjoint names (give this member another " +
          "name, or do not bridge the networks)",
      ],
    ],
  ],
  [
    "an identifier the far member already uses",
    bridged(undefined, `{ from: sw1.9, to: "lanB:sw2.1" }`),
    [
      [
        "networks.lanA.links[1]",
        "lanA link sw1.9-lanB:sw2.1: lanB.sw2 already uses identifier 1 for " +
          "link h3.1-sw2.1 (give this link an identifier that sw2 does not use " +
          "yet)",
      ],
    ],
  ],
  [
    "a group named like a member of the other network",
    bridged(undefined, undefined, `, { from: sw1.5, to: ["lanB:h3.5"], mode: allcast, group: sw2 }`, "", "sw2"),
    [
      [
        "networks.lanA.links[2]",
        "group 'sw2' has the name of a member of the bridged networks (lanA, " +
          "lanB) (group names and member names do not overlap across bridged " +
          "networks)",
      ],
    ],
  ],
  [
    "a nonlocal group with two modes",
    bridged(
      undefined,
      undefined,
      `, { from: sw1.5, to: ["lanB:h3.5"], mode: allcast, group: g }`,
      `, { from: sw2.6, to: [h3.6], mode: anycast, group: g }`,
      "g",
    ),
    [["networks.lanB.links[1]", "group 'g' is allcast in lanA (every link of a nonlocal group has its mode: allcast)"]],
  ],
  [
    "a local group that reaches another network",
    bridged(undefined, undefined, `, { from: sw1.5, to: ["lanB:h3.5"], mode: allcast, group: g }`),
    [
      [
        "networks.lanA.links[2]",
        "group 'g' reaches another network, so it is not local to lanA (declare " +
          "it nonlocal: `nonlocal: [g]` in network lanA (a local group's members " +
          "are all in one network))",
      ],
    ],
  ],
  [
    "a nonlocal group the network has no link of",
    bridged(undefined, undefined, "", "", "g"),
    [["networks.lanA.nonlocal[0]", "no link of lanA implements group 'g' (remove it: the network has no group links)"]],
  ],
];

describe.each([
  ["layering", LAYERING],
  ["subduction", SUBDUCTION],
  ["bridging", BRIDGING],
  ["bridging links implemented by layering", BRIDGING_LAYERED],
] as const)("%s", (_, cases) => {
  test.each(cases)("%s", (_name, text, expected) => {
    const errors = errorsOf(text).map((e) => {
      const m = /^\d+:\d+ (\S+): (.*)$/.exec(e);
      return m === null ? [e, ""] : [m[1], m[2]];
    });
    expect(errors).toEqual(expected);
  });
});
