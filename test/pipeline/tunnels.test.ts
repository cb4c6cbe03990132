// Encapsulations as layering, packet in / packets out: machine a sends a
// packet of the top network, each network beneath it pushes its header (send),
// and machine b pops them again (receive → the overlay's acquire) up to
// delivery. The expected bytes are built here, header by header, with the
// checksums computed in this file — never by the code under test.

import { describe, expect, it } from "vitest";
import { concat, payload } from "../pcap/builders.js";
import { ethernetFrame, ipv4Packet, ipv6Packet } from "./helpers/packets.js";
import { hexOuts, type Out, run } from "./helpers/rows.js";

// ── Reference headers ─────────────────────────────────────────────────────

const bytes = (len: number, v: bigint | number): number[] => {
  let x = BigInt(v);
  const out = new Array<number>(len);
  for (let i = len - 1; i >= 0; i--, x >>= 8n) out[i] = Number(x & 0xffn);
  return out;
};
const ip = (a: string): bigint => a.split(".").reduce((n, p) => (n << 8n) | BigInt(p), 0n);
const mac = (m: string): bigint => BigInt(`0x${m.replace(/:/g, "")}`);

/** RFC 1071 over the bytes, folded the slow way. */
function internetChecksum(b: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < b.length; i += 2) sum += ((b[i] ?? 0) << 8) | (b[i + 1] ?? 0);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

/** The 20-byte IPv4 header send writes: identification 0, not a fragment, checksum computed here. */
function outerIpv4(
  o: { src: string; dst: string; proto: number; ttl?: number; dscp?: number },
  inside: Uint8Array,
): Uint8Array {
  const h = [
    0x45,
    (o.dscp ?? 0) << 2,
    ...bytes(2, 20 + inside.length),
    0,
    0,
    0,
    0,
    o.ttl ?? 64,
    o.proto,
    0,
    0,
    ...bytes(4, ip(o.src)),
    ...bytes(4, ip(o.dst)),
  ];
  const c = internetChecksum(h);
  h[10] = c >> 8;
  h[11] = c & 0xff;
  return concat(Uint8Array.from(h), inside);
}

function greOver(
  o: { src: string; dst: string; ttl?: number },
  g: { type: number; key?: number },
  inside: Uint8Array,
): Uint8Array {
  const gre = [
    ...bytes(2, g.key === undefined ? 0 : 0x2000),
    ...bytes(2, g.type),
    ...(g.key === undefined ? [] : bytes(4, g.key)),
  ];
  return outerIpv4({ ...o, proto: 47 }, concat(Uint8Array.from(gre), inside));
}

function vxlanOver(
  o: { src: string; dst: string },
  v: { sport: number; dport: number; vni: number },
  inside: Uint8Array,
): Uint8Array {
  const vx = [0x08, 0, 0, 0, ...bytes(3, v.vni), 0];
  const udp = [...bytes(2, v.sport), ...bytes(2, v.dport), ...bytes(2, 8 + vx.length + inside.length), 0, 0];
  return outerIpv4({ ...o, proto: 17 }, concat(Uint8Array.from([...udp, ...vx]), inside));
}

const mplsEntry = (label: number, s: number, ttl = 64, tc = 0): Uint8Array =>
  Uint8Array.from(bytes(4, label * 4096 + (tc << 9) + (s << 8) + ttl));

// ── Descriptions: two machines, a stack of networks ───────────────────────

const MAC_A = "02:00:00:00:00:0a";
const MAC_B = "02:00:00:00:00:0b";

interface Level {
  readonly net: string;
  readonly header: string;
  /** Names of a and b. */
  readonly names: readonly [string, string];
  /** a's send row header (to b), for the level above. */
  readonly send?: string;
  /** b's acquire match. */
  readonly take?: string;
  /** b's receive match that pops into the level above. */
  readonly pop?: string;
  readonly ttl?: "decrement";
}

/**
 * A network per level, level 0 physical: a and b on one two-way link in each.
 * a sends on it (its transmit via the level below's session 1); b acquires what
 * `take` matches and pops what `pop` matches into the level above; the top
 * level's b delivers.
 */
