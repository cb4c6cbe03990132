// The mpls design in main.p4: one label stack entry (a stack is mpls networks layered on each other).

import { acceptState, decrementField, type DesignP4, fromKeys, keysFrom, registered } from "./design.js";

const FIELDS = ["label", "tc", "s", "ttl"];

export const mpls: DesignP4 = {
  design: registered("mpls"),
  header: [
    {
      types: ["header mpls_t { bit<20> label; bit<3> tc; bit<1> s; bit<8> ttl; }"],
      instances: [{ type: "mpls_t", name: "mpls" }],
    },
  ],
  start: "parse_mpls",
  states: acceptState("parse_mpls", "mpls"),
  keys: keysFrom("mpls", FIELDS),
  push: ["hdr.mpls.setValid();", ...fromKeys("mpls", FIELDS)],
  decrement: decrementField("hdr.mpls.ttl"),
};
