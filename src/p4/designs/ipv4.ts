// The ipv4 design in main.p4, and the IPv4 header the tunnel designs (gre, vxlan) start with:
// one set of IPv4 header instances serves them all.

import { acceptState, type DesignP4, type HeaderGroup, keysFrom, registered } from "./design.js";

export const IPV4: HeaderGroup = {
  types: [
    "header ipv4_t {",
    "    bit<4> version; bit<4> ihl; bit<6> dscp; bit<2> ecn; bit<16> total_len;",
    "    bit<16> identification; bit<3> flags; bit<13> frag_offset;",
    "    bit<8> ttl; bit<8> protocol; bit<16> checksum; bit<32> src; bit<32> dst;",
    "}",
    "header ipv4_options_t { varbit<320> options; }",
  ],
  instances: [
    { type: "ipv4_t", name: "ipv4" },
    { type: "ipv4_options_t", name: "ipv4_options" },
  ],
  checksum: [
    "// A pushed IPv4 header (20 bytes, no options) gets its checksum; a forwarded one was updated incrementally.",
    "update_checksum(meta.pushed == 1 && hdr.ipv4.isValid(),",
    "    { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn, hdr.ipv4.total_len, hdr.ipv4.identification,",
    "      hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src, hdr.ipv4.dst },",
    "    hdr.ipv4.checksum, HashAlgorithm.csum16);",
  ],
};

const PORTS: HeaderGroup = {
  types: [
    "header ports_t { bit<16> sport; bit<16> dport; }  // TCP/UDP/SCTP ports of a first fragment: payload, read only",
  ],
  instances: [{ type: "ports_t", name: "ports" }],
};

/** A tunnel's IPv4 header is not a fragment (strata does not reassemble). */
export const NOT_FRAGMENT = "hdr.ipv4.frag_offset == 0 && hdr.ipv4.flags[0:0] == 0";

/** A state taking an IPv4 header (options skipped), checked further by `check` when given, then `next`. */
export function ipv4State(state: string, check: string | undefined, next: readonly string[]): string[] {
  return [
    `state ${state} {`,
    "    packet.extract(hdr.ipv4);",
    "    verify(hdr.ipv4.version == 4 && hdr.ipv4.ihl >= 5, error.StrataBadHeader);",
    "    packet.extract(hdr.ipv4_options, ((bit<32>) hdr.ipv4.ihl - 5) * 32);  // options are skipped, never read",
    "    verify(hdr.ipv4.total_len >= (bit<16>) hdr.ipv4.ihl * 4, error.StrataBadHeader);",
    ...(check !== undefined ? [`    verify(${check}, error.StrataBadHeader);`] : []),
    ...next.map((l) => `    ${l}`),
    "}",
  ];
}

/** The key fields a tunnel design takes from its IPv4 header (src/wire/designs.ts OUTER_IPV4). */
export const OUTER_KEYS = keysFrom("ipv4", ["src", "dst", "ttl", "dscp"]);

/** A 20-byte IPv4 header of `protocol` pushed in front of the payload and `headerLen` more bytes. */
export function pushIpv4(protocol: string, headerLen: string): string[] {
  return [
    "hdr.ipv4.setValid();",
    "hdr.ipv4.version = 4;",
    "hdr.ipv4.ihl = 5;",
    "hdr.ipv4.dscp = k.dscp;",
    "hdr.ipv4.ecn = 0;",
    `hdr.ipv4.total_len = (bit<16>) payload_len + ${headerLen};`,
    "hdr.ipv4.identification = 0;",
    "hdr.ipv4.flags = 0;",
    "hdr.ipv4.frag_offset = 0;",
    "hdr.ipv4.ttl = k.ttl;",
    `hdr.ipv4.protocol = ${protocol};`,
    "hdr.ipv4.src = k.src;",
    "hdr.ipv4.dst = k.dst;",
  ];
}

/** What every design led by an IPv4 header has from it: the length it states, and its TTL (incremental checksum, RFC
 * 1624). */
export const IPV4_LED: Pick<DesignP4, "statedLen" | "decrement"> = {
  statedLen: "(bit<32>) hdr.ipv4.total_len",
  decrement: [
    "if (hdr.ipv4.ttl <= 1) {",
    "    drop_packet(DROP_TTL_EXPIRED);",
    "} else {",
    "    bit<32> sum = (bit<32>) ~hdr.ipv4.checksum + (bit<32>) " +
      "~(hdr.ipv4.ttl ++ hdr.ipv4.protocol) + (bit<32>) ((hdr.ipv4.ttl - 1) " +
      "++ hdr.ipv4.protocol);",
    "    sum = (sum & 0xffff) + (sum >> 16);",
    "    sum = (sum & 0xffff) + (sum >> 16);",
    "    hdr.ipv4.ttl = hdr.ipv4.ttl - 1;",
    "    hdr.ipv4.checksum = ~((bit<16>) sum);",
    "}",
  ],
};

export const ipv4: DesignP4 = {
  design: registered("ipv4"),
  header: [IPV4],
  payload: [PORTS],
  start: "parse_ipv4",
  states: [
    ...ipv4State("parse_ipv4", undefined, [
      "transition select(hdr.ipv4.frag_offset, hdr.ipv4.protocol) {",
      "    (0, 6): parse_ports_room; (0, 17): parse_ports_room; (0, 132): " +
        "parse_ports_room; (0, 136): parse_ports_room;",
      "    default: accept;",
      "}",
    ]),
    // strata reads the ports only where 4 bytes follow the header (src/model/headers.ts ipv4), in
    // the bytes the member's pass has: this pass's, less a packet-out's header and the bytes to cut
    // behind earlier passes' packets (meta.trail), and after a pop no more than the length the
    // header states (the rest is padding: src/model/interpreter.ts #receive). A packet too short for
    // them is forwarded with ports 0, as in strata, not dropped as a parser error.
    "state parse_ports_room {",
    "    bit<32> room = standard_metadata.packet_length - meta.trail - " +
      "(hdr.packet_out.isValid() ? PACKET_OUT_LEN : 0);",
    "    bit<32> stated = (bit<32>) hdr.ipv4.total_len;",
    "    bit<32> have = meta.popped == 1 && stated < room ? stated : room;",
    "    transition select(have >= (bit<32>) hdr.ipv4.ihl * 4 + 4) { true: parse_ports; default: accept; }",
    "}",
    ...acceptState("parse_ports", "ports"),
  ],
  keys: [
    ...keysFrom("ipv4", ["src", "dst"]),
    "k.proto = hdr.ipv4.protocol;",
    ...keysFrom("ipv4", ["ttl", "dscp"]),
    "k.sport = 0;",
    "k.dport = 0;",
    "if (hdr.ports.isValid()) { k.sport = hdr.ports.sport; k.dport = hdr.ports.dport; }",
  ],
  push: pushIpv4("k.proto", "20"),
  ...IPV4_LED,
};
