// The ipv6 design in main.p4: the fixed header.

import { acceptState, decrementField, type DesignP4, keysFrom, registered } from "./design.js";

export const ipv6: DesignP4 = {
  design: registered("ipv6"),
  header: [
    {
      types: [
        "header ipv6_t { bit<4> version; bit<8> traffic_class; bit<20> flow; " +
          "bit<16> payload_len; bit<8> next; bit<8> hlim; bit<128> src; bit<128> " +
          "dst; }",
      ],
      instances: [{ type: "ipv6_t", name: "ipv6" }],
    },
  ],
  start: "parse_ipv6",
  states: acceptState("parse_ipv6", "ipv6", "hdr.ipv6.version == 6"),
  keys: keysFrom("ipv6", ["src", "dst", "next", "hlim", "flow"]),
  push: [
    "hdr.ipv6.setValid();",
    "hdr.ipv6.version = 6;",
    "hdr.ipv6.traffic_class = 0;",
    "hdr.ipv6.flow = k.flow;",
    "hdr.ipv6.payload_len = (bit<16>) payload_len;",
    "hdr.ipv6.next = k.next;",
    "hdr.ipv6.hlim = k.hlim;",
    "hdr.ipv6.src = k.src;",
    "hdr.ipv6.dst = k.dst;",
  ],
  statedLen: "(bit<32>) hdr.ipv6.payload_len + 40",
  decrement: decrementField("hdr.ipv6.hlim"),
};
