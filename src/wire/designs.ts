// The header-design registry: for each design, the fields tables may match.
//
// This is the one description of matchable fields. The spec validator checks
// names and values against it, the wasm key builder writes fields at the
// offsets derived here (scripts/gen-abi.ts turns them into assembly/abi.ts),
// and the P4 export will name header fields from it.
//
// A packet's *key vector* for a design is the in-link (2 bytes) followed by the
// design's fields in the order below, each in ceil(bits/8) big-endian bytes,
// right-aligned; the vector is zero-padded to a multiple of 8 bytes so that the
// tables can hash and compare it a u64 at a time.

/** How a field's values are written in a spec. */
export type NameKind = "mac" | "ipv4" | "ipv6" | "uint";

export interface FieldDef {
  readonly name: string;
  readonly bits: number;
  readonly kind: NameKind;
  /** Where the field sits on the wire, for people (and the P4 export). */
  readonly where: string;
  /** Read-only fields can be matched but not written by `send`. */
  readonly readOnly?: boolean;
  /** Part of what identifies a flow: anycast keeps a flow on one receiver by these fields. */
  readonly flow?: boolean;
  /**
   * Identifies a session (a tunnel, a circuit) between two members beyond their names: a GRE key,
   * a VXLAN VNI, an MPLS label, a VLAN id. A send row writes it; a receive or acquire row matches it.
   * For the docs and the P4 export; the pipeline treats it as any other field.
   */
  readonly session?: boolean;
  /** What `send` writes when the row leaves the field out (else 0, or the design's defaults below). */
  readonly default?: bigint;
  /** A presence bit: `send` sets it to 1 when the row writes the field named here and leaves this one out. */
  readonly presenceOf?: string;
}

export interface DesignDef {
  readonly name: string;
  /** Numeric id shared with the data plane. */
  readonly id: number;
  readonly summary: string;
  /** How member names (addresses) are written. */
  readonly nameKind: NameKind;
  /** The field holding a packet's destination name, and its source name (none: the header names no sender). */
  readonly dstField: string;
  readonly srcField?: string;
  readonly fields: readonly FieldDef[];
  /** pcap link type of a capture whose frames start with this design's header (outputs are written with it). */
  readonly linkType: number;
  /** Other link types whose frames start with this design's header, accepted as input. */
  readonly alsoLinkTypes?: readonly number[];
  /** The field forwarding decrements (with `ttl: decrement`) and `send` fills with 64 by default. */
  readonly hopLimitField?: string;
}

export const IN_LINK_FIELD: FieldDef = {
  name: "in",
  bits: 16,
  kind: "uint",
  where: "metadata: the in-link's identifier at this member",
};

/** The fields of the IPv4 header a tunnel design (gre, vxlan) starts with. */
const OUTER_IPV4: readonly FieldDef[] = [
  { name: "src", bits: 32, kind: "ipv4", where: "outer IPv4 bytes 12-15", flow: true },
  { name: "dst", bits: 32, kind: "ipv4", where: "outer IPv4 bytes 16-19", flow: true },
  { name: "ttl", bits: 8, kind: "uint", where: "outer IPv4 byte 8" },
  { name: "dscp", bits: 6, kind: "uint", where: "outer IPv4 byte 1, high 6 bits" },
];

