// The vxlan design in main.p4: IPv4 (protocol 17), UDP and VXLAN (RFC 7348), pushed and popped
// as one header.

import { type DesignP4, registered } from "./design.js";
import { IPV4, IPV4_LED, ipv4State, NOT_FRAGMENT, OUTER_KEYS, pushIpv4 } from "./ipv4.js";

export const vxlan: DesignP4 = {
  design: registered("vxlan"),
  header: [
    IPV4,
    {
      types: [
        "header udp_t { bit<16> sport; bit<16> dport; bit<16> len; bit<16> checksum; }",
        "header vxlan_t { bit<8> flags; bit<24> reserved; bit<24> vni; bit<8> reserved2; }",
      ],
      instances: [
        { type: "udp_t", name: "udp" },
        { type: "vxlan_t", name: "vxlan" },
      ],
    },
  ],
  start: "parse_vxlan_ipv4",
  states: [
    ...ipv4State("parse_vxlan_ipv4", `hdr.ipv4.protocol == 17 && ${NOT_FRAGMENT}`, ["transition parse_udp;"]),
    "state parse_udp { packet.extract(hdr.udp); transition parse_vxlan; }",
    "state parse_vxlan {",
    "    packet.extract(hdr.vxlan);",
    "    verify(hdr.vxlan.flags[3:3] == 1, error.StrataBadHeader);  // the I flag (any UDP port: rows match dport)",
    "    transition accept;",
    "}",
  ],
  keys: [...OUTER_KEYS, "k.sport = hdr.udp.sport;", "k.dport = hdr.udp.dport;", "k.vni = hdr.vxlan.vni;"],
  push: [
    ...pushIpv4("17", "36"),
    "hdr.udp.setValid();",
    "hdr.udp.sport = k.sport;",
    "hdr.udp.dport = k.dport;",
    "hdr.udp.len = (bit<16>) payload_len + 16;",
    "hdr.udp.checksum = 0;  // allowed for IPv4, recommended by RFC 7348",
    "hdr.vxlan.setValid();",
    "hdr.vxlan.flags = 0x08;",
    "hdr.vxlan.reserved = 0;",
    "hdr.vxlan.vni = k.vni;",
    "hdr.vxlan.reserved2 = 0;",
  ],
  ...IPV4_LED,
};
