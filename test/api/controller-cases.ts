// What the example controllers' tests share (controllers.test.ts and routing-controller.test.ts on an Emulation and
// strata's P4Runtime server, controllers-bmv2.test.ts on simple_switch_grpc): the packets the hosts send and what each
// must do, worked by hand.

import type { LinkChange, LinkEvents } from "../../src/index.js";

export const mac = (n: number): string => `02:00:00:00:00:${n.toString(16).padStart(2, "0")}`;
export const BROADCAST = "ff:ff:ff:ff:ff:ff";

/** An Ethernet frame from `src` to `dst` (type 0x88b5, local experimental), 60 bytes. */
export function frame(dst: string, src: string): Uint8Array {
  const f = new Uint8Array(60);
  f.set(
    dst.split(":").map((x) => parseInt(x, 16)),
    0,
  );
  f.set(
    src.split(":").map((x) => parseInt(x, 16)),
    6,
  );
  f[12] = 0x88;
  f[13] = 0xb5;
  return f;
}

/**
 * In order: a frame sent by a host; then how many packet-ins the switch has made, the members it reached, and the
 * switch's ports it went out of.
 */
export const MAC_STEPS: readonly {
  send: [host: number, dst: string];
  switchPacketIns: number;
  reached: string[];
  out: number[];
}[] = [
  // Unknown: handed up (h1 learned), flooded.
  { send: [1, mac(2)], switchPacketIns: 1, reached: ["lan:h2"], out: [2, 3] },
  { send: [2, mac(1)], switchPacketIns: 1, reached: ["lan:h1"], out: [1] }, // h1 known: forwarded by the data plane
  { send: [2, BROADCAST], switchPacketIns: 2, reached: ["lan:h1", "lan:h3"], out: [1, 3] }, // handed up (h2 learned)
  { send: [1, mac(2)], switchPacketIns: 2, reached: ["lan:h2"], out: [2] }, // h2 known now
  { send: [3, mac(1)], switchPacketIns: 2, reached: ["lan:h1"], out: [1] }, // h3 unknown, its frame's destination known
];

export const TTL = 64;
const host = (n: number): number[] => [10, 0, n, 1];

/** An IPv4 packet from host n to host m (protocol 253, for experiments), 40 bytes, its header checksum right. */
export function packet(from: number, to: number): Uint8Array {
  const p = new Uint8Array(40);
  p.set([0x45, 0, 0, 40, 0, 1, 0, 0, TTL, 253, 0, 0, ...host(from), ...host(to)]);
  let sum = 0;
  for (let i = 0; i < 20; i += 2) sum += ((p[i] ?? 0) << 8) | (p[i + 1] ?? 0);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >> 16);
  p[10] = (~sum >> 8) & 0xff;
  p[11] = ~sum & 0xff;
  return p;
}

/** The link of the ring that goes down. */
export const R1_R2 = "ip.r1.2-r2.1";

// Routers crossed (each lowers the TTL by one) from host to host, worked by hand on the ring: shortest paths, the lower
// port on a tie (r1's 1 goes to r4, its 2 to r2; each router's 1 is towards r(n-1), 2 towards r(n+1), 3 its host).
export const PAIRS: readonly { from: number; to: number; before: number; after: number }[] = [
  { from: 1, to: 2, before: 2, after: 4 }, // r1 r2, then round: r1 r4 r3 r2
  { from: 2, to: 1, before: 2, after: 4 },
  { from: 1, to: 3, before: 3, after: 3 }, // r1 r4 r3 both times (the tie went to port 1)
  { from: 3, to: 1, before: 3, after: 3 }, // r3 r2 r1, then r3 r4 r1
  { from: 2, to: 4, before: 3, after: 3 }, // r2 r1 r4, then r2 r3 r4
  { from: 4, to: 2, before: 3, after: 3 },
  { from: 3, to: 4, before: 2, after: 2 },
];

/** A LinkEvents the caller tells: how a controller of a P4Runtime device hears of links. */
export function told(): LinkEvents & { tell(change: LinkChange): void } {
  const listeners = new Set<(c: LinkChange) => void>();
  return {
    onLinkChange: (l) => (listeners.add(l), () => void listeners.delete(l)),
    tell: (c) => listeners.forEach((l) => l(c)),
  };
}