function stack(levels: readonly Level[]): string {
  const out = ["networks:"];
  levels.forEach((l, i) => {
    const below = levels[i - 1];
    const above = levels[i + 1];
    const via = below === undefined ? "" : `, transmit: [ { out: 1, via: { session: ${below.net}.1 } } ]`;
    const send = l.send === undefined ? "" : `, send: [ { session: 1, header: ${l.send} } ]`;
    const receive =
      above === undefined ? "[ { do: deliver } ]" : `[ { match: ${l.pop ?? "{}"}, do: { link: ${above.net}.1 } } ]`;
    out.push(
      `  ${l.net}:`,
      `    header: ${l.header}`,
      ...(l.ttl === undefined ? [] : [`    ttl: ${l.ttl}`]),
      `    members: { a: { name: "${l.names[0]}" }, b: { name: "${l.names[1]}" } }`,
      `    links: [ { from: a.1, to: b.1, mode: two-way } ]`,
      `    tables:`,
      `      a: { forward: [ { in: self, out: 1 } ]${via}${send} }`,
      `      b: { acquire: [ { match: ${l.take ?? "{}"}, do: receive } ], receive: ${receive} }`,
    );
  });
  return `${out.join("\n")}\n`;
}

const lan = (type: number, extra: Partial<Level> = {}): Level => ({
  net: "lan",
  header: "ethernet",
  names: [MAC_A, MAC_B],
  send: `{ dst: "${MAC_B}", type: ${type} }`,
  take: `{ dst: "${MAC_B}" }`,
  pop: `{ type: ${type} }`,
  ...extra,
});
const top4: Level = { net: "ip", header: "ipv4", names: ["10.0.0.1", "10.0.0.2"], take: "{ dst: 10.0.0.2 }" };
const top6: Level = {
  net: "ip6",
  header: "ipv6",
  names: ["2001:db8::1", "2001:db8::2"],
  take: `{ dst: "2001:db8::2" }`,
};
const tenant: Level = {
  net: "tenant",
  header: "ethernet",
  names: ["02:00:00:00:01:01", "02:00:00:00:01:02"],
  take: `{ dst: "02:00:00:00:01:02" }`,
};
const U_A = "192.0.2.1";
const U_B = "192.0.2.2";
const gre = (send: string, pop: string, extra: Partial<Level> = {}): Level => ({
  net: "tun",
  header: "gre",
  names: [U_A, U_B],
  send,
  take: `{ dst: ${U_B} }`,
  pop,
  ...extra,
});
const vxlan = (send: string, pop: string): Level => ({
  net: "overlay",
  header: "vxlan",
  names: [U_A, U_B],
  send,
  take: `{ dst: ${U_B}, dport: 4789 }`,
  pop,
});

const eth = (type: number, inside: Uint8Array): Uint8Array =>
  ethernetFrame({ dst: mac(MAC_B), src: mac(MAC_A), type, payload: inside });

const inner4 = ipv4Packet({
  src: ip("10.0.0.1"),
  dst: ip("10.0.0.2"),
  proto: 17,
  ports: [5000, 53],
  payload: payload(12),
});
const inner6 = ipv6Packet({
  src: 0x20010db8000000000000000000000001n,
  dst: 0x20010db8000000000000000000000002n,
  next: 17,
  payload: payload(8),
});
const tenantFrame = ethernetFrame({
  dst: mac("02:00:00:00:01:02"),
  src: mac("02:00:00:00:01:01"),
  type: 0x0800,
  payload: inner4,
});

// ── Cases ─────────────────────────────────────────────────────────────────

interface Case {
  name: string;
  spec: string;
  in: { endpoint: string; packet: Uint8Array };
  out: Out[];
  /** Drops by member and reason ("ip.b bad-header"). */
  drops?: Record<string, number>;
}

/** What a pushed-and-popped packet leaves behind: the top link, each level's link (top down), delivery at b. */
function through(levels: readonly Level[], onLinks: readonly Uint8Array[], delivered: Uint8Array): Out[] {
  const nets = levels.map((l) => l.net).reverse();
  return [
    ...nets.map((net, i) => ({ at: `${net}.a.1-b.1`, packet: onLinks[i] ?? new Uint8Array(0) })),
    { at: `deliver:${nets[0] ?? "?"}.b`, packet: delivered },
  ];
}

