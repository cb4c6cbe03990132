// The reference on composed networks (seed §5, Figure 7), as packet-in /
// packet-out rows over the examples: what it holds the wasm pipeline to must
// itself say what the model says — layering pushes the underlay's header after
// the virtual link and pops it into the overlay, subduction hands packets
// between the shared members, bridging links join two networks.

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { compile } from "../../src/control/compile.js";
import type { CompiledSpec } from "../../src/control/compiled.js";
import { resolveEndpoint } from "../../src/control/endpoints.js";
import { parseSpec } from "../../src/description/load.js";
import { DROP_REASONS } from "../../src/wasm/abi.js";
import { interpret, type RefResult } from "../../src/model/interpreter.js";
import { concat } from "../pcap/builders.js";
import { ethernetFrame, hex, ipv4Packet } from "../pipeline/helpers/packets.js";

const example = (name: string): CompiledSpec =>
  compile(
    parseSpec(readFileSync(new URL(`../../examples/${name}/network.yaml`, import.meta.url), "utf8"), `${name}.yaml`),
  );

/** Runs one packet from `at`; what it did, in the order it did it: "link CAPTURE HEX" and "deliver MEMBER HEX", then
 * the drops. */
function run(
  c: CompiledSpec,
  at: string,
  bytes: Uint8Array,
  options = { hopLimit: 16, copyLimit: 8 },
): { out: string[]; drops: Record<string, string>; r: RefResult } {
  const r = interpret(
    c,
    [resolveEndpoint(c, at)],
    [{ bytes, origLen: bytes.length, tsSec: 0, tsNsec: 0, endpoint: 0 }],
    0,
    options,
  );
  const out = r.outputs.map((o) => {
    const target = o.kind === "link" ? (c.links[o.target]?.qualified ?? "?") : (c.members[o.target]?.qualified ?? "?");
    return `${o.kind} ${target} ${hex(o.bytes)}`;
  });
  const drops = Object.fromEntries(
    [...r.drops].flatMap(([m, counts]) =>
      counts.flatMap((n, k) =>
        n > 0 ? [[c.members[m]?.qualified ?? "outside", `${DROP_REASONS[k] ?? "?"} ×${n}`]] : [],
      ),
    ),
  );
  return { out, drops, r };
}

const mac = (s: string): bigint => BigInt(`0x${s.replaceAll(":", "")}`);
const h1 = { ip: 0x0a000101n, lanA: mac("02:00:00:00:0a:01") };
const r = { lanA: mac("02:00:00:00:0a:fe"), lanB: mac("02:00:00:00:0b:fe") };
const h2 = { ip: 0x0a000202n, lanB: mac("02:00:00:00:0b:02") };

