// The reference's view of packet bytes: each design's header read into named
// field values, and written back from them (send). Plain TypeScript over
// Uint8Array and bigint, written from docs of the formats (IEEE 802.1Q,
// RFC 791, RFC 8200, the cna box in DESIGN.md), not from assembly/wire.

import type { DesignDef, KeyLayout } from "../wire/designs.js";

/** A header's matchable fields by name, as unsigned values of the field's width. */
export type Fields = ReadonlyMap<string, bigint>;

const u16 = (b: Uint8Array, at: number): number => ((b[at] ?? 0) << 8) | (b[at + 1] ?? 0);
const uint = (b: Uint8Array, at: number, len: number): bigint => {
  let v = 0n;
  for (let i = 0; i < len; i++) v = (v << 8n) | BigInt(b[at + i] ?? 0);
  return v;
};
function put(b: Uint8Array, at: number, len: number, value: bigint): void {
  let v = value;
  for (let i = len - 1; i >= 0; i--) {
    b[at + i] = Number(v & 0xffn);
    v >>= 8n;
  }
}

export const TPID_CUSTOMER = 0x8100; // 802.1Q
export const TPID_SERVICE = 0x88a8; // 802.1ad
export const TPID_SERVICE_OLD = 0x9100; // Q-in-Q before 802.1ad
const MAX_TAGS = 2;
/** IPv4 protocols whose first 4 bytes are source and destination ports: TCP, UDP, SCTP, UDP-Lite. */
export const PORT_PROTOCOLS: ReadonlySet<number> = new Set([6, 17, 132, 136]);

/** The header's fields for `design`, or undefined when the bytes hold no valid header of it. */
export function parseHeader(design: DesignDef, b: Uint8Array): Fields | undefined {
  switch (design.name) {
    case "ethernet": {
      if (b.length < 14) return undefined;
      let at = 12; // the ethertype, or the first tag's TPID
      let type = u16(b, at);
      const tci: number[] = [];
      while ((type === TPID_CUSTOMER || type === TPID_SERVICE || type === TPID_SERVICE_OLD) && tci.length < MAX_TAGS) {
        if (at + 4 + 2 > b.length) return undefined; // the tag and the type after it
        tci.push(u16(b, at + 2));
        at += 4;
        type = u16(b, at);
      }
      const [outer = 0, inner = 0] = tci;
      return new Map([
        ["dst", uint(b, 0, 6)],
        ["src", uint(b, 6, 6)],
        ["type", BigInt(type)],
        ["vid", BigInt(outer & 0xfff)],
        ["pcp", BigInt(outer >> 13)],
        ["ivid", BigInt(inner & 0xfff)],
      ]);
    }
    case "ipv4": {
      if (b.length < 20 || (b[0] ?? 0) >> 4 !== 4) return undefined;
      const ihl = ((b[0] ?? 0) & 0xf) * 4;
      if (ihl < 20 || ihl > b.length || u16(b, 2) < ihl) return undefined;
      const proto = b[9] ?? 0;
      const firstFragment = (u16(b, 6) & 0x1fff) === 0;
      const ports = firstFragment && PORT_PROTOCOLS.has(proto) && ihl + 4 <= b.length;
      return new Map([
        ["src", uint(b, 12, 4)],
        ["dst", uint(b, 16, 4)],
        ["proto", BigInt(proto)],
        ["ttl", BigInt(b[8] ?? 0)],
        ["dscp", BigInt((b[1] ?? 0) >> 2)],
        ["sport", ports ? BigInt(u16(b, ihl)) : 0n],
        ["dport", ports ? BigInt(u16(b, ihl + 2)) : 0n],
      ]);
    }
    case "ipv6": {
      if (b.length < 40 || (b[0] ?? 0) >> 4 !== 6) return undefined;
      return new Map([
        ["src", uint(b, 8, 16)],
        ["dst", uint(b, 24, 16)],
        ["next", BigInt(b[6] ?? 0)],
        ["hlim", BigInt(b[7] ?? 0)],
        ["flow", uint(b, 0, 4) & 0xfffffn],
      ]);
    }
    case "cna": {
      if (b.length < 16) return undefined;
      return new Map([
        ["src", uint(b, 0, 4)],
        ["dst", uint(b, 4, 4)],
        ["session", uint(b, 8, 4)],
        ["overlay", uint(b, 12, 2)],
      ]);
    }
  }
  throw new Error(`the reference knows no design ${design.name}`);
}