const GRE_KEYED: readonly Level[] = [
  lan(0x0800),
  gre("{ dst: 192.0.2.2, type: 0x0800, key: 7 }", "{ keyed: 1, key: 7, type: 0x0800 }"),
  top4,
];
const GRE_PLAIN: readonly Level[] = [
  lan(0x0800),
  gre("{ dst: 192.0.2.2, type: 0x0800 }", "{ keyed: 0, type: 0x0800 }"),
  top4,
];
const IPIP: readonly Level[] = [
  lan(0x0800),
  {
    net: "core",
    header: "ipv4",
    names: [U_A, U_B],
    send: "{ dst: 192.0.2.2, proto: 4 }",
    take: "{ dst: 192.0.2.2 }",
    pop: "{ proto: 4 }",
  },
  top4,
];
const SIXIN4: readonly Level[] = [
  lan(0x0800),
  {
    net: "core",
    header: "ipv4",
    names: [U_A, U_B],
    send: "{ dst: 192.0.2.2, proto: 41 }",
    take: "{ dst: 192.0.2.2 }",
    pop: "{ proto: 41 }",
  },
  top6,
];
const VXLAN: readonly Level[] = [
  lan(0x0800),
  vxlan("{ dst: 192.0.2.2, sport: 49152, vni: 5000 }", "{ vni: 5000 }"),
  tenant,
];
const MPLS: readonly Level[] = [
  lan(0x8847),
  {
    net: "outer",
    header: "mpls",
    names: ["16001", "16002"],
    send: "{ label: 16002, s: 0 }",
    take: "{ label: 16002 }",
    pop: "{ s: 0 }",
  },
  {
    net: "inner",
    header: "mpls",
    names: ["24001", "24002"],
    send: "{ label: 24002 }",
    take: "{ label: 24002 }",
    pop: "{ s: 1 }",
  },
  top4,
];
const GRE_IN_GRE: readonly Level[] = [
  lan(0x0800),
  gre("{ dst: 192.0.2.2, type: 0x0800, key: 1 }", "{ key: 1 }"),
  {
    net: "tun2",
    header: "gre",
    names: ["198.51.100.1", "198.51.100.2"],
    send: "{ dst: 198.51.100.2, type: 0x0800, key: 2 }",
    take: "{ dst: 198.51.100.2 }",
    pop: "{ key: 2 }",
  },
  top4,
];

const greKeyed = greOver({ src: U_A, dst: U_B }, { type: 0x0800, key: 7 }, inner4);
const grePlain = greOver({ src: U_A, dst: U_B }, { type: 0x0800 }, inner4);
const ipip = outerIpv4({ src: U_A, dst: U_B, proto: 4 }, inner4);
const sixin4 = outerIpv4({ src: U_A, dst: U_B, proto: 41 }, inner6);
const vx = vxlanOver({ src: U_A, dst: U_B }, { sport: 49152, dport: 4789, vni: 5000 }, tenantFrame);
const labelled = concat(mplsEntry(24002, 1), inner4);
const stacked = concat(mplsEntry(16002, 0), labelled);
const greInner = greOver({ src: "198.51.100.1", dst: "198.51.100.2" }, { type: 0x0800, key: 2 }, inner4);
const greOuter = greOver({ src: U_A, dst: U_B }, { type: 0x0800, key: 1 }, greInner);

/** A frame padded to Ethernet's 60-byte minimum. */
const padded = (frame: Uint8Array): Uint8Array =>
  frame.length >= 60 ? frame : concat(frame, new Uint8Array(60 - frame.length).fill(0xee));
const small4 = ipv4Packet({ src: ip("10.0.0.1"), dst: ip("10.0.0.2"), proto: 17, ports: [1, 2] });

