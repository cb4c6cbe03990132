// The reference's view of packet bytes: for each header design, one entry of
// HEADERS that reads its header into named field values, builds the header a
// send row pushes (lengths and checksums computed here), states the packet's
// length where the header has a length field, and applies forwarding's side
// effect. Plain TypeScript over Uint8Array and bigint, written from the
// formats' documents (IEEE 802.1Q, RFC 791, RFC 1071, RFC 1624, RFC 8200, the
// cna box in DESIGN.md, RFC 2784/2890 GRE, RFC 7348 VXLAN, RFC 3032 MPLS) — not from assembly/wire, the compiler or the
// design
// registry's key layouts. A design is one entry: add a design by adding one.

/** A header's matchable fields by name, as unsigned values of the field's width. */
export type Fields = ReadonlyMap<string, bigint>;

/** A header read from the front of a packet: its fields and how many bytes it takes. */
export interface Parsed {
  readonly fields: Fields;
  readonly len: number;
}

export interface HeaderDesign {
  readonly name: string;
  /** Every field rows may match or send rows may write, with its width in bits. */
  readonly bits: Readonly<Record<string, number>>;
  /** The header at the front of `b`, or undefined when `b` does not start with a valid one. */
  parse(b: Uint8Array): Parsed | undefined;
  /** The header `send` pushes, from the row's field values, in front of a payload of `payloadLen` bytes (its original
   * length). */
  build(f: Fields, payloadLen: number): Uint8Array;
  /** The longest payload the header built from `f` can state (a 16-bit length field); Infinity without one. */
  maxPayload(f: Fields): number;
  /** The packet's length as its own header states it, when `b` holds the length field; undefined for a design without
   * one. */
  statedLen?(b: Uint8Array): number | undefined;
  /**
   * Forwarding's side effect (`ttl: decrement`): a copy with the hop limit lowered by
   * one, or undefined when it would reach 0. Absent: the design has no hop limit.
   */
  decrementHopLimit?(b: Uint8Array): Uint8Array | undefined;
}

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
/** A field a send row does not give is 0 (the loader fills in the documented defaults). */
const value = (f: Fields, name: string): bigint => f.get(name) ?? 0n;

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

// ── Ethernet (IEEE 802.3 / 802.1Q / 802.1ad) ──────────────────────────────

export const TPID_CUSTOMER = 0x8100; // 802.1Q
export const TPID_SERVICE = 0x88a8; // 802.1ad
export const TPID_SERVICE_OLD = 0x9100; // Q-in-Q before 802.1ad
const MAX_TAGS = 2;

const ethernet: HeaderDesign = {
  name: "ethernet",
  bits: { dst: 48, src: 48, type: 16, vid: 12, pcp: 3, ivid: 12 },
  maxPayload: () => Infinity,
  parse(b) {
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
    const fields = new Map([
      ["dst", uint(b, 0, 6)],
      ["src", uint(b, 6, 6)],
      ["type", BigInt(type)],
      ["vid", BigInt(outer & 0xfff)],
      ["pcp", BigInt(outer >> 13)],
      ["ivid", BigInt(inner & 0xfff)],
    ]);
    return { fields, len: at + 2 };
  },
  build(f) {
    const vid = value(f, "vid");
    const pcp = value(f, "pcp");
    const ivid = value(f, "ivid");
    // A tag only when a tag field is set; with an inner VLAN, an 802.1ad service tag outside it.
    const tags: [number, bigint][] =
      ivid !== 0n
        ? [
            [TPID_SERVICE, (pcp << 13n) | vid],
            [TPID_CUSTOMER, ivid],
          ]
        : vid !== 0n || pcp !== 0n
          ? [[TPID_CUSTOMER, (pcp << 13n) | vid]]
          : [];
    const h = new Uint8Array(14 + 4 * tags.length);
    put(h, 0, 6, value(f, "dst"));
    put(h, 6, 6, value(f, "src"));
    tags.forEach(([tpid, tci], i) => {
      put(h, 12 + 4 * i, 2, BigInt(tpid));
      put(h, 14 + 4 * i, 2, tci);
    });
    put(h, 12 + 4 * tags.length, 2, value(f, "type"));
    return h;
  },
};

// ── IPv4 (RFC 791) ────────────────────────────────────────────────────────

