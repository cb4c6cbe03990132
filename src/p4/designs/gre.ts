// The gre design in main.p4: IPv4 (protocol 47) and GRE (RFC 2784, RFC 2890's key and sequence
// number), with a Cisco MetaData shim skipped as a tag is; pushed and popped as one header.

import { acceptState, type DesignP4, registered } from "./design.js";
import { IPV4, IPV4_LED, ipv4State, NOT_FRAGMENT, OUTER_KEYS, pushIpv4 } from "./ipv4.js";

export const gre: DesignP4 = {
  design: registered("gre"),
  header: [
    IPV4,
    {
      types: [
        "header gre_t { bit<1> c; bit<1> r; bit<1> k; bit<1> s; bit<1> ssr; " +
          "bit<3> recur; bit<5> flags; bit<3> version; bit<16> protocol; }",
        "header gre_word_t { bit<32> value; }",
        "header cmd_t { bit<16> ether_type; bit<8> version; bit<8> length; " +
          "bit<16> option_type; bit<16> sgt; }  // Cisco MetaData shim",
      ],
      instances: [
        { type: "gre_t", name: "gre" },
        { type: "gre_word_t", name: "gre_checksum" },
        { type: "gre_word_t", name: "gre_key" },
        { type: "gre_word_t", name: "gre_seq" },
        { type: "cmd_t", name: "cmd" },
      ],
    },
  ],
  start: "parse_gre_ipv4",
  states: [
    ...ipv4State("parse_gre_ipv4", `hdr.ipv4.protocol == 47 && ${NOT_FRAGMENT}`, ["transition parse_gre;"]),
    "state parse_gre {",
    "    packet.extract(hdr.gre);",
    "    // RFC 2784: version 0; routing, strict source route and recursion >= 4 are discarded",
    "    verify(hdr.gre.version == 0 && hdr.gre.r == 0 && hdr.gre.ssr == 0 " +
      "&& hdr.gre.recur[2:2] == 0, error.StrataBadHeader);",
    "    transition select(hdr.gre.c) { 1: parse_gre_checksum; default: parse_gre_key_present; }",
    "}",
    "state parse_gre_checksum { packet.extract(hdr.gre_checksum); transition parse_gre_key_present; }",
    "state parse_gre_key_present { transition select(hdr.gre.k) { 1: " +
      "parse_gre_key; default: parse_gre_seq_present; } }",
    "state parse_gre_key { packet.extract(hdr.gre_key); transition parse_gre_seq_present; }",
    "state parse_gre_seq_present { transition select(hdr.gre.s) { 1: parse_gre_seq; default: parse_gre_shim; } }",
    "state parse_gre_seq { packet.extract(hdr.gre_seq); transition parse_gre_shim; }",
    "state parse_gre_shim { transition select(hdr.gre.protocol) { 0x8909: parse_cmd; default: accept; } }",
    ...acceptState("parse_cmd", "cmd", "hdr.cmd.version == 1 && hdr.cmd.length == 1"),
  ],
  keys: [
    ...OUTER_KEYS,
    "k.type_ = hdr.gre.protocol;",
    "if (hdr.cmd.isValid()) { k.type_ = hdr.cmd.ether_type; }",
    "k.key_ = 0;",
    "if (hdr.gre_key.isValid()) { k.key_ = hdr.gre_key.value; }",
    "k.keyed = hdr.gre.k;",
  ],
  push: [
    "bit<16> key_len = 0;",
    "if (k.keyed == 1) { key_len = 4; }",
    ...pushIpv4("47", "24 + key_len"),
    "hdr.gre.setValid();",
    "hdr.gre.c = 0; hdr.gre.r = 0; hdr.gre.k = k.keyed; hdr.gre.s = 0; " +
      "hdr.gre.ssr = 0; hdr.gre.recur = 0; hdr.gre.flags = 0; hdr.gre.version " +
      "= 0;",
    "hdr.gre.protocol = k.type_;",
    "if (k.keyed == 1) { hdr.gre_key.setValid(); hdr.gre_key.value = k.key_; }",
  ],
  ...IPV4_LED,
};
