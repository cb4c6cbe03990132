// The page's packet details: the headers of strata's designs, outermost first, each read by
// the reference's parser and shown with the registry's fields in the description's notation.

import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openCapture } from "../../src/pcap/index.js";
import { HEADERS } from "../../src/model/headers.js";
import { decodeLayers } from "../../src/view/decode.js";

const root = new URL("../..", import.meta.url).pathname;

function firstRecord(file: string): Uint8Array {
  const reader = openCapture(join(root, file));
  try {
    for (const b of reader.batches()) return b.data.slice(b.offset[0], (b.offset[0] ?? 0) + (b.capLen[0] ?? 0));
    throw new Error(`${file} is empty`);
  } finally {
    reader.close();
  }
}

const header = (design: string, fields: Record<string, bigint>, payloadLen: number): Uint8Array => {
  const d = HEADERS.get(design);
  if (d === undefined) throw new Error(design);
  return d.build(new Map(Object.entries(fields)), payloadLen);
};
const concat = (...parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};
const payload = new Uint8Array(8).fill(0xa5);
const ipv4 = header("ipv4", { src: 0x0a000001n, dst: 0x0a000002n, proto: 17n, ttl: 64n }, payload.length);
const ipv6 = header("ipv6", { src: 1n, dst: 2n, next: 17n, hlim: 64n }, payload.length);

describe("decodeLayers", () => {
  const vxlan = firstRecord("pcaps/vxlan.pcap");
  it.each([
    {
      name: "a real VXLAN frame: Ethernet, VXLAN, the tenant's Ethernet, IPv4",
      bytes: vxlan,
      design: "ethernet",
      layers: ["ethernet", "vxlan", "ethernet", "ipv4"],
    },
    {
      name: "the same from its VXLAN header on (a pop of Ethernet taken off)",
      bytes: vxlan,
      design: "vxlan",
      at: 14,
      layers: ["vxlan", "ethernet", "ipv4"],
    },
    {
      name: "cut inside the tenant's Ethernet header",
      bytes: vxlan.subarray(0, 14 + 36 + 10),
      design: "ethernet",
      layers: ["ethernet", "vxlan"],
    },
    { name: "not a header of the design", bytes: vxlan, design: "ipv4", layers: [] },
    {
      name: "an MPLS label stack over IPv4",
      bytes: concat(
        header("mpls", { label: 100n, s: 0n, ttl: 9n }, 0),
        header("mpls", { label: 200n, s: 1n, ttl: 9n }, 0),
        ipv4,
        payload,
      ),
      design: "mpls",
      layers: ["mpls", "mpls", "ipv4"],
    },
    {
      name: "IPv6 in Ethernet",
      bytes: concat(header("ethernet", { dst: 1n, src: 2n, type: 0x86ddn }, 0), ipv6, payload),
      design: "ethernet",
      layers: ["ethernet", "ipv6"],
    },
    {
      name: "Ethernet in GRE (type 0x6558) in Ethernet",
      bytes: concat(
        header("ethernet", { dst: 1n, src: 2n, type: 0x0800n }, 0),
        header(
          "gre",
          { src: 1n, dst: 2n, ttl: 64n, type: 0x6558n, key: 7n, keyed: 1n },
          14 + ipv4.length + payload.length,
        ),
        header("ethernet", { dst: 3n, src: 4n, type: 0x0800n }, 0),
        ipv4,
        payload,
      ),
      design: "ethernet",
      layers: ["ethernet", "gre", "ethernet", "ipv4"],
    },
    {
      name: "IPv4 in IPv4",
      bytes: concat(
        header("ipv4", { src: 1n, dst: 2n, proto: 4n, ttl: 64n }, ipv4.length + payload.length),
        ipv4,
        payload,
      ),
      design: "ipv4",
      layers: ["ipv4", "ipv4"],
    },
  ])("$name", ({ bytes, design, at, layers }) => {
    const got = decodeLayers(bytes, design, at ?? 0);
    expect(got.map((l) => l.design)).toEqual(layers);
    // Each header starts where the one before ended.
    got.forEach((l, i) => expect(l.at).toBe(i === 0 ? (at ?? 0) : (got[i - 1]?.at ?? 0) + (got[i - 1]?.len ?? 0)));
  });

  it("names the fields as the design registry does, in the description's notation", () => {
    const [eth, vx] = decodeLayers(vxlan, "ethernet");
    expect(eth?.fields).toContainEqual(["dst", "00:16:3e:08:71:cf", "bytes 0-5"]);
    expect(eth?.fields).toContainEqual(["type", "2048 (0x0800)", "the ethertype after all tags"]);
    expect(vx?.fields).toContainEqual(["vni", "100", "VXLAN network identifier"]);
    expect(vx?.fields.find(([name]) => name === "dst")?.[1]).toBe("192.168.202.1");
    expect(vx).toMatchObject({ at: 14, len: 36 });
  });
});
