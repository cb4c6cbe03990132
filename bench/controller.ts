// The controller round trip in process (issue 31, Speed): the MAC-learning example's controller
// (examples/mac-learning) on an Emulation, a frame from a source the switch has not seen handed
// up as a packet-in, the controller's rows for it checked and written, then the reply to it
// forwarded by the data plane with no packet-in. Each round trip timed in CPU time of this
// process (the machine is shared) from the packet-in to the reply's outcome; wall time beside
// it. The machine is named by a figure of its own: its CPU and the load average.

import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { macLearning } from "../examples/mac-learning/mac-learning.js";
import { Emulation } from "../src/api/emulation.js";
import type { Figure, FigureScenario } from "./scenario.js";
import { median, quantile } from "./stats.js";

const SPEC = new URL("../../examples/mac-learning/network.yaml", import.meta.url).pathname;
const SW = "lan:sw";
/** Round trips timed, after WARM untimed. */
const RUNS = 500;
const WARM = 50;

/** An Ethernet frame to `dst` from `src` (each "02:…" as six bytes), type 0x88b5, 60 bytes. */
function frame(dst: readonly number[], src: readonly number[]): Uint8Array {
  const f = new Uint8Array(60);
  f.set(dst, 0);
  f.set(src, 6);
  f[12] = 0x88;
  f[13] = 0xb5;
  return f;
}

/** The i-th new source: 02:00:00:01:hi:lo, behind h1's port. */
const source = (i: number): number[] => [2, 0, 0, 1, (i >> 8) & 0xff, i & 0xff];
const H2 = [2, 0, 0, 0, 0, 2];
const UNKNOWN = [2, 0, 0, 0, 0, 0xee];

async function figures(): Promise<Figure[]> {
  const em = Emulation.load(SPEC, { packetIns: [SW] });
  // Told before the controller is: the clock starts as the packet-in comes up, before any row is written.
  let cpu0 = process.cpuUsage();
  let wall0 = performance.now();
  em.onPacketIn(() => {
    cpu0 = process.cpuUsage();
    wall0 = performance.now();
  });
  const ctl = macLearning(em, SW);
  const cpu: number[] = [];
  const wall: number[] = [];
  try {
    for (let i = 0; i < WARM + RUNS; i++) {
      await em.inject("lan:h1.1", frame(UNKNOWN, source(i)));
      await ctl.settled();
      const next = await em.inject("lan:h2.1", frame(source(i), H2));
      const c = process.cpuUsage(cpu0);
      const w = performance.now() - wall0;
      // Forwarded out of port 1 (to h1, whose address it is not: dropped there), never handed up.
      if (next.delivered.length > 0 || next.dropped[0]?.member !== "lan:h1")
        throw new Error(`round trip ${i}: the reply was not forwarded out of port 1`);
      if (i < WARM) continue;
      cpu.push((c.user + c.system) / 1000);
      wall.push(w);
    }
    if (ctl.packetIns !== WARM + RUNS) throw new Error(`${ctl.packetIns} packet-ins for ${WARM + RUNS} new sources`);
  } finally {
    ctl.stop();
    await em.close();
  }
  const model = /model name\s*:\s*(.*)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? "unknown CPU";
  return [
    {
      name: "packet-in → rows written → next frame forwarded in wasm: median (CPU)",
      value: median(cpu),
      unit: "ms",
      goal: { value: 1, better: "lower" },
    },
    { name: "the same, p99 (CPU)", value: quantile(cpu, 0.99), unit: "ms" },
    { name: "the same, median wall clock", value: median(wall), unit: "ms" },
    { name: "the same, p99 wall clock", value: quantile(wall, 0.99), unit: "ms" },
    { name: `load average (1 min) on ${model}, ${RUNS} round trips`, value: loadavg()[0] ?? NaN, unit: "" },
  ];
}

export const controllerRoundTrip: FigureScenario = {
  name: "controller-round-trip",
  description:
    "the MAC-learning controller in process: a new source handed up, its rows written, the reply forwarded in wasm",
  figures,
};