/** RFC 1071: the ones' complement of the ones' complement sum of 16-bit words. */
export function internetChecksum(b: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < b.length; i += 2) sum += u16(b, i);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

/** Sets an IPv4 header's checksum field from the other bytes of its IHL × 4 bytes (in place). */
export function fixIpv4Checksum(b: Uint8Array): void {
  const ihl = ((b[0] ?? 0) & 0xf) * 4;
  put(b, 10, 2, 0n);
  put(b, 10, 2, BigInt(internetChecksum(b.subarray(0, ihl))));
}

/** The header `send` pushes: built from `f` in front of a payload of `payloadLen` bytes (its original length). */
export function buildHeader(design: DesignDef, f: Fields, payloadLen: number): Uint8Array {
  const v = (name: string): bigint => f.get(name) ?? 0n;
  switch (design.name) {
    case "ethernet": {
      const vid = v("vid");
      const pcp = v("pcp");
      const ivid = v("ivid");
      // A tag only when a tag field is set; with an inner VLAN, an 802.1ad service tag outside it.
      const tags: [number, bigint][] = ivid !== 0n ? [[TPID_SERVICE, (pcp << 13n) | vid], [TPID_CUSTOMER, ivid]] : vid !== 0n || pcp !== 0n ? [[TPID_CUSTOMER, (pcp << 13n) | vid]] : [];
      const h = new Uint8Array(14 + 4 * tags.length);
      put(h, 0, 6, v("dst"));
      put(h, 6, 6, v("src"));
      tags.forEach(([tpid, tci], i) => {
        put(h, 12 + 4 * i, 2, BigInt(tpid));
        put(h, 14 + 4 * i, 2, tci);
      });
      put(h, 12 + 4 * tags.length, 2, v("type"));
      return h;
    }
    case "ipv4": {
      const h = new Uint8Array(20);
      h[0] = 0x45;
      h[1] = Number(v("dscp") << 2n);
      put(h, 2, 2, BigInt((20 + payloadLen) & 0xffff)); // id, flags and fragment offset stay 0
      h[8] = Number(v("ttl"));
      h[9] = Number(v("proto"));
      put(h, 12, 4, v("src"));
      put(h, 16, 4, v("dst"));
      fixIpv4Checksum(h);
      return h;
    }
    case "ipv6": {
      const h = new Uint8Array(40);
      put(h, 0, 4, (6n << 28n) | v("flow"));
      put(h, 4, 2, BigInt(payloadLen & 0xffff));
      h[6] = Number(v("next"));
      h[7] = Number(v("hlim"));
      put(h, 8, 16, v("src"));
      put(h, 24, 16, v("dst"));
      return h;
    }
    case "cna": {
      const h = new Uint8Array(16); // the 2 reserved bytes stay 0
      put(h, 0, 4, v("src"));
      put(h, 4, 4, v("dst"));
      put(h, 8, 4, v("session"));
      put(h, 12, 2, v("overlay"));
      return h;
    }
  }
  throw new Error(`the reference knows no design ${design.name}`);
}

/**
 * Forwarding's side effect: a copy with TTL / hop limit − 1, or undefined when it would reach 0.
 * The IPv4 checksum is updated for the changed word (RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m')),
 * not recomputed: for a correct checksum the two agree (test/model/headers.test.ts), and a
 * wrong one stays wrong, as a router must not repair a header it did not check.
 */
export function decrementHopLimit(design: DesignDef, b: Uint8Array): Uint8Array | undefined {
  const at = design.name === "ipv4" ? 8 : design.name === "ipv6" ? 7 : -1;
  if (at < 0) return b;
  const hops = b[at] ?? 0;
  if (hops <= 1) return undefined;
  const out = b.slice();
  out[at] = hops - 1;
  if (design.name === "ipv4") {
    const word = (ttl: number): number => (ttl << 8) | (b[9] ?? 0); // TTL shares a 16-bit word with the protocol
    let sum = (~u16(b, 10) & 0xffff) + (~word(hops) & 0xffff) + word(hops - 1);
    while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
    put(out, 10, 2, BigInt(~sum & 0xffff));
  }
  return out;
}

/** Field values into a design's key vector (offsets from the registry's layout); the in-link first. */
export function keyVector(layout: KeyLayout, inLink: number, f: Fields): Uint8Array {
  const key = new Uint8Array(layout.len);
  for (const s of layout.slots) put(key, s.offset, s.len, s.field.name === "in" ? BigInt(inLink) : (f.get(s.field.name) ?? 0n));
  return key;
}
