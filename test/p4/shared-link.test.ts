// Subduction over a shared link: the overlay's shared member sends on the underlay's link out of
// the same port. Whether the link's packets leave as they are (isPhysical) must count that sender
// too: the underlay member's own transmit table may have no row for the link (found by
// bmv2-random, seed -2069247117, where the bmv2 harness took such a packet for one on a port no
// manifest names).

import { describe, expect, it } from "vitest";
import { compile } from "../../src/control/compile.js";
import { parseSpec } from "../../src/description/load.js";
import { isPhysical } from "../../src/p4/device.js";
import { exportP4 } from "../../src/p4/export.js";
import { Wiring } from "../../bench/p4/fleet.js";

/** n0's link m1.1–m4.1 is shared with n1, whose member m1 sends on it; n0.m1 itself transmits on no link. */
const SPEC = `
networks:
  n0:
    header: ipv4
    members:
      m1: { name: 10.0.0.2, machine: x1 }
      m4: { name: 10.0.0.5, machine: x4 }
    links:
      - { from: m1.1, to: m4.1, mode: two-way, shared: n1 }
    tables:
      m1:
        acquire: [ { do: forward } ]
        forward: [ { in: shared, out: 1 } ]
        transmit: []
      m4:
        acquire: [ { do: receive } ]
        receive: [ { do: deliver } ]
  n1:
    header: ipv4
    members:
      m1: { name: 10.0.0.2, machine: x1 }
      a0: { name: 10.0.0.41, machine: y0 }
    links:
      - { from: m1.100, to: a0.100, mode: two-way }
    tables:
      m1:
        acquire: [ { do: forward } ]
        forward: [ { out: 1 } ]
      a0:
        acquire: [ { do: forward } ]
        forward: [ { out: 100 } ]
`;

describe("a shared link that only the overlay's shared member sends on", () => {
  const compiled = compile(parseSpec(SPEC, "shared.yaml"));
  const link = (from: string): number => {
    const l = compiled.links.find(
      (x) => x.qualified === "n0.m1.1-m4.1" && compiled.members[x.sender]?.qualified === from,
    );
    if (l === undefined) throw new Error(`no direction from ${from}`);
    return l.index;
  };
  const cases = [
    { name: "m1 → m4: n0.m1 has no transmit row, n1.m1 sends it physically", from: "n0.m1", physical: true },
    { name: "m4 → m1: n0.m4's own transmit row", from: "n0.m4", physical: true },
  ];
  it.each(cases)("$name", ({ from, physical }) => {
    const l = compiled.links[link(from)];
    expect(l !== undefined && isPhysical(compiled, l)).toBe(physical);
  });

  it("the bmv2 harness takes what x1 sends on the shared link's port for a packet on m1 → m4", () => {
    const exports = exportP4(compiled, SPEC);
    const port = exports.find((e) => e.manifest.machine === "x1")?.manifest.ports.find((p) => p.link === 1);
    expect(port?.alsoSentBy).toEqual(["n1.m1"]);
    expect(new Wiring(compiled, exports).departure("x1", port?.port ?? -1)).toEqual({ link: link("n0.m1") });
  });
});