/** IPv4 protocols whose first 4 bytes are source and destination ports: TCP, UDP, SCTP, UDP-Lite. */
export const PORT_PROTOCOLS: ReadonlySet<number> = new Set([6, 17, 132, 136]);
const IPV4_LEN = 20; // the header send pushes: no options

const ipv4: HeaderDesign = {
  name: "ipv4",
  bits: { src: 32, dst: 32, proto: 8, ttl: 8, dscp: 6, sport: 16, dport: 16 },
  maxPayload: () => 0xffff - IPV4_LEN,
  parse(b) {
    if (b.length < 20 || (b[0] ?? 0) >> 4 !== 4) return undefined;
    const ihl = ((b[0] ?? 0) & 0xf) * 4;
    if (ihl < 20 || ihl > b.length || u16(b, 2) < ihl) return undefined;
    const proto = b[9] ?? 0;
    const firstFragment = (u16(b, 6) & 0x1fff) === 0;
    const ports = firstFragment && PORT_PROTOCOLS.has(proto) && ihl + 4 <= b.length;
    const fields = new Map([
      ["src", uint(b, 12, 4)],
      ["dst", uint(b, 16, 4)],
      ["proto", BigInt(proto)],
      ["ttl", BigInt(b[8] ?? 0)],
      ["dscp", BigInt((b[1] ?? 0) >> 2)],
      ["sport", ports ? BigInt(u16(b, ihl)) : 0n],
      ["dport", ports ? BigInt(u16(b, ihl + 2)) : 0n],
    ]);
    return { fields, len: ihl };
  },
  build(f, payloadLen) {
    const h = new Uint8Array(IPV4_LEN);
    h[0] = 0x45; // version 4, IHL 5
    h[1] = Number(value(f, "dscp") << 2n);
    put(h, 2, 2, BigInt(IPV4_LEN + payloadLen)); // total length; id, flags and fragment offset stay 0
    h[8] = Number(value(f, "ttl"));
    h[9] = Number(value(f, "proto"));
    put(h, 12, 4, value(f, "src"));
    put(h, 16, 4, value(f, "dst"));
    fixIpv4Checksum(h);
    return h;
  },
  statedLen: (b) => (b.length >= 4 ? u16(b, 2) : undefined), // total length
  /**
   * The IPv4 checksum is updated for the changed word (RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m')),
   * not recomputed: for a correct checksum the two agree (test/model/headers.test.ts), and a
   * wrong one stays wrong, as a router must not repair a header it did not check.
   */
  decrementHopLimit: decrementIpv4Ttl,
};

function decrementIpv4Ttl(b: Uint8Array): Uint8Array | undefined {
  const ttl = b[8] ?? 0;
  if (ttl <= 1) return undefined;
  const out = b.slice();
  out[8] = ttl - 1;
  const word = (t: number): number => (t << 8) | (b[9] ?? 0); // TTL shares a 16-bit word with the protocol
  let sum = (~u16(b, 10) & 0xffff) + (~word(ttl) & 0xffff) + word(ttl - 1);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  put(out, 10, 2, BigInt(~sum & 0xffff));
  return out;
}

// ── IPv6 (RFC 8200): the fixed header ─────────────────────────────────────

const IPV6_LEN = 40;

const ipv6: HeaderDesign = {
  name: "ipv6",
  bits: { src: 128, dst: 128, next: 8, hlim: 8, flow: 20 },
  maxPayload: () => 0xffff,
  parse(b) {
    if (b.length < IPV6_LEN || (b[0] ?? 0) >> 4 !== 6) return undefined;
    const fields = new Map([
      ["src", uint(b, 8, 16)],
      ["dst", uint(b, 24, 16)],
      ["next", BigInt(b[6] ?? 0)],
      ["hlim", BigInt(b[7] ?? 0)],
      ["flow", uint(b, 0, 4) & 0xfffffn],
    ]);
    return { fields, len: IPV6_LEN };
  },
  build(f, payloadLen) {
    const h = new Uint8Array(IPV6_LEN);
    put(h, 0, 4, (6n << 28n) | value(f, "flow")); // version 6, traffic class 0
    put(h, 4, 2, BigInt(payloadLen));
    h[6] = Number(value(f, "next"));
    h[7] = Number(value(f, "hlim"));
    put(h, 8, 16, value(f, "src"));
    put(h, 24, 16, value(f, "dst"));
    return h;
  },
  statedLen: (b) => (b.length >= 6 ? IPV6_LEN + u16(b, 4) : undefined), // the fixed header + payload length
  decrementHopLimit(b) {
    const hlim = b[7] ?? 0;
    if (hlim <= 1) return undefined;
    const out = b.slice();
    out[7] = hlim - 1;
    return out;
  },
};

