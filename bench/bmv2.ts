// strata beside bmv2 on the same program, entries and packets: `strata run` (end to end: a
// capture in, link captures out, one thread) and the export's simple_switches (bench/p4/fleet.ts:
// one per machine, chained along the links between machines; logging compiled out of this build)
// each take the same 200,000 64-byte frames. The switches are fed through their packet sockets
// with at most WINDOW packets in flight (simple_switch drops what its input queue cannot hold,
// and the point is its speed without loss), and timed from the first packet in to the last one
// out. Run only where the P4 toolchain is (bench/p4/toolchain.ts). `bmv2-cpu` compares the two by
// CPU rather than the wall clock, which a busy machine and the feeding (a Node process, nanomsg) blur:
// strata run's process CPU per packet against the simple_switch processes' own (all their threads).

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compile } from "../src/control/compile.js";
import type { CompiledSpec } from "../src/control/compiled.js";
import { resolveEndpoint } from "../src/control/endpoints.js";
import { loadSpec } from "../src/description/load.js";
import { fixIpv4Checksum } from "../src/model/headers.js";
import { exportP4, type MachineExport } from "../src/p4/export.js";
import { PcapWriter } from "../src/pcap/index.js";
import { Replay } from "../src/run/replay.js";
import { Fleet } from "./p4/fleet.js";
import { findP4Tools, type P4Tools } from "./p4/toolchain.js";
import type { Figure, FigureScenario, Scenario } from "./scenario.js";
import { median } from "./stats.js";

const PACKETS = 200_000;
const FRAME_LEN = 64;
/** Packets in the switches at once: well under simple_switch's input queue (1,024). */
const WINDOW = 64;
/** A run with no packet out for this long has lost one. */
const STALL_MS = 5_000;

const root = new URL("..", import.meta.url).pathname.replace(/\/dist\/$/, "/");

interface Workload {
  readonly name: string;
  readonly description: string;
  /** The example, from the repository's root. */
  readonly spec: string;
  /** Where the frames go in, as `strata run --in` names it. */
  readonly endpoint: string;
  /** Frame i (64 bytes). */
  frame(i: number): Uint8Array;
  /** What becomes of every frame: it leaves the network, or is delivered. */
  readonly fate: "exited" | "delivered";
}

const bytesOf = (hex: string): number[] => hex.match(/../g)?.map((b) => Number.parseInt(b, 16)) ?? [];

/** An Ethernet frame of FRAME_LEN bytes: dst, src, type 0x0800, an IPv4 header (UDP) to `ipDst` from `ipSrc`, zeros
 * after. */
function ipv4Frame(dst: string, src: string, ipSrc: number, ipDst: number): Uint8Array {
  const f = new Uint8Array(FRAME_LEN);
  f.set(bytesOf(dst), 0);
  f.set(bytesOf(src), 6);
  f.set([0x08, 0x00], 12);
  const ip = f.subarray(14);
  const total = FRAME_LEN - 14;
  ip.set([0x45, 0, total >> 8, total & 0xff, 0, 0, 0, 0, 64, 17, 0, 0]);
  new DataView(ip.buffer, ip.byteOffset).setUint32(12, ipSrc);
  new DataView(ip.buffer, ip.byteOffset).setUint32(16, ipDst);
  ip.set([0x30, 0x39, 0x00, 0x35, 0, total - 20, 0, 0], 20);
  fixIpv4Checksum(ip);
  return f;
}

const WORKLOADS: readonly Workload[] = [
  {
    name: "live-router",
    description:
      "examples/live-router's r (ip-router's r on its own): frames from hostA " +
      "to 256 hosts behind lanB — pop Ethernet, LPM, TTL − 1, push Ethernet " +
      "(bmv2: three passes)",
    spec: "examples/live-router/network.yaml",
    endpoint: "lanA:hostA",
    frame: (i) => ipv4Frame("020000000afe", "020000000a01", 0x0a000101, 0x0a000200 | (i & 0xff)),
    fate: "exited",
  },
  {
    name: "vxlan",
    description:
      "examples/vxlan: frames vm3 sends to vm5 — VTEP a pushes VXLAN and " +
      "Ethernet, the switch forwards, VTEP b pops both and delivers (bmv2: " +
      "three switches)",
    spec: "examples/vxlan/network.yaml",
    endpoint: "tenant:vm3",
    frame: (i) => ipv4Frame("003088010002", "00163e37f604", 0x0a000001, 0x0a000002 + (i & 0xff)),
    fate: "delivered",
  },
];

function writeCapture(path: string, w: Workload): void {
  const out = new PcapWriter(path, { linkType: 1, snapLen: 65535 });
  for (let i = 0; i < PACKETS; i++) out.write(w.frame(i), 0, FRAME_LEN, FRAME_LEN, 1_700_000_000, i);
  out.close();
}

/** The workload on `strata run`, end to end on one thread; its twin on bmv2 in `bmv2`. */
function strataScenario(w: Workload): Scenario {
  let dir = "";
  let prepared: Replay | undefined;
  return {
    name: `${w.name}-vs-bmv2`,
    description:
      `${w.description}: ${PACKETS.toLocaleString("en")} ${FRAME_LEN}-byte frames through strata run, ` +
      `and through simple_switch`,
    packets: PACKETS,
    unavailable: () => {
      const tools = findP4Tools();
      return "missing" in tools ? tools.missing : undefined;
    },
    setup() {
      dir = mkdtempSync(join(tmpdir(), "strata-bench-bmv2-"));
      const capture = join(dir, "frames.pcap");
      writeCapture(capture, w);
      prepared = Replay.prepare({
        spec: join(root, w.spec),
        inputs: [{ endpoint: w.endpoint, file: capture }],
        out: join(dir, "run"),
        workers: 1,
      });
    },
    run() {
      const r = prepared?.run();
      const done = w.fate === "exited" ? r?.summary.packets.exited : r?.summary.packets.delivered;
      if (done !== PACKETS) throw new Error(`${w.name}: ${done} of ${PACKETS} packets ${w.fate}`);
    },
    teardown() {
      prepared?.close();
      rmSync(dir, { recursive: true, force: true });
    },
    bmv2: bmv2Scenario(w),
  };
}

