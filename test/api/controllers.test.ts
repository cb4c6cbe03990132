// The MAC-learning controller (examples/mac-learning/mac-learning.ts) runs the same on both Devices: an Emulation in
// process and a P4RuntimeDevice on strata's own P4Runtime server. Frames go in at the hosts; the switch hands up what
// it has no row for, the controller writes the rows, and the next frames to a learned host are forwarded by the data
// plane with no packet-in. The in-process round trip (packet-in → rows written → next frame forwarded in wasm) is
// measured in CPU time and printed, never budgeted.

import { afterEach, describe, expect, test } from "vitest";
import { macLearning } from "../../examples/mac-learning/mac-learning.js";
import { type Device, Emulation, P4RuntimeDevice, type PacketIn } from "../../src/index.js";
import { until } from "../helpers/wait.js";
import { frame, mac, MAC_STEPS } from "./controller-cases.js";
import { serve } from "./p4runtime-server.js";

const SWITCH = "examples/mac-learning/network.yaml";
const SW = "lan:sw";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

const devices: { name: string; open: () => Promise<Device> }[] = [
  { name: "an Emulation", open: async () => Emulation.load(SWITCH) },
  {
    name: "a P4RuntimeDevice on strata p4runtime",
    open: async () => {
      const server = await serve(SWITCH);
      closers.push(() => server.close());
      return P4RuntimeDevice.connect(SWITCH, { address: server.address });
    },
  },
];

describe.each(devices)("the MAC-learning controller on $name", ({ open }) => {
  test("learns from packet-ins; the next frames are forwarded with none", async () => {
    const device = await open();
    closers.push(() => device.close());
    const ctl = macLearning(device, SW);
    const reached: string[] = [];
    device.onPacketIn((p: PacketIn) => {
      if (p.member !== SW) reached.push(p.member);
    });
    for (const [i, step] of MAC_STEPS.entries()) {
      const [host, dst] = step.send;
      reached.length = 0;
      await device.packetOut({ at: `lan:h${host}`, data: frame(dst, mac(host)) });
      await until(
        () => reached.length >= step.reached.length && ctl.packetIns >= step.switchPacketIns,
        () => `step ${i}: reached ${reached.join(", ")}, ${ctl.packetIns} packet-ins`,
      );
      await ctl.settled();
      expect({ step: i, packetIns: ctl.packetIns, reached: [...reached].sort() }).toEqual({
        step: i,
        packetIns: step.switchPacketIns,
        reached: step.reached,
      });
    }
    expect([...ctl.learned]).toEqual([
      [mac(1), 1],
      [mac(2), 2],
    ]);
    const forward = (await device.read(SW, "forward")).filter((e) => e.by === "api");
    expect(forward.map((e) => [e.text, e.hits]).sort()).toEqual([
      [`dst ${mac(1)} → out 1`, 2],
      [`dst ${mac(2)} → out 2`, 1],
    ]);
    const acquire = (await device.read(SW, "acquire")).filter((e) => e.by === "api");
    expect(acquire.map((e) => e.text).sort()).toEqual([`dst ${mac(1)} → forward`, `dst ${mac(2)} → forward`]);
    ctl.stop();
  });
});

test("the round trip in process: packet-in → rows written → the next frame forwarded in wasm", async () => {
  const em = Emulation.load(SWITCH, { packetIns: [SW] });
  closers.push(() => em.close());
  // Told before the controller is: the clock starts as the packet-in comes up, before any row is written.
  let start = process.cpuUsage();
  em.onPacketIn(() => {
    start = process.cpuUsage();
  });
  const ctl = macLearning(em, SW);
  const cpu: number[] = [];
  const runs = 200;
  for (let i = 0; i < runs; i++) {
    // A new source each time (behind h1's port): its frame is handed up, and the reply to it must not be.
    const src = `02:00:00:01:${(i >> 8).toString(16).padStart(2, "0")}:${(i & 0xff).toString(16).padStart(2, "0")}`;
    await em.inject("lan:h1.1", frame(mac(0xee), src));
    await ctl.settled();
    const next = await em.inject("lan:h2.1", frame(src, mac(2)));
    const used = process.cpuUsage(start);
    cpu.push((used.user + used.system) / 1000);
    // Forwarded out of port 1 to h1, which is not the frame's host: dropped there, and no packet-in.
    expect(next.dropped).toEqual([{ member: "lan:h1", reason: "acquire-miss", count: 1 }]);
  }
  expect(ctl.packetIns).toBe(runs);
  cpu.sort((a, b) => a - b);
  const median = cpu[runs >> 1] ?? 0;
  console.log(
    `controller round trip in process, ${runs} runs: median ${median.toFixed(3)} ms of CPU, ` +
      `p90 ${(cpu[Math.floor(runs * 0.9)] ?? 0).toFixed(3)} ms`,
  );
  expect(ctl.learned.size).toBe(runs);
});
