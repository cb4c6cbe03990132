// The reference interpreter on its own, as packet-in / packet-out rows over the
// hub-and-spoke fixture: what the differential tests hold the wasm pipeline to
// must itself say what the model says.

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { compile } from "../../src/control/compile.js";
import { resolveEndpoint } from "../../src/control/endpoints.js";
import { parseSpec } from "../../src/description/load.js";
import { DROP_REASONS } from "../../src/wasm/abi.js";
import { ethernetFrame } from "../pipeline/helpers/packets.js";
import { interpret } from "../../src/model/interpreter.js";

const FIXTURE = new URL("../fixtures/specs/hub.yaml", import.meta.url);
const c = compile(parseSpec(readFileSync(FIXTURE, "utf8"), "hub.yaml"));
const mac = (last: number): bigint => 0x020000000000n + BigInt(last);
const BROADCAST = 0xffffffffffffn;
const payload = Uint8Array.of(1, 2, 3, 4);

/** "link h1>hub" for a crossing (sender>receivers), "deliver h2" for a delivery. */
function describeOutput(kind: "link" | "deliver", target: number): string {
  if (kind === "deliver") return `deliver ${c.members[target]?.key ?? "?"}`;
  const l = c.links[target];
  return (
    `link ${c.members[l?.sender ?? -1]?.key ?? "outside"}>` +
    `${(l?.receivers ?? []).map((r) => c.members[r.member]?.key ?? "?").join(",")}`
  );
}

describe("reference interpreter on the hub", () => {
  it.each([
    {
      name: "h1 sends to h2 in session 2: pushed header, hub forwards by dst",
      at: "lan:h1@2",
      packet: payload,
      out: ["link h1>hub", "link hub>h2", "deliver h2"],
      drops: {},
    },
    {
      name: "h1 broadcasts in session 255: hub floods, h2's copy first (depth first)",
      at: "lan:h1@255",
      packet: payload,
      out: ["link h1>hub", "link hub>h2", "deliver h2", "link hub>h3", "deliver h3"],
      drops: {},
    },
    {
      name: "a frame to an unknown MAC: the hub has no forward row",
      at: "lan:h1.1",
      packet: ethernetFrame({ dst: mac(0x99), src: mac(1) }),
      out: ["link h1>hub"],
      drops: { "lan.hub": { "forward-miss": 1 } },
    },
    {
      name: "a frame for h3 delivered to h2's link: h2 does not acquire it",
      at: "lan:hub.2",
      packet: ethernetFrame({ dst: mac(3), src: mac(1) }),
      out: ["link hub>h2"],
      drops: { "lan.h2": { "acquire-miss": 1 } },
    },
    {
      name: "a frame cut inside its header: bad-header where it is acquired",
      at: "lan:h1.1",
      packet: ethernetFrame({ dst: BROADCAST }).subarray(0, 13),
      out: ["link h1>hub"],
      drops: { "lan.hub": { "bad-header": 1 } },
    },
    {
      name: "h1 sends a whole frame itself (in-link self)",
      at: "lan:h1",
      packet: ethernetFrame({ dst: mac(2) }),
      out: ["link h1>hub", "link hub>h2", "deliver h2"],
      drops: {},
    },
  ])("$name", ({ at, packet, out, drops }) => {
    const injections = [resolveEndpoint(c, at)];
    const r = interpret(
      c,
      injections,
      [{ bytes: packet, origLen: packet.length, tsSec: 0, tsNsec: 0, endpoint: 0 }],
      0,
      { hopLimit: 8, copyLimit: 8 },
    );
    expect(r.outputs.map((o) => describeOutput(o.kind, o.target))).toEqual(out);
    const counted = Object.fromEntries(
      [...r.drops].map(([m, counts]) => [
        c.members[m]?.qualified ?? "outside",
        Object.fromEntries(counts.flatMap((n, k) => (n > 0 ? [[DROP_REASONS[k], n]] : []))),
      ]),
    );
    expect(counted).toEqual(drops);
  });

  it("counts send-miss for a session with no send row", () => {
    const h1 = c.members.find((m) => m.qualified === "lan.h1")?.index ?? -1;
    const r = interpret(
      c,
      [{ kind: "session", member: h1, session: 9, link: -1 }],
      [{ bytes: payload, origLen: 4, tsSec: 0, tsNsec: 0, endpoint: 0 }],
      0,
      { hopLimit: 8, copyLimit: 8 },
    );
    expect(r.outputs).toEqual([]);
    expect(r.drops.get(h1)?.[DROP_REASONS.indexOf("send-miss")]).toBe(1);
  });

  it("pushes the session's header in front of the payload, source defaulting to the member's name", () => {
    const r = interpret(
      c,
      [resolveEndpoint(c, "lan:h1@2")],
      [{ bytes: payload, origLen: 60, tsSec: 0, tsNsec: 0, endpoint: 0 }],
      0,
      { hopLimit: 8, copyLimit: 8 },
    );
    const delivered = r.outputs.find((o) => o.kind === "deliver");
    expect(delivered?.bytes).toEqual(ethernetFrame({ dst: mac(2), src: mac(1), type: 0x0800, payload }));
    expect(delivered?.origLen).toBe(60 + 14);
  });
});