export const DESIGNS: readonly DesignDef[] = [
  {
    name: "ethernet",
    id: 1,
    summary: "Ethernet II with optional 802.1Q / 802.1ad tags",
    nameKind: "mac",
    dstField: "dst",
    srcField: "src",
    linkType: 1,
    fields: [
      { name: "dst", bits: 48, kind: "mac", where: "bytes 0-5", flow: true },
      { name: "src", bits: 48, kind: "mac", where: "bytes 6-11", flow: true },
      { name: "type", bits: 16, kind: "uint", where: "the ethertype after all tags", flow: true },
      {
        name: "vid",
        bits: 12,
        kind: "uint",
        where: "VLAN id of the outer tag (0 when untagged)",
        flow: true,
        session: true,
      },
      { name: "pcp", bits: 3, kind: "uint", where: "priority of the outer tag (0 when untagged)" },
      {
        name: "ivid",
        bits: 12,
        kind: "uint",
        where: "VLAN id of the inner tag of a double-tagged frame (0 otherwise)",
        flow: true,
        session: true,
      },
    ],
  },
  {
    name: "ipv4",
    id: 2,
    summary: "IPv4 (options skipped by IHL); transport ports read-only",
    nameKind: "ipv4",
    dstField: "dst",
    srcField: "src",
    linkType: 101,
    hopLimitField: "ttl",
    fields: [
      { name: "src", bits: 32, kind: "ipv4", where: "bytes 12-15", flow: true },
      { name: "dst", bits: 32, kind: "ipv4", where: "bytes 16-19", flow: true },
      { name: "proto", bits: 8, kind: "uint", where: "byte 9", flow: true },
      { name: "ttl", bits: 8, kind: "uint", where: "byte 8" },
      { name: "dscp", bits: 6, kind: "uint", where: "byte 1, high 6 bits" },
      {
        name: "sport",
        bits: 16,
        kind: "uint",
        where: "TCP/UDP/SCTP source port of a first fragment (0 otherwise)",
        readOnly: true,
        flow: true,
      },
      {
        name: "dport",
        bits: 16,
        kind: "uint",
        where: "TCP/UDP/SCTP destination port of a first fragment (0 otherwise)",
        readOnly: true,
        flow: true,
      },
    ],
  },
  {
    name: "ipv6",
    id: 3,
    summary: "IPv6 fixed header",
    nameKind: "ipv6",
    dstField: "dst",
    srcField: "src",
    linkType: 101,
    hopLimitField: "hlim",
    fields: [
      { name: "src", bits: 128, kind: "ipv6", where: "bytes 8-23", flow: true },
      { name: "dst", bits: 128, kind: "ipv6", where: "bytes 24-39", flow: true },
      { name: "next", bits: 8, kind: "uint", where: "byte 6", flow: true },
      { name: "hlim", bits: 8, kind: "uint", where: "byte 7" },
      { name: "flow", bits: 20, kind: "uint", where: "bytes 1-3, low 20 bits", flow: true },
    ],
  },
  {
    name: "cna",
    id: 4,
    summary: "strata's native 16-byte header for abstract studies",
    nameKind: "uint",
    dstField: "dst",
    srcField: "src",
    linkType: 147,
    fields: [
      { name: "src", bits: 32, kind: "uint", where: "bytes 0-3", flow: true },
      { name: "dst", bits: 32, kind: "uint", where: "bytes 4-7", flow: true },
      { name: "session", bits: 32, kind: "uint", where: "bytes 8-11", flow: true, session: true },
      { name: "overlay", bits: 16, kind: "uint", where: "bytes 12-13: what the payload is (0 = data)", flow: true },
    ],
  },
  {
    name: "gre",
    id: 5,
    summary:
      "IPv4 (protocol 47) and GRE (RFC 2784, key and sequence number of RFC 2890), pushed and popped as one header",
    nameKind: "ipv4",
    dstField: "dst",
    srcField: "src",
    linkType: 101,
    hopLimitField: "ttl",
    fields: [
      ...OUTER_IPV4,
      {
        name: "type",
        bits: 16,
        kind: "uint",
        where: "GRE protocol type (an ethertype; after a Cisco MetaData shim, the type it carries)",
        flow: true,
      },
      { name: "key", bits: 32, kind: "uint", where: "GRE key (0 when absent)", flow: true, session: true },
      {
        name: "keyed",
        bits: 1,
        kind: "uint",
        where: "GRE K bit: 1 when the key is present",
        session: true,
        presenceOf: "key",
      },
    ],
  },
  {
    name: "vxlan",
    id: 6,
    summary: "IPv4 (protocol 17), UDP and VXLAN (RFC 7348), pushed and popped as one header",
    nameKind: "ipv4",
    dstField: "dst",
    srcField: "src",
    linkType: 101,
    hopLimitField: "ttl",
    fields: [
      ...OUTER_IPV4,
      {
        name: "sport",
        bits: 16,
        kind: "uint",
        where: "UDP source port (senders usually derive it from the inner flow)",
        flow: true,
        session: true,
      },
      {
        name: "dport",
        bits: 16,
        kind: "uint",
        where: "UDP destination port",
        flow: true,
        session: true,
        default: 4789n,
      },
      { name: "vni", bits: 24, kind: "uint", where: "VXLAN network identifier", flow: true, session: true },
    ],
  },
  {
    name: "mpls",
    id: 7,
    summary: "one MPLS label stack entry (RFC 3032); a label stack is mpls networks layered on each other",
    nameKind: "uint",
    dstField: "label",
    linkType: 148,
    alsoLinkTypes: [219],
    hopLimitField: "ttl",
    fields: [
      { name: "label", bits: 20, kind: "uint", where: "bits 0-19", flow: true, session: true },
      { name: "tc", bits: 3, kind: "uint", where: "bits 20-22: traffic class" },
      { name: "s", bits: 1, kind: "uint", where: "bit 23: bottom of stack", default: 1n },
      { name: "ttl", bits: 8, kind: "uint", where: "bits 24-31" },
    ],
  },
];
/** A field's place in the key vector. */
export interface FieldSlot {
  readonly field: FieldDef;
  /** Byte offset in the key vector. */
  readonly offset: number;
  /** Bytes it occupies: ceil(bits / 8). */
  readonly len: number;
}

export interface KeyLayout {
  readonly design: DesignDef;
  /** The in-link first, then the design's fields. */
  readonly slots: readonly FieldSlot[];
  /** Bytes used. */
  readonly usedLen: number;
  /** usedLen rounded up to a multiple of 8. */
  readonly len: number;
}

export function keyLayout(design: DesignDef): KeyLayout {
  const slots: FieldSlot[] = [];
  let offset = 0;
  for (const field of [IN_LINK_FIELD, ...design.fields]) {
    const len = Math.ceil(field.bits / 8);
    slots.push({ field, offset, len });
    offset += len;
  }
  return { design, slots, usedLen: offset, len: (offset + 7) & ~7 };
}

export function designNamed(name: string): DesignDef | undefined {
  return DESIGNS.find((d) => d.name === name);
}

export function designById(id: number): DesignDef | undefined {
  return DESIGNS.find((d) => d.id === id);
}