// ── cna: strata's 16-byte native header ───────────────────────────────────

const CNA_LEN = 16; // src, dst, session (4 bytes each), overlay (2), 2 reserved

const cna: HeaderDesign = {
  name: "cna",
  bits: { src: 32, dst: 32, session: 32, overlay: 16 },
  maxPayload: () => Infinity,
  parse(b) {
    if (b.length < CNA_LEN) return undefined;
    const fields = new Map([
      ["src", uint(b, 0, 4)],
      ["dst", uint(b, 4, 4)],
      ["session", uint(b, 8, 4)],
      ["overlay", uint(b, 12, 2)],
    ]);
    return { fields, len: CNA_LEN };
  },
  build(f) {
    const h = new Uint8Array(CNA_LEN); // the 2 reserved bytes stay 0
    put(h, 0, 4, value(f, "src"));
    put(h, 4, 4, value(f, "dst"));
    put(h, 8, 4, value(f, "session"));
    put(h, 12, 2, value(f, "overlay"));
    return h;
  },
};

// ── Tunnels that start with IPv4: the outer header's part ─────────────────

/** A valid IPv4 header carrying `proto`, not a fragment (no reassembly): its length, or undefined. */
function outerIpv4(b: Uint8Array, proto: number): number | undefined {
  if (b.length < 20 || (b[0] ?? 0) >> 4 !== 4) return undefined;
  const ihl = ((b[0] ?? 0) & 0xf) * 4;
  if (ihl < 20 || ihl > b.length || u16(b, 2) < ihl) return undefined;
  if ((b[9] ?? 0) !== proto) return undefined;
  const moreFragments = (u16(b, 6) & 0x2000) !== 0;
  const offset = u16(b, 6) & 0x1fff;
  return moreFragments || offset !== 0 ? undefined : ihl;
}

const outerFields = (b: Uint8Array): [string, bigint][] => [
  ["src", uint(b, 12, 4)],
  ["dst", uint(b, 16, 4)],
  ["ttl", BigInt(b[8] ?? 0)],
  ["dscp", BigInt((b[1] ?? 0) >> 2)],
];

/** A 20-byte outer IPv4 header for `proto`, total length and checksum computed. */
function buildOuter(f: Fields, proto: number, rest: number): Uint8Array {
  return ipv4.build(new Map([...f, ["proto", BigInt(proto)]]), rest);
}

// ── gre: IPv4 (protocol 47) + GRE (RFC 2784, RFC 2890 key and sequence) ───

const GRE_PROTO = 47;
const GRE_C = 0x8000; // checksum present (with reserved1)
const GRE_R = 0x4000; // RFC 1701 routing present: RFC 2784 receivers discard
const GRE_K = 0x2000; // key present
const GRE_S = 0x1000; // sequence number present
const GRE_STRICT = 0x0800; // RFC 1701 strict source route: discard
const GRE_RECURSION_HIGH = 0x0400; // RFC 1701 recursion ≥ 4: discard
/** Cisco MetaData shim: protocol type 0x8909, then version 1, length 1 (one option: an SGT), the option, the SGT. */
const CMD_TYPE = 0x8909;
const CMD_LEN = 8;

const gre: HeaderDesign = {
  name: "gre",
  bits: { src: 32, dst: 32, ttl: 8, dscp: 6, type: 16, key: 32, keyed: 1 },
  maxPayload: (f) => 0xffff - IPV4_LEN - 4 - (value(f, "keyed") === 1n ? 4 : 0),
  parse(b) {
    const ihl = outerIpv4(b, GRE_PROTO);
    if (ihl === undefined || ihl + 4 > b.length) return undefined;
    const flags = u16(b, ihl);
    // version 0 only
    if ((flags & 0x7) !== 0 || (flags & (GRE_R | GRE_STRICT | GRE_RECURSION_HIGH)) !== 0) return undefined;
    let at = ihl + 4;
    if (flags & GRE_C) at += 4;
    const keyAt = at;
    if (flags & GRE_K) at += 4;
    if (flags & GRE_S) at += 4;
    if (at > b.length) return undefined;
    let type = u16(b, ihl + 2);
    if (type === CMD_TYPE) {
      if (at + CMD_LEN > b.length || b[at + 2] !== 1 || b[at + 3] !== 1) return undefined;
      type = u16(b, at);
      at += CMD_LEN;
    }
    const keyed = (flags & GRE_K) !== 0;
    const fields = new Map([
      ...outerFields(b),
      ["type", BigInt(type)],
      ["key", keyed ? uint(b, keyAt, 4) : 0n],
      ["keyed", keyed ? 1n : 0n],
    ]);
    return { fields, len: at };
  },
  build(f, payloadLen) {
    const keyed = value(f, "keyed") === 1n;
    const g = new Uint8Array(keyed ? 8 : 4);
    put(g, 0, 2, BigInt(keyed ? GRE_K : 0)); // version 0
    put(g, 2, 2, value(f, "type"));
    if (keyed) put(g, 4, 4, value(f, "key"));
    return concatBytes(buildOuter(f, GRE_PROTO, g.length + payloadLen), g);
  },
  statedLen: (b) => ipv4.statedLen?.(b),
  decrementHopLimit: decrementIpv4Ttl,
};

