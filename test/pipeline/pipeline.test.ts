// The pipeline as packet-in / packet-out rows: a description's tables, one
// packet in at an endpoint, and every packet out — on which link, or delivered
// to which member — byte for byte. `out: []` means dropped, with `drops`
// naming why. Packets come from factories that override only what changes.

import { describe, expect, it } from "vitest";
import { hexOuts, type Out, run } from "./helpers/rows.js";

// ── Packet factories ──────────────────────────────────────────────────────

const macBytes = (m: string): number[] => m.split(":").map((b) => parseInt(b, 16));
const ipBytes = (a: string): number[] => a.split(".").map(Number);
const u16 = (v: number): number[] => [(v >> 8) & 0xff, v & 0xff];

function checksum(b: number[]): number {
  let sum = 0;
  for (let i = 0; i < b.length; i += 2) sum += ((b[i] ?? 0) << 8) | (b[i + 1] ?? 0);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

interface Eth {
  dst: string;
  src: string;
  type: number;
  vid?: number;
  payload: number[];
}
const H1 = "02:00:00:00:00:01";
const H2 = "02:00:00:00:00:02";
const H3 = "02:00:00:00:00:03";
const BCAST = "ff:ff:ff:ff:ff:ff";

function eth(o: Partial<Eth> = {}): Uint8Array {
  const f: Eth = { dst: H2, src: H1, type: 0x88b5, payload: Array.from({ length: 46 }, (_, i) => i), ...o };
  const tag = f.vid === undefined ? [] : [0x81, 0x00, ...u16(f.vid)];
  return Uint8Array.from([...macBytes(f.dst), ...macBytes(f.src), ...tag, ...u16(f.type), ...f.payload]);
}

interface Ip4 {
  src: string;
  dst: string;
  ttl: number;
  proto: number;
  sport: number;
  dport: number;
}
function ipv4(o: Partial<Ip4> = {}): Uint8Array {
  const p: Ip4 = { src: "10.0.0.1", dst: "10.0.2.2", ttl: 64, proto: 17, sport: 5000, dport: 53, ...o };
  const l4 = [...u16(p.sport), ...u16(p.dport), 0, 8, 0, 0];
  const h = [0x45, 0, ...u16(20 + l4.length), 0, 0, 0, 0, p.ttl, p.proto, 0, 0, ...ipBytes(p.src), ...ipBytes(p.dst)];
  const c = checksum(h);
  h[10] = c >> 8;
  h[11] = c & 0xff;
  return Uint8Array.from([...h, ...l4]);
}

// ── Descriptions ──────────────────────────────────────────────────────────

/** h1, h2, h3 on a switch `sw`; hosts take frames for their MAC; the switch's tables are the case's. */
function lan(swTables: string, extra = ""): string {
  return (
    `networks:
  lan:
    header: ethernet
    members:
      h1: { name: "${H1}" }
      h2: { name: "${H2}" }
      h3: { name: "${H3}" }
      sw: { name: "02:00:00:00:00:fe", role: infra }
    links:
      - { from: h1.1, to: sw.1, mode: two-way }
      - { from: h2.1, to: sw.2, mode: two-way }
      - { from: h3.1, to: sw.3, mode: two-way }
      - { from: sw.9, external: uplink }
    tables:
      sw:
${swTables}
      h2: { acquire: [ { match: { dst: "${H2}" }, do: receive }, { match: { dst: "${BCAST}" }, do: receive } ], ` +
    `receive: [ { do: deliver } ] }
      h3: { acquire: [ { match: { dst: "${H3}" }, do: receive } ], receive: [ { do: deliver } ] }
${extra}`
  );
}

/** a — r — b over IPv4 with TTL decrement; r routes by longest prefix. */
function routed(rTables: string, ttl = "decrement"): string {
  return `networks:
  ip:
    header: ipv4
    ttl: ${ttl}
    members:
      a: { name: 10.0.1.1 }
      r: { name: 10.0.1.254, role: infra }
      b: { name: 10.0.2.2 }
    links:
      - { from: a.1, to: r.1, mode: two-way }
      - { from: r.2, to: b.1, mode: two-way }
      - { from: r.3, external: elsewhere }
    tables:
      r:
${rTables}
      b: { acquire: [ { do: receive } ], receive: [ { do: deliver } ] }
`;
}

// ── The harness (helpers/rows.ts) ────────────────────────────────────────

interface Case {
  name: string;
  spec: string;
  in: { endpoint: string; packet: Uint8Array };
  out: Out[];
  drops?: Record<string, number>;
}

const EMPTY_SW = "        acquire: [ { do: forward } ]";

const cases: Case[] = [
  {
    name: "unicast: forwarded by dst, delivered at h2",
    spec: lan(`${EMPTY_SW}\n        forward: [ { match: { dst: "${H2}" }, out: 2 } ]`),
    in: { endpoint: "lan:h1.1", packet: eth() },
    out: [
      { at: "lan.h2.1-sw.2", packet: eth() },
      { at: "deliver:lan.h2", packet: eth() },
    ],
  },
  {
    name: "unknown dst: forward-miss",
    spec: lan(`${EMPTY_SW}\n        forward: [ { match: { dst: "${H2}" }, out: 2 } ]`),
    in: { endpoint: "lan:h1.1", packet: eth({ dst: "02:00:00:00:00:77" }) },
    out: [],
    drops: { "forward-miss": 1 },
  },
  {
    name: "broadcast: replicated in row order; h3 does not take it",
    spec: lan(`${EMPTY_SW}\n        forward: [ { in: 1, match: { dst: "${BCAST}" }, out: [2, 3] } ]`),
    in: { endpoint: "lan:h1.1", packet: eth({ dst: BCAST }) },
    out: [
      { at: "lan.h2.1-sw.2", packet: eth({ dst: BCAST }) },
      { at: "deliver:lan.h2", packet: eth({ dst: BCAST }) },
      { at: "lan.h3.1-sw.3", packet: eth({ dst: BCAST }) },
    ],
    drops: { "acquire-miss": 1 },
  },
  {
    name: "a VLAN row takes tagged frames of its VLAN only",
    spec: lan(`${EMPTY_SW}\n        forward: [ { match: { vid: 10 }, out: 9 }, { match: { dst: "${H2}" }, out: 2 } ]`),
    in: { endpoint: "lan:h1.1", packet: eth({ vid: 10 }) },
    out: [{ at: "lan.uplink", packet: eth({ vid: 10 }) }],
  },
  {
    name: "an untagged frame passes the VLAN row by",
    spec: lan(`${EMPTY_SW}\n        forward: [ { match: { vid: 10 }, out: 9 }, { match: { dst: "${H2}" }, out: 2 } ]`),
    in: { endpoint: "lan:h1.1", packet: eth() },
    out: [
      { at: "lan.h2.1-sw.2", packet: eth() },
      { at: "deliver:lan.h2", packet: eth() },
    ],
  },
  {
    name: "ternary: the first row that matches wins",
    spec: lan(
      `${EMPTY_SW}\n        forward: [ { match: { type: "0x8800 &&& 0xff00" }, out: 9 }, ` +
        `{ match: { dst: "${H2}" }, out: 2 } ]`,
    ),
    in: { endpoint: "lan:h1.1", packet: eth({ type: 0x88b5 }) },
    out: [{ at: "lan.uplink", packet: eth({ type: 0x88b5 }) }],
  },
  {
    name: "acquire both: forwarded on and received",
    spec: lan(
      `        acquire: [ { do: both } ]\n        forward: [ { match: { dst: "${H2}" }, out: 2 } ]\n` +
        `        receive: [ { do: deliver } ]`,
    ),
    in: { endpoint: "lan:h1.1", packet: eth() },
    out: [
      { at: "lan.h2.1-sw.2", packet: eth() },
      { at: "deliver:lan.h2", packet: eth() },
      { at: "deliver:lan.sw", packet: eth() },
    ],
  },
  {
    name: "a forward row that drops",
    spec: lan(`${EMPTY_SW}\n        forward: [ { in: 1, out: drop } ]`),
    in: { endpoint: "lan:h1.1", packet: eth() },
    out: [],
    drops: { "forward-drop": 1 },
  },
  {
    name: "a frame too short for Ethernet",
    spec: lan(`${EMPTY_SW}\n        forward: [ { out: 2 } ]`),
    in: { endpoint: "lan:h1.1", packet: eth().subarray(0, 13) },
    out: [],
    drops: { "bad-header": 1 },
  },
  {
    name: "send: the session's header is pushed, then forwarded from self",
    spec: lan(
      `${EMPTY_SW}\n        forward: [ { in: self, match: { dst: "${H3}" }, out: 3 } ]\n` +
        `        send: [ { session: 1, header: { dst: "${H3}", type: 0x88b5 } } ]`,
    ),
    in: { endpoint: "lan:sw@1", packet: Uint8Array.of(1, 2, 3, 4) },
    out: [
      { at: "lan.h3.1-sw.3", packet: eth({ dst: H3, src: "02:00:00:00:00:fe", payload: [1, 2, 3, 4] }) },
      { at: "deliver:lan.h3", packet: eth({ dst: H3, src: "02:00:00:00:00:fe", payload: [1, 2, 3, 4] }) },
    ],
  },
  {
    name: "IPv4: the first matching row wins, TTL − 1 with a valid checksum",
    spec: routed(
      `        acquire: [ { do: forward } ]\n        forward: [ { match: { ` +
        `dst: 10.0.2.0/24 }, out: 2 }, { match: { dst: 10.0.0.0/8 }, out: 3 } ]`,
    ),
    in: { endpoint: "ip:a.1", packet: ipv4() },
    out: [
      { at: "ip.r.2-b.1", packet: ipv4({ ttl: 63 }) },
      { at: "deliver:ip.b", packet: ipv4({ ttl: 63 }) },
    ],
  },
  {
    name: "IPv4: a broader prefix written first wins (first match)",
    spec: routed(
      `        acquire: [ { do: forward } ]\n        forward: [ { match: { ` +
        `dst: 10.0.0.0/8 }, out: 3 }, { match: { dst: 10.0.2.0/24 }, out: 2 } ]`,
    ),
    in: { endpoint: "ip:a.1", packet: ipv4() },
    out: [{ at: "ip.elsewhere", packet: ipv4({ ttl: 63 }) }],
  },
  {
    name: "IPv4: written kind: lpm, the longest prefix wins whatever the order",
    spec: routed(
      `        acquire: [ { do: forward } ]\n        forward: { kind: lpm, ` +
        `rows: [ { match: { dst: 10.0.0.0/8 }, out: 3 }, { match: { dst: ` +
        `10.0.2.0/24 }, out: 2 } ] }`,
    ),
    in: { endpoint: "ip:a.1", packet: ipv4() },
    out: [
      { at: "ip.r.2-b.1", packet: ipv4({ ttl: 63 }) },
      { at: "deliver:ip.b", packet: ipv4({ ttl: 63 }) },
    ],
  },
  {
    name: "IPv4: without ttl: decrement the packet is left as it is",
    spec: routed(
      `        acquire: [ { do: forward } ]\n        forward: [ { match: { dst: 10.0.2.0/24 }, out: 2 } ]`,
      "keep",
    ),
    in: { endpoint: "ip:a.1", packet: ipv4() },
    out: [
      { at: "ip.r.2-b.1", packet: ipv4() },
      { at: "deliver:ip.b", packet: ipv4() },
    ],
  },
  {
    name: "IPv4: TTL 1 expires at the router",
    spec: routed(`        acquire: [ { do: forward } ]\n        forward: [ { match: { dst: 10.0.2.0/24 }, out: 2 } ]`),
    in: { endpoint: "ip:a.1", packet: ipv4({ ttl: 1 }) },
    out: [],
    drops: { "ttl-expired": 1 },
  },
  {
    name: "IPv4: a range of destination ports",
    spec: routed(
      `        acquire: [ { do: forward } ]\n        forward: [ { match: { ` +
        `proto: 17, dport: 1000..2000 }, out: 3 }, { out: 2 } ]`,
    ),
    in: { endpoint: "ip:a.1", packet: ipv4({ dport: 1500 }) },
    out: [{ at: "ip.elsewhere", packet: ipv4({ dport: 1500, ttl: 63 }) }],
  },
  {
    name: "IPv4: a packet that is not IPv4",
    spec: routed(`        acquire: [ { do: forward } ]\n        forward: [ { out: 2 } ]`),
    in: { endpoint: "ip:a.1", packet: eth() },
    out: [],
    drops: { "bad-header": 1 },
  },
];

describe("pipeline: packet in, packets out", () => {
  it.each(cases)("$name", (c) => {
    const got = run(c.spec, c.in.endpoint, c.in.packet);
    expect(hexOuts(got.out)).toEqual(hexOuts(c.out));
    expect(got.drops).toEqual(c.drops ?? {});
  });
});
