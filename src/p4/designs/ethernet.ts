// The ethernet design in main.p4: Ethernet II and up to two 802.1Q / 802.1ad tags.

import { acceptState, type DesignP4, fromKeys, type HeaderGroup, keysFrom, registered } from "./design.js";

const ETHERNET: HeaderGroup = {
  types: [
    "header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }",
    "header vlan_t { bit<3> pcp; bit<1> dei; bit<12> vid; bit<16> ether_type; }",
  ],
  instances: [
    { type: "ethernet_t", name: "ethernet" },
    { type: "vlan_t", name: "vlan0" },
    { type: "vlan_t", name: "vlan1" },
  ],
};

/** The transition after a header whose ether_type may announce a tag (802.1Q, 802.1ad, the older 0x9100). */
const tagged = (header: string, tag: string): string =>
  `    transition select(hdr.${header}.ether_type) { 0x8100: ${tag}; 0x88a8: ${tag}; 0x9100: ${tag}; default: ` +
  `accept; }`;

export const ethernet: DesignP4 = {
  design: registered("ethernet"),
  header: [ETHERNET],
  start: "parse_ethernet",
  states: [
    "state parse_ethernet {",
    "    packet.extract(hdr.ethernet);",
    tagged("ethernet", "parse_vlan0"),
    "}",
    "state parse_vlan0 {",
    "    packet.extract(hdr.vlan0);",
    tagged("vlan0", "parse_vlan1"),
    "}",
    ...acceptState("parse_vlan1", "vlan1"),
  ],
  keys: [
    ...keysFrom("ethernet", ["dst", "src"]),
    "k.type_ = hdr.ethernet.ether_type;",
    "k.vid = 0;",
    "k.pcp = 0;",
    "k.ivid = 0;",
    "if (hdr.vlan0.isValid()) { k.type_ = hdr.vlan0.ether_type; k.vid = hdr.vlan0.vid; k.pcp = hdr.vlan0.pcp; }",
    "if (hdr.vlan1.isValid()) { k.type_ = hdr.vlan1.ether_type; k.ivid = hdr.vlan1.vid; }",
  ],
  push: [
    "hdr.ethernet.setValid();",
    ...fromKeys("ethernet", ["dst", "src"]),
    "if (k.ivid != 0) {",
    "    // double-tagged: a service tag outside, the customer tag inside (802.1ad)",
    "    hdr.ethernet.ether_type = 0x88a8;",
    "    hdr.vlan0.setValid(); hdr.vlan0.pcp = k.pcp; hdr.vlan0.dei = 0; " +
      "hdr.vlan0.vid = k.vid; hdr.vlan0.ether_type = 0x8100;",
    "    hdr.vlan1.setValid(); hdr.vlan1.pcp = 0; hdr.vlan1.dei = 0; " +
      "hdr.vlan1.vid = k.ivid; hdr.vlan1.ether_type = k.type_;",
    "} else if (k.vid != 0 || k.pcp != 0) {",
    "    hdr.ethernet.ether_type = 0x8100;",
    "    hdr.vlan0.setValid(); hdr.vlan0.pcp = k.pcp; hdr.vlan0.dei = 0; " +
      "hdr.vlan0.vid = k.vid; hdr.vlan0.ether_type = k.type_;",
    "} else {",
    "    hdr.ethernet.ether_type = k.type_;",
    "}",
  ],
};
