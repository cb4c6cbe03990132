// A packet's descriptor names the in-link it came on and the out-link its
// member chose, apart: read in a paused run, where the packet waits at a link
// crossing for room in the recording ring (run.ts heldPacket). Without a trace
// the fast lane takes the packet up to that crossing, so this holds its
// write-back too.

import { describe, expect, it } from "vitest";
import { compile } from "../../src/control/compile.js";
import { resolveEndpoint } from "../../src/control/endpoints.js";
import { install } from "../../src/control/install.js";
import { parseSpec } from "../../src/description/load.js";
import { LINK_NONE, LINK_SELF, STAGES } from "../../src/wasm/abi.js";
import { DataPlane } from "../../src/wasm/module.js";
import { Runner } from "../../src/wasm/runner.js";
import { recordIn } from "./helpers/recorded.js";

const H1 = "02:00:00:00:00:01";
const H2 = "02:00:00:00:00:02";
const H3 = "02:00:00:00:00:03";
const BCAST = "ff:ff:ff:ff:ff:ff";

/** h1, h2, h3 on a switch `sw` whose forward table is the case's. */
const lan = (forward: string): string => `networks:
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
    tables:
      sw: { acquire: [ { do: forward } ], forward: [ ${forward} ] }
      h2: { acquire: [ { do: receive } ], receive: [ { do: deliver } ] }
      h3: { acquire: [ { do: receive } ], receive: [ { do: deliver } ] }
`;

/** a — r — b over IPv4, r routing with TTL − 1; a sends by its forward table. */
const routed = `networks:
  ip:
    header: ipv4
    ttl: decrement
    members:
      a: { name: 10.0.1.1 }
      r: { name: 10.0.1.254, role: infra }
      b: { name: 10.0.2.2 }
    links:
      - { from: a.1, to: r.4, mode: two-way }
      - { from: r.7, to: b.1, mode: two-way }
    tables:
      a: { forward: [ { in: self, out: 1 } ] }
      r: { acquire: [ { do: forward } ], forward: [ { match: { dst: 10.0.2.0/24 }, out: 7 } ] }
      b: { acquire: [ { do: receive } ], receive: [ { do: deliver } ] }
`;

function frame(dst: string, n: number): Uint8Array {
  const mac = (m: string): number[] => m.split(":").map((b) => parseInt(b, 16));
  return Uint8Array.from([...mac(dst), ...mac(H1), 0x88, 0xb5, ...Array.from({ length: 46 + n }, (_, i) => i)]);
}

function ipv4(n: number): Uint8Array {
  const len = 20 + n;
  const h = [0x45, 0, len >> 8, len & 0xff, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 1, 1, 10, 0, 2, 2];
  let sum = 0;
  for (let i = 0; i < 20; i += 2) sum += ((h[i] ?? 0) << 8) | (h[i + 1] ?? 0);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  h[10] = (~sum >> 8) & 0xff;
  h[11] = ~sum & 0xff;
  return Uint8Array.from([...h, ...Array.from({ length: n }, (_, i) => i)]);
}

const id = (port: number): string => (port === LINK_SELF ? "self" : port === LINK_NONE ? "none" : String(port));

/**
 * Runs `count` packets (packet(i)) in at `endpoint`, through a recording ring of a few records, so that the run pauses
 * at link crossings; returns each distinct "member in:<in-link> out:<out-link>" a paused packet held at a crossing.
 */
function heldAtCrossings(spec: string, endpoint: string, packet: (i: number) => Uint8Array, count: number): string[] {
  const compiled = compile(parseSpec(spec, "case.yaml"));
  const dp = DataPlane.load();
  install(dp, compiled, [resolveEndpoint(compiled, endpoint)]);
  const field = (name: string): number => dp.constant(name);
  const at = { member: field("PACKET_MEMBER"), in: field("PACKET_IN_LINK"), out: field("PACKET_OUT_LINK") };
  const stageAt = field("PACKET_STAGE");
  const held = new Set<string>();
  // The ring is written out at each pause: the packet that waits for room is held then.
  const recorded = recordIn(dp, compiled);
  const runner = new Runner(
    dp,
    { maxFanout: compiled.maxFanout, slotLen: 1024, recordingBytes: 0 },
    {
      count: recorded.count,
      write(c, data, start, len): void {
        recorded.write(c, data, start, len);
        const d = dp.exports.heldPacket() >>> 0;
        const view = dp.mem.view;
        if (STAGES[view.getInt32(d + stageAt, true)] !== "link") return;
        const member = compiled.members[view.getInt32(d + at.member, true)]?.qualified ?? "?";
        held.add(`${member} in:${id(view.getUint32(d + at.in, true))} out:${id(view.getUint32(d + at.out, true))}`);
      },
    },
  );
  const packets = Array.from({ length: count }, (_, i) => packet(i));
  const data = new Uint8Array(packets.reduce((n, p) => n + p.length, 0));
  const offset = new Uint32Array(count);
  packets.reduce((o, p, i) => {
    data.set(p, o);
    offset[i] = o;
    return o + p.length;
  }, 0);
  const lens = Uint32Array.from(packets, (p) => p.length);
  runner.run(
    {
      data,
      count,
      offset,
      capLen: lens,
      origLen: lens,
      tsSec: new Float64Array(count),
      tsNsec: new Uint32Array(count),
      endpoint: 0,
    },
    0,
    null,
  );
  runner.flushRecordings();
  // Every packet was recorded at each crossing, pauses or not.
  expect(recorded.files.size).toBeGreaterThan(0);
  for (const records of recorded.files.values()) expect(records.length % count).toBe(0);
  return [...held].sort();
}

interface Case {
  name: string;
  spec: string;
  endpoint: string;
  packet: (i: number) => Uint8Array;
  held: string[];
}

const cases: Case[] = [
  {
    name: "a switch forwards by MAC: in on 1, out on 2",
    spec: lan(`{ match: { dst: "${H2}" }, out: 2 }`),
    endpoint: "lan:h1.1",
    packet: (i) => frame(H2, i % 40),
    held: ["lan.h1 in:none out:1", "lan.sw in:1 out:2"],
  },
  {
    name: "a broadcast replicated: each copy in on 1, out on its own out-link",
    spec: lan(`{ match: { dst: "${BCAST}" }, out: [2, 3] }`),
    endpoint: "lan:h1.1",
    packet: (i) => frame(BCAST, i % 40),
    held: ["lan.h1 in:none out:1", "lan.sw in:1 out:2", "lan.sw in:1 out:3"],
  },
  {
    name: "a router (TTL − 1) after a member's own packet: in on 4, out on 7; the sender in on self",
    spec: routed,
    endpoint: "ip:a",
    packet: (i) => ipv4(8 + (i % 40)),
    held: ["ip.a in:self out:1", "ip.r in:4 out:7"],
  },
];

describe("the descriptor names the in-link and the out-link apart", () => {
  it.each(cases)("$name", (c) => {
    expect(heldAtCrossings(c.spec, c.endpoint, c.packet, 200)).toEqual(c.held);
  });
});