/** Milliseconds of CPU (user + system, every thread) process `pid` has used; 10 ms ticks. */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** The same workload on the export's simple_switches; `cpu` hears the switches' CPU (ms) of each timed run. */
function bmv2Scenario(w: Workload, cpu?: (ms: number) => void): Scenario {
  let fleet: Fleet | undefined;
  let compiled: CompiledSpec | undefined;
  return {
    name: `${w.name}-bmv2`,
    description: `${w.description} on simple_switch`,
    packets: PACKETS,
    setup: async () => {
      const tools: P4Tools | { missing: string } = findP4Tools();
      if ("missing" in tools) throw new Error(tools.missing);
      compiled = compile(loadSpec(join(root, w.spec)));
      const exports: MachineExport[] = exportP4(compiled, w.spec);
      fleet = await Fleet.start(tools, compiled, exports);
      if (fleet.cliErrors.length > 0) throw new Error(`simple_switch_CLI: ${fleet.cliErrors.join("; ")}`);
    },
    run() {
      throw new Error("timed by timedRun");
    },
    async timedRun() {
      if (fleet === undefined || compiled === undefined) throw new Error("not set up");
      const f = fleet;
      const injection = resolveEndpoint(compiled, w.endpoint);
      let sent = 0;
      let done = 0;
      let wrong = "";
      const cpu0 = f.pids.map(processCpuMs);
      const started = process.hrtime.bigint();
      await new Promise<void>((resolve, reject) => {
        // A packet lost (none should be: the window keeps the queues short) would stall the run.
        let seen = 0;
        const stall = setInterval(() => {
          if (done === seen) {
            clearInterval(stall);
            reject(
              new Error(
                `${w.name} on bmv2: ${PACKETS - done} of ${PACKETS} packets not out after ${STALL_MS} ms without one`,
              ),
            );
          }
          seen = done;
        }, STALL_MS);
        const feed = (): void => {
          while (sent < PACKETS && sent - done < WINDOW) f.inject({ injection, bytes: w.frame(sent++) });
        };
        f.departures = (d) => {
          const last =
            w.fate === "delivered"
              ? d.kind === "delivered"
              : d.kind === "link" && compiled?.links[d.link]?.receivers.length === 0;
          if (d.kind === "unexpected") wrong = d.what;
          if (!last) return;
          done++;
          if (done === PACKETS) {
            clearInterval(stall);
            resolve();
          } else feed();
        };
        feed();
      });
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      cpu?.(f.pids.reduce((ms, pid, k) => ms + processCpuMs(pid) - (cpu0[k] ?? 0), 0));
      if (wrong !== "") throw new Error(`${w.name} on bmv2: ${wrong}`);
      return seconds;
    },
    async teardown() {
      await fleet?.stop();
    },
  };
}

export const BMV2_SCENARIOS: readonly Scenario[] = WORKLOADS.map(strataScenario);

/** Timed runs of each side in bmv2-cpu (the median is reported), after one untimed. */
const CPU_RUNS = 3;

/** Each workload's strata run and simple_switches by CPU per packet: the median of CPU_RUNS runs each. */
async function cpuFigures(): Promise<Figure[]> {
  const tools = findP4Tools();
  if ("missing" in tools) {
    process.stderr.write(`bench: bmv2-cpu: left out: ${tools.missing}\n`);
    return [];
  }
  const figures: Figure[] = [];
  for (const w of WORKLOADS) {
    const strata = strataScenario(w);
    const ns: number[] = [];
    await strata.setup?.();
    try {
      for (let run = 0; run <= CPU_RUNS; run++) {
        const before = process.cpuUsage();
        await strata.run();
        const used = process.cpuUsage(before);
        if (run > 0) ns.push(((used.user + used.system) * 1000) / PACKETS);
      }
    } finally {
      await strata.teardown?.();
    }
    const switchNs: number[] = [];
    const bmv2 = bmv2Scenario(w, (ms) => switchNs.push((ms * 1e6) / PACKETS));
    await bmv2.setup?.();
    try {
      for (let run = 0; run < CPU_RUNS; run++) await bmv2.timedRun?.();
    } finally {
      await bmv2.teardown?.();
    }
    const mine = median(ns);
    const theirs = median(switchNs);
    figures.push(
      { name: `${w.name}: strata run, process CPU`, value: mine, unit: "ns/packet" },
      { name: `${w.name}: simple_switch processes' CPU`, value: theirs, unit: "ns/packet" },
      {
        name: `${w.name}: strata ÷ bmv2, packets per CPU second`,
        value: theirs / mine,
        unit: "×",
        goal: { value: 1000, better: "higher" },
      },
    );
  }
  return figures;
}

export const BMV2_CPU: FigureScenario = {
  name: "bmv2-cpu",
  description:
    "live-router and vxlan: strata run (end to end, one thread) against the export's simple_switches " +
    "(logging compiled out) on the same 200,000 frames, by CPU per packet (the switches' processes, every thread)",
  figures: cpuFigures,
};
