// The cna design in main.p4: strata's native 16-byte header.

import { acceptState, type DesignP4, fromKeys, keysFrom, registered } from "./design.js";

const FIELDS = ["src", "dst", "session", "overlay"];

export const cna: DesignP4 = {
  design: registered("cna"),
  header: [
    {
      types: ["header cna_t { bit<32> src; bit<32> dst; bit<32> session; bit<16> overlay; bit<16> reserved; }"],
      instances: [{ type: "cna_t", name: "cna" }],
    },
  ],
  start: "parse_cna",
  states: acceptState("parse_cna", "cna"),
  keys: keysFrom("cna", FIELDS),
  push: ["hdr.cna.setValid();", ...fromKeys("cna", FIELDS), "hdr.cna.reserved = 0;"],
};
