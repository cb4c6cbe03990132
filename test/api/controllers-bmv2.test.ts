// The two example controllers on p4lang's simple_switch_grpc (bmv2 with P4Runtime): one switch per machine, as
// strata deploy places a description (test/deploy/bmv2.test.ts), each started with port 255 as its P4Runtime CPU port,
// so a delivery is a packet-in on the controller's stream; the switches chained along the links between machines as
// the bmv2 tests chain them (bench/p4/fleet.ts), frames sent in on a link, through the switch's port. The controllers
// are the same code as on an Emulation (controllers.test.ts, routing-controller.test.ts), through a P4RuntimeDevice
// with each machine's own server. Skipped where the P4 toolchain is missing, unless STRATA_REQUIRE_P4=1.

import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { Fleet } from "../../bench/p4/fleet.js";
import { macLearning } from "../../examples/mac-learning/mac-learning.js";
import { routing } from "../../examples/routing-controller/routing.js";
import { compile } from "../../src/control/compile.js";
import { resolveEndpoint } from "../../src/control/endpoints.js";
import { loadSpec } from "../../src/description/load.js";
import { P4RuntimeDevice, type PacketIn, readDescription, type RowWrite } from "../../src/index.js";
import { exportP4 } from "../../src/p4/export.js";
import { deploy } from "../deploy/helpers.js";
import { desiredState } from "../../src/deploy/desired.js";
import { type CachedToolchain, cachedToolchain, withToolchain } from "../p4/helpers/cached-p4c.js";
import { findP4Tools, P4_REQUIRED } from "../p4/helpers/toolchain.js";
import { HANG_MS, until } from "../helpers/wait.js";
import { frame, mac, MAC_STEPS, packet, PAIRS, R1_R2, told, TTL } from "./controller-cases.js";

const tools = findP4Tools();
const skip = !P4_REQUIRED && "missing" in tools;
const why = "missing" in tools ? ` (skipped: ${tools.missing})` : "";

// deploy's p4c-bm2-ss answers from the tests' p4c cache (test/p4/helpers/cached-p4c.ts): 12 programs, ~10 s of CPU
// a run. deploy/bmv2.test.ts has deploy compile one example's programs itself.
let p4c: CachedToolchain | undefined;
beforeAll(() => {
  if (!("missing" in tools)) p4c = cachedToolchain(tools);
});
afterAll(() => p4c?.close());

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

/** The description's machines on switches of their own, deployed, and a P4RuntimeDevice on them. */
async function onBmv2(file: string): Promise<{ fleet: Fleet; device: P4RuntimeDevice }> {
  if ("missing" in tools || p4c === undefined) throw new Error("missing" in tools ? tools.missing : "no p4c");
  const compiled = compile(loadSpec(file));
  const toolchain = p4c;
  await toolchain.add(desiredState(compiled, file).map((d) => d.program));
  const fleet = await Fleet.startGrpc(tools, compiled, exportP4(compiled, file), true);
  closers.push(() => fleet.stop());
  const targets = [...fleet.addresses].flatMap(([machine, address]) => ["--target", `${machine}=${address}`]);
  const deployed = await withToolchain(toolchain.root, () =>
    deploy([file, ...targets, "--timeout", String(HANG_MS / 1000)]),
  );
  expect({ code: deployed.code, err: deployed.err }).toEqual({ code: 0, err: "" });
  // Above deploy's election id (1): a device may not yet have seen deploy's stream end.
  const device = await P4RuntimeDevice.connect(file, {
    machines: Object.fromEntries(fleet.addresses),
    electionId: 2n,
    timeoutMs: HANG_MS,
  });
  closers.push(() => device.close());
  return { fleet, device };
}