const cases: Case[] = [
  {
    name: "gre, keyed: IPv4 + GRE with K and the key pushed, popped at b",
    spec: stack(GRE_KEYED),
    in: { endpoint: "ip:a", packet: inner4 },
    out: through(GRE_KEYED, [inner4, greKeyed, eth(0x0800, greKeyed)], inner4),
  },
  {
    name: "gre, without key: no K bit, no key word",
    spec: stack(GRE_PLAIN),
    in: { endpoint: "ip:a", packet: inner4 },
    out: through(GRE_PLAIN, [inner4, grePlain, eth(0x0800, grePlain)], inner4),
  },
  {
    name: "gre, a packet of another key: receive-miss at the tunnel end",
    spec: stack(GRE_KEYED),
    in: { endpoint: "lan:a.1", packet: eth(0x0800, greOver({ src: U_A, dst: U_B }, { type: 0x0800, key: 8 }, inner4)) },
    out: [],
    drops: { "tun.b receive-miss": 1 },
  },
  {
    name: "gre, inner bytes that are not IPv4: bad-header at the overlay member",
    spec: stack(GRE_KEYED),
    in: { endpoint: "lan:a.1", packet: eth(0x0800, greOver({ src: U_A, dst: U_B }, { type: 0x0800, key: 7 }, inner6)) },
    out: [],
    drops: { "ip.b bad-header": 1 },
  },
  {
    name: "gre, GRE version 1 (PPTP) is no gre header: bad-header at the gre member",
    spec: stack(GRE_KEYED),
    in: {
      endpoint: "lan:a.1",
      packet: eth(
        0x0800,
        outerIpv4({ src: U_A, dst: U_B, proto: 47 }, Uint8Array.of(0x30, 0x01, 0x88, 0x0b, 0, 0, 0, 1, 0, 0, 0, 1)),
      ),
    },
    out: [],
    drops: { "tun.b bad-header": 1 },
  },
  {
    name: "gre in gre: two gre networks, pushed twice, popped twice",
    spec: stack(GRE_IN_GRE),
    in: { endpoint: "ip:a", packet: inner4 },
    out: through(GRE_IN_GRE, [inner4, greInner, greOuter, eth(0x0800, greOuter)], inner4),
  },
  {
    name: "ip in ip: an ipv4 network on an ipv4 network, protocol 4",
    spec: stack(IPIP),
    in: { endpoint: "ip:a", packet: inner4 },
    out: through(IPIP, [inner4, ipip, eth(0x0800, ipip)], inner4),
  },
  {
    name: "ipv6 in ipv4: protocol 41",
    spec: stack(SIXIN4),
    in: { endpoint: "ip6:a", packet: inner6 },
    out: through(SIXIN4, [inner6, sixin4, eth(0x0800, sixin4)], inner6),
  },
  {
    name: "ip in ip, Ethernet-padded: each pop trims to the IPv4 total length",
    spec: stack(IPIP),
    in: { endpoint: "lan:a.1", packet: padded(eth(0x0800, outerIpv4({ src: U_A, dst: U_B, proto: 4 }, small4))) },
    out: [{ at: "deliver:ip.b", packet: small4 }],
  },
  {
    name: "gre, Ethernet-padded: trimmed to the outer and then the inner IPv4 total length",
    spec: stack(GRE_PLAIN),
    in: { endpoint: "lan:a.1", packet: padded(eth(0x0800, greOver({ src: U_A, dst: U_B }, { type: 0x0800 }, small4))) },
    out: [{ at: "deliver:ip.b", packet: small4 }],
  },
  {
    name: "vxlan: IPv4 + UDP (dport 4789 by default, checksum 0) + VXLAN pushed; the tenant frame delivered",
    spec: stack(VXLAN),
    in: { endpoint: "tenant:a", packet: tenantFrame },
    out: through(VXLAN, [tenantFrame, vx, eth(0x0800, vx)], tenantFrame),
  },
  {
    name: "vxlan: another VNI is not this tunnel's: receive-miss",
    spec: stack(VXLAN),
    in: {
      endpoint: "lan:a.1",
      packet: eth(0x0800, vxlanOver({ src: U_A, dst: U_B }, { sport: 1, dport: 4789, vni: 5001 }, tenantFrame)),
    },
    out: [],
    drops: { "overlay.b receive-miss": 1 },
  },
  {
    name: "vxlan: a UDP packet without the I flag is not VXLAN: bad-header",
    spec: stack(VXLAN),
    in: {
      endpoint: "lan:a.1",
      packet: eth(
        0x0800,
        outerIpv4(
          { src: U_A, dst: U_B, proto: 17 },
          Uint8Array.of(0, 53, 0, 53, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0x13, 0x88, 0),
        ),
      ),
    },
    out: [],
    drops: { "overlay.b bad-header": 1 },
  },
  {
    name: "vxlan: to another UDP port, acquire misses (the row matches dport 4789)",
    spec: stack(VXLAN),
    in: {
      endpoint: "lan:a.1",
      packet: eth(0x0800, vxlanOver({ src: U_A, dst: U_B }, { sport: 1, dport: 8472, vni: 5000 }, tenantFrame)),
    },
    out: [],
    drops: { "overlay.b acquire-miss": 1 },
  },
  {
    name: "vxlan: inner bytes too short for Ethernet: bad-header at the tenant member",
    spec: stack(VXLAN),
    in: {
      endpoint: "lan:a.1",
      packet: eth(0x0800, vxlanOver({ src: U_A, dst: U_B }, { sport: 1, dport: 4789, vni: 5000 }, payload(10))),
    },
    out: [],
    drops: { "tenant.b bad-header": 1 },
  },
  {
    name: "mpls: a label stack, the outer entry S = 0, the inner S = 1, over ethertype 0x8847",
    spec: stack(MPLS),
    in: { endpoint: "ip:a", packet: inner4 },
    out: through(MPLS, [inner4, labelled, stacked, eth(0x8847, stacked)], inner4),
  },
  {
    name: "mpls: an Ethernet-padded frame: no length in MPLS, the IPv4 inside trims",
    spec: stack(MPLS),
    in: { endpoint: "lan:a.1", packet: padded(eth(0x8847, concat(mplsEntry(16002, 0), mplsEntry(24002, 1), small4))) },
    out: [{ at: "deliver:ip.b", packet: small4 }],
  },
  {
    name: "mpls: a label for another member: acquire-miss",
    spec: stack(MPLS),
    in: { endpoint: "lan:a.1", packet: eth(0x8847, concat(mplsEntry(16003, 0), labelled)) },
    out: [],
    drops: { "outer.b acquire-miss": 1 },
  },
];