// ── vxlan: IPv4 (protocol 17) + UDP + VXLAN (RFC 7348) ────────────────────

const UDP_PROTO = 17;
const VXLAN_I = 0x08;

const vxlan: HeaderDesign = {
  name: "vxlan",
  bits: { src: 32, dst: 32, ttl: 8, dscp: 6, sport: 16, dport: 16, vni: 24 },
  maxPayload: () => 0xffff - IPV4_LEN - 8 - 8,
  parse(b) {
    const ihl = outerIpv4(b, UDP_PROTO);
    if (ihl === undefined || ihl + 16 > b.length) return undefined;
    if (((b[ihl + 8] ?? 0) & VXLAN_I) === 0) return undefined; // the VNI is valid only with I
    const fields = new Map([
      ...outerFields(b),
      ["sport", BigInt(u16(b, ihl))],
      ["dport", BigInt(u16(b, ihl + 2))],
      ["vni", uint(b, ihl + 12, 3)],
    ]);
    return { fields, len: ihl + 16 };
  },
  build(f, payloadLen) {
    const u = new Uint8Array(16); // UDP (checksum 0: RFC 7348 §5 for IPv4), then VXLAN
    put(u, 0, 2, value(f, "sport"));
    put(u, 2, 2, value(f, "dport"));
    put(u, 4, 2, BigInt(16 + payloadLen));
    u[8] = VXLAN_I;
    put(u, 12, 3, value(f, "vni"));
    return concatBytes(buildOuter(f, UDP_PROTO, u.length + payloadLen), u);
  },
  statedLen: (b) => ipv4.statedLen?.(b),
  decrementHopLimit: decrementIpv4Ttl,
};

// ── mpls: one label stack entry (RFC 3032) ────────────────────────────────

const mpls: HeaderDesign = {
  name: "mpls",
  bits: { label: 20, tc: 3, s: 1, ttl: 8 },
  maxPayload: () => Infinity,
  parse(b) {
    if (b.length < 4) return undefined;
    const e = uint(b, 0, 4);
    const fields = new Map([
      ["label", e >> 12n],
      ["tc", (e >> 9n) & 7n],
      ["s", (e >> 8n) & 1n],
      ["ttl", e & 0xffn],
    ]);
    return { fields, len: 4 };
  },
  build(f) {
    const h = new Uint8Array(4);
    put(h, 0, 4, (value(f, "label") << 12n) | (value(f, "tc") << 9n) | (value(f, "s") << 8n) | value(f, "ttl"));
    return h;
  },
  decrementHopLimit(b) {
    const ttl = b[3] ?? 0;
    if (ttl <= 1) return undefined;
    const out = b.slice();
    out[3] = ttl - 1;
    return out;
  },
};

function concatBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** The designs the reference knows, by name. */
export const HEADERS: ReadonlyMap<string, HeaderDesign> = new Map(
  [ethernet, ipv4, ipv6, cna, gre, vxlan, mpls].map((d) => [d.name, d]),
);

/** The reference's entry for design `name`; a design it does not know is a programmer error. */
export function headerDesign(name: string): HeaderDesign {
  const d = HEADERS.get(name);
  if (d === undefined) {
    throw new Error(
      `the reference (src/model/headers.ts) knows no header design '${name}': add its entry to HEADERS (it ` +
        `knows ${[...HEADERS.keys()].join(", ")})`,
    );
  }
  return d;
}