describe("layering: the ip-router example (ip over lanA and lanB)", () => {
  const c = example("ip-router");
  const payload = Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8);
  const sent = ipv4Packet({ src: h1.ip, dst: h2.ip, ttl: 64, payload });
  const forwarded = ipv4Packet({ src: h1.ip, dst: h2.ip, ttl: 63, payload }); // r decrements, the checksum follows

  it(
    "h1 sends: its virtual link, lanA's frame, r pops and forwards (TTL − " +
      "1), the virtual link to h2, lanB's frame, h2 pops and delivers",
    () => {
      const { out, drops } = run(c, "ip:h1", sent);
      expect(out).toEqual([
        `link ip.h1.1-r.1 ${hex(sent)}`, // the overlay packet as it crossed the virtual link
        // pushed by lanA.h1's send row 1
        `link lanA.h1.1-r.1 ${hex(ethernetFrame({ dst: r.lanA, src: h1.lanA, type: 0x0800, payload: sent }))}`,
        `link ip.r.2-h2.1 ${hex(forwarded)}`,
        `link lanB.r.1-h2.1 ${hex(ethernetFrame({ dst: h2.lanB, src: r.lanB, type: 0x0800, payload: forwarded }))}`,
        `deliver ip.h2 ${hex(forwarded)}`,
      ]);
      expect(drops).toEqual({});
    },
  );

  it("a frame padded to Ethernet's minimum: the pop keeps only what the IPv4 header states", () => {
    const short = ipv4Packet({ src: h1.ip, dst: h2.ip, ttl: 9, payload: Uint8Array.of(7) }); // 21 bytes
    const frame = concat(
      ethernetFrame({ dst: r.lanA, src: h1.lanA, payload: short }),
      new Uint8Array(60 - 14 - short.length),
    );
    const { out, r: result } = run(c, "lanA:h1.1", frame);
    const decremented = ipv4Packet({ src: h1.ip, dst: h2.ip, ttl: 8, payload: Uint8Array.of(7) });
    expect(out.at(-1)).toBe(`deliver ip.h2 ${hex(decremented)}`);
    expect(result.outputs.at(-1)?.origLen).toBe(21);
  });

  it("a frame r's lanA member does not receive for ip (another ethertype): receive-miss, nothing reaches ip", () => {
    const { out, drops } = run(
      c,
      "lanA:h1.1",
      ethernetFrame({ dst: r.lanA, src: h1.lanA, type: 0x86dd, payload: sent }),
    );
    expect(out).toHaveLength(1);
    expect(drops).toEqual({ "lanA.r": "receive-miss ×1" });
  });

  it("the virtual link is a hop: with hop limit 1, the underlay frame is a loop at the underlay member", () => {
    const { out, drops } = run(c, "ip:h1", sent, { hopLimit: 1, copyLimit: 8 });
    expect(out).toEqual([`link ip.h1.1-r.1 ${hex(sent)}`]);
    expect(drops).toEqual({ "lanA.h1": "loop ×1" });
  });

  it("with hop limit 0, the overlay member that transmits on the virtual link drops it as a loop", () => {
    expect(run(c, "ip:h1", sent, { hopLimit: 0, copyLimit: 8 }).drops).toEqual({ "ip.h1": "loop ×1" });
  });
});

describe("subduction: the subduction example (tenant's gw shares core's link to mb)", () => {
  const c = example("subduction");
  const t1 = mac("02:00:00:00:01:01");
  const hostH2 = mac("02:00:00:00:02:02");

  it(
    "t1 → h2: tenant.gw hands it to core.gw (out: shared), which forwards " +
      "it (in: shared) through the middlebox to h2",
    () => {
      const frame = ethernetFrame({ dst: hostH2, src: t1 });
      const { out, drops } = run(c, "tenant:t1.1", frame);
      expect(out.map((o) => o.split(" ").slice(0, 2).join(" "))).toEqual([
        "link tenant.t1.1-gw.1",
        "link core.to-mb",
        "link core.to-mb",
        "link core.gw.3-h2.1",
        "deliver core.h2",
      ]);
      expect(out.every((o) => o.endsWith(hex(frame)))).toBe(true); // one header for both networks, unchanged
      expect(drops).toEqual({});
    },
  );

  it(
    "h2 → t1: back from the middlebox on the shared link, core.gw hands it " + "to tenant.gw's acquire (do: shared)",
    () => {
      const { out } = run(c, "core:h2.1", ethernetFrame({ dst: t1, src: hostH2 }));
      expect(out.map((o) => o.split(" ").slice(0, 2).join(" "))).toEqual([
        "link core.gw.3-h2.1",
        "link core.to-mb",
        "link core.to-mb",
        "link tenant.t1.1-gw.1",
        "deliver tenant.t1",
      ]);
    },
  );
});

describe("bridging: the bridged-lans example", () => {
  const c = example("bridged-lans");

  it("h1 → h3 crosses the trunk, a link of lanA whose far end is lanB's sw2", () => {
    const frame = ethernetFrame({ dst: mac("02:00:00:00:00:03"), src: mac("02:00:00:00:00:01") });
    expect(run(c, "lanA:h1.1", frame).out.map((o) => o.split(" ").slice(0, 2).join(" "))).toEqual([
      "link lanA.h1.1-sw1.1",
      "link lanA.trunk",
      "link lanB.h3.1-sw2.1",
      "deliver lanB.h3",
    ]);
  });

  it("h4's broadcast floods both networks, the trunk's reverse direction included", () => {
    const frame = ethernetFrame({ dst: 0xffffffffffffn, src: mac("02:00:00:00:00:04") });
    expect(
      run(c, "lanB:h4.1", frame)
        .out.filter((o) => o.startsWith("deliver"))
        .map((o) => o.split(" ")[1]),
    ).toEqual(["lanB.h3", "lanA.h1", "lanA.h2"]);
  });
});