describe("tunnels: pushed and popped, byte for byte", () => {
  it.each(cases)("$name", (c) => {
    const got = run(c.spec, c.in.endpoint, c.in.packet);
    expect(hexOuts(got.out)).toEqual(hexOuts(c.out));
    expect(got.dropsAt).toEqual(c.drops ?? {});
  });
});

describe("forwarding through a tunnel network", () => {
  /** a — r — b in one network of the design; r forwards by destination with ttl: decrement. */
  function transit(header: string, names: readonly [string, string, string], dst: string): string {
    return `networks:
  n:
    header: ${header}
    ttl: decrement
    members: { a: { name: "${names[0]}" }, r: { name: "${names[1]}" }, b: { name: "${names[2]}" } }
    links: [ { from: a.1, to: r.1, mode: two-way }, { from: r.2, to: b.1, mode: two-way } ]
    tables:
      r: { acquire: [ { do: forward } ], forward: [ { match: { ${dst} }, out: 2 } ] }
      b: { acquire: [ { do: receive } ], receive: [ { do: deliver } ] }
`;
  }
  const lowered = (p: Uint8Array, ttl: number): Uint8Array => {
    const q = p.slice();
    q[8] = ttl;
    q[10] = 0;
    q[11] = 0;
    const c = internetChecksum([...q.subarray(0, 20)]);
    q[10] = c >> 8;
    q[11] = c & 0xff;
    return q;
  };

  it.each([
    {
      name: "gre: the outer TTL − 1, its checksum right, GRE and the inside untouched",
      header: "gre",
      packet: greKeyed,
      want: lowered(greKeyed, 63),
    },
    { name: "vxlan: the outer TTL − 1", header: "vxlan", packet: vx, want: lowered(vx, 63) },
  ])("$name", ({ header, packet, want }) => {
    const got = run(transit(header, [U_A, "192.0.2.254", U_B], `dst: ${U_B}`), "n:a.1", packet);
    expect(hexOuts(got.out)).toEqual(
      hexOuts([
        { at: "n.r.2-b.1", packet: want },
        { at: "deliver:n.b", packet: want },
      ]),
    );
  });

  it("mpls: the label's TTL − 1; at 1 it expires", () => {
    const spec = transit("mpls", ["16001", "16002", "16003"], "label: 16003");
    const p = concat(mplsEntry(16003, 1, 9), inner4);
    const want = concat(mplsEntry(16003, 1, 8), inner4);
    expect(hexOuts(run(spec, "n:a.1", p).out)).toEqual(
      hexOuts([
        { at: "n.r.2-b.1", packet: want },
        { at: "deliver:n.b", packet: want },
      ]),
    );
    expect(run(spec, "n:a.1", concat(mplsEntry(16003, 1, 1), inner4)).dropsAt).toEqual({ "n.r ttl-expired": 1 });
  });
});