describe.skipIf(skip)(`the example controllers on simple_switch_grpc${why}`, () => {
  test("MAC learning: learns from packet-ins; the next frames are forwarded by the switch with none", async () => {
    const file = "examples/mac-learning/network.yaml";
    const { fleet, device } = await onBmv2(file);
    const ctl = macLearning(device, "lan:sw");
    const reached: string[] = [];
    device.onPacketIn((p: PacketIn) => {
      if (p.member !== "lan:sw") reached.push(p.member);
    });
    const crossed: string[] = []; // the links a frame crossed: in to sw, and out of it
    fleet.departures = (d) => {
      if (d.kind === "link") crossed.push(fleet.linkName(d.link));
    };
    for (const [i, step] of MAC_STEPS.entries()) {
      const [host, dst] = step.send;
      reached.length = 0;
      crossed.length = 0;
      const at = resolveEndpoint(device.compiled, `lan:h${host}.1`);
      fleet.inject({ injection: at, bytes: frame(dst, mac(host)) });
      await until(
        () => reached.length >= step.reached.length && ctl.packetIns >= step.switchPacketIns,
        () => `step ${i}: reached ${reached.join(", ")}, ${ctl.packetIns} packet-ins`,
      );
      await ctl.settled();
      expect({ step: i, packetIns: ctl.packetIns, reached: [...reached].sort(), crossed: crossed.sort() }).toEqual({
        step: i,
        packetIns: step.switchPacketIns,
        reached: step.reached,
        // Forwarded (a known host): out of its one port; flooded: out of every other port.
        crossed: [host, ...step.out].map((n) => `lan.h${n}.1-sw.${n}`).sort(),
      });
    }
    expect([...ctl.learned]).toEqual([
      [mac(1), 1],
      [mac(2), 2],
    ]);
    const forward = (await device.read("lan:sw", "forward")).filter((e) => e.by === "api");
    expect(forward.map((e) => [e.text, e.hits]).sort()).toEqual([
      [`dst ${mac(1)} → out 1`, 2],
      [`dst ${mac(2)} → out 2`, 1],
    ]);
    const acquire = (await device.read("lan:sw", "acquire")).filter((e) => e.by === "api");
    expect(acquire.map((e) => e.text).sort()).toEqual([`dst ${mac(1)} → forward`, `dst ${mac(2)} → forward`]);
    ctl.stop();
  });

  test("routing: every route written; a link fails, only the routes it moved rewritten, packets go round", async () => {
    const file = "examples/routing-controller/network.yaml";
    const { fleet, device } = await onBmv2(file);
    const links = told();
    const ctl = await routing(device, readDescription(file), "ip", links);
    /** Routers crossed from host to host (the TTL spent), each packet sent by its host, in through port 255. */
    const hops = async (): Promise<Record<string, number>> => {
      const out: Record<string, number> = {};
      for (const { from, to } of PAIRS) {
        const got: PacketIn[] = [];
        const off = device.onPacketIn((p) => {
          if (p.member === `ip:h${to}`) got.push(p);
        });
        fleet.inject({ injection: resolveEndpoint(device.compiled, `ip:h${from}`), bytes: packet(from, to) });
        await until(
          () => got.length > 0,
          () => `h${from} → h${to}: not delivered`,
        );
        off();
        out[`h${from} → h${to}`] = TTL - (got[0]?.data[8] ?? TTL);
      }
      return out;
    };
    const want = (which: "before" | "after") =>
      Object.fromEntries(PAIRS.map((p) => [`h${p.from} → h${p.to}`, p[which]]));
    expect(await hops()).toEqual(want("before"));

    // The link really down between the switches (nothing relayed on it), and the controller told.
    for (const l of device.compiled.links) if (l.qualified === R1_R2) fleet.down.add(l.index);
    links.tell({ links: [R1_R2], up: false });
    await ctl.settled();
    expect(ctl.written).toEqual([
      { inserted: 24, modified: 0, deleted: 0 },
      { inserted: 0, modified: 8, deleted: 0 },
    ]);
    expect(await hops()).toEqual(want("after"));

    // simple_switch_grpc has no ROLLBACK_ON_ERROR: a batch is written update by update, and what was applied undone.
    const forward = (dst: string, out: number): RowWrite => ({
      op: "insert",
      member: "ip:r1",
      table: "forward",
      row: { match: { dst }, out },
    });
    const rows = async () => (await device.read("ip:r1", "forward")).map((e) => e.text).sort();
    const held = await rows();
    // A new route (applied by the switch, then undone), and r2's again (the switch refuses it: it has one).
    await expect(device.write([forward("10.9.9.9/32", 1), forward("10.0.0.2/32", 2)])).rejects.toMatchObject({
      code: "DuplicateEntry",
      index: 1,
      problem: expect.stringMatching(/^device 1 refused it: /) as unknown,
    });
    expect(await rows()).toEqual(held);
  });
});
