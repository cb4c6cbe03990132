// strata run end to end, against the data plane alone and across threads, in CPU time (process
// and per thread, from /proc/self/task's schedstat: Linux), which a busy machine disturbs less than
// the wall clock: 1,000,000-frame captures of the l2-exact, router-layered and vxlan scenarios' packets,
// replayed from a file to per-link pcap files, on one data plane and on two (this thread and a
// worker thread). Each run writes into a fresh --out (the last run's files are removed untimed). The figures:
// - replay ÷ data plane: a replay's CPU per packet over the data plane scenario's (the same
//   packets already in linear memory), the process's and the main thread's (the critical path when
//   the recordings' writes run beside it, in the file writer's thread, on a core of their own); goal ≤ 1.3;
// - replay ÷ pcap-read: the replay's packets per CPU second over the capture reader's alone
//   (openCapture's batches, the same file), goal ≥ 0.5;
// - speedup on two cores: the one-thread replay's CPU over what two idle cores need for the
//   two-way replay (its busiest thread, or half the process's CPU if more: the file writer's is a
//   third thread), goal ≥ 1.7, and the serial fraction it implies (Amdahl: s = 2/speedup − 1); the
//   wall-clock speedup beside it, which only a quiet machine shows.

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openCapture, PcapWriter } from "../src/pcap/index.js";
import { Replay } from "../src/run/replay.js";
import { BUILDS, type Built, runStaged } from "./dataplane.js";
import { l2ExactSpec, routerSpec, vxlanSpec } from "./descriptions.js";
import type { Figure, FigureScenario } from "./scenario.js";
import { scratchDir } from "./scratch.js";
import { median } from "./stats.js";

const PACKETS = 1_000_000;
/** Timed runs of each replay (the median is reported), after one untimed. */
const RUNS = 5;

const PIPELINES = [
  { name: "l2-exact", spec: l2ExactSpec, endpoint: "lan:feed" },
  { name: "router-layered", spec: routerSpec, endpoint: "lanA:feed" },
  { name: "vxlan", spec: vxlanSpec, endpoint: "tenant:vm3" },
] as const;

type PipelineName = (typeof PIPELINES)[number]["name"];

/**
 * Milliseconds of CPU each thread of this process has used, by thread id: schedstat's time on the CPU (nanoseconds,
 * brought up to date at each switch and scheduler tick: a running thread's lags by a tick at most), or where the
 * kernel keeps no schedstat, stat's utime + stime (10 ms ticks: ±10 ns a packet over 1 M packets).
 */
function threadCpu(): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      out.set(Number(tid), Number(readFileSync(`/proc/self/task/${tid}/schedstat`, "utf8").split(" ")[0]) / 1e6);
    } catch {
      try {
        const fields = readFileSync(`/proc/self/task/${tid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
        out.set(Number(tid), (Number(fields[11]) + Number(fields[12])) * 10);
      } catch {
        // the thread ended meanwhile
      }
    }
  }
  return out;
}

/** A 1 M-frame capture of the scenario's packets, written once per process. */
function capture(built: Built, name: PipelineName): string {
  const path = join(scratchDir(), `replay-${name}-${PACKETS}.pcap`);
  const w = new PcapWriter(path, { linkType: 1, snapLen: 65535 });
  for (let i = 0; i < PACKETS;) {
    for (const b of built.batches) {
      for (let k = 0; k < b.count && i < PACKETS; k++, i++) {
        const sec = 1_700_000_000 + Math.floor(i / 1e6);
        w.write(b.data, b.offset[k] ?? 0, b.capLen[k] ?? 0, b.origLen[k] ?? 0, sec, (i % 1e6) * 1000);
      }
    }
  }
  w.close();
  return path;
}

/** CPU per packet (ns) of the data plane scenario: its staged batches, cycled to PACKETS. */
function dataPlaneNs(built: Built): number {
  const { loaded, batches } = built;
  const samples: number[] = [];
  for (let run = 0; run <= RUNS; run++) {
    const before = process.cpuUsage();
    for (let done = 0, k = 0; done < PACKETS; k++) {
      const b = batches[k % batches.length];
      if (b === undefined) break;
      runStaged(loaded, loaded.runner.stage(b), done);
      done += b.count;
    }
    const used = process.cpuUsage(before);
    if (run > 0) samples.push(((used.user + used.system) * 1000) / PACKETS);
  }
  return median(samples);
}

/** CPU per packet (ns) of reading `file` alone, in the capture reader's batches (as pcap-read). */
function readNs(file: string): number {
  const samples: number[] = [];
  for (let run = 0; run <= RUNS; run++) {
    const before = process.cpuUsage();
    const reader = openCapture(file);
    let packets = 0;
    for (const b of reader.batches()) packets += b.count;
    reader.close();
    const used = process.cpuUsage(before);
    if (packets !== PACKETS) throw new Error(`read ${packets} packets`);
    if (run > 0) samples.push(((used.user + used.system) * 1000) / PACKETS);
  }
  return median(samples);
}

interface Replayed {
  /** CPU per packet (ns): the whole process, this thread, the busiest other thread. */
  readonly process: number;
  readonly main: number;
  readonly other: number;
  readonly wall: number;
}

/** Replays `file` on `workers` data planes: the medians of RUNS runs, per packet. */
function replayed(pipeline: (typeof PIPELINES)[number], file: string, workers: number): Replayed {
  const out = mkdtempSync(join(tmpdir(), "strata-bench-replay-"));
  try {
    const spec = join(out, "spec.yaml");
    writeFileSync(spec, pipeline.spec());
    const inputs = [{ endpoint: pipeline.endpoint, file }];
    const prepared = Replay.prepare({ spec, inputs, out: join(out, "run"), workers });
    const rows: Replayed[] = [];
    try {
      for (let run = 0; run <= RUNS; run++) {
        const t0 = threadCpu();
        const c0 = process.cpuUsage();
        const w0 = process.hrtime.bigint();
        const r = prepared.run();
        const wall = Number(process.hrtime.bigint() - w0);
        const c = process.cpuUsage(c0);
        const t1 = threadCpu();
        rmSync(join(out, "run"), { recursive: true, force: true });
        if (r.summary.packets.injected !== PACKETS) throw new Error(`replayed ${r.summary.packets.injected} packets`);
        const main = (t1.get(process.pid) ?? 0) - (t0.get(process.pid) ?? 0);
        let other = 0;
        for (const [tid, ms] of t1) if (tid !== process.pid) other = Math.max(other, ms - (t0.get(tid) ?? 0));
        const ns = (ms: number): number => (ms * 1e6) / PACKETS;
        if (run > 0)
          rows.push({
            process: ((c.user + c.system) * 1000) / PACKETS,
            main: ns(main),
            other: ns(other),
            wall: wall / PACKETS,
          });
      }
    } finally {
      prepared.close();
    }
    const m = (f: (r: Replayed) => number): number => median(rows.map(f));
    return { process: m((r) => r.process), main: m((r) => r.main), other: m((r) => r.other), wall: m((r) => r.wall) };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

async function replayFigures(): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const p of PIPELINES) {
    const built = BUILDS[p.name]();
    const file = capture(built, p.name);
    const plane = dataPlaneNs(built);
    const read = readNs(file);
    const one = replayed(p, file, 1);
    const two = replayed(p, file, 2);
    const busiest = Math.max(two.main, two.other, two.process / 2);
    const speedup = one.process / busiest;
    figures.push(
      { name: `${p.name}: data plane, CPU`, value: plane, unit: "ns/packet" },
      { name: `${p.name}: strata run, 1 thread, CPU`, value: one.process, unit: "ns/packet" },
      {
        name: `${p.name}: run ÷ data plane (CPU)`,
        value: one.process / plane,
        unit: "×",
        goal: { value: 1.3, better: "lower" },
      },
      { name: `${p.name}: strata run, 1 thread, main thread CPU`, value: one.main, unit: "ns/packet" },
      { name: `${p.name}: strata run, 1 thread, wall clock (load-dependent)`, value: one.wall, unit: "ns/packet" },
      {
        name: `${p.name}: run ÷ data plane (main thread CPU)`,
        value: one.main / plane,
        unit: "×",
        goal: { value: 1.3, better: "lower" },
      },
      { name: `${p.name}: pcap-read of the capture, CPU`, value: read, unit: "ns/packet" },
      {
        name: `${p.name}: run ÷ pcap-read (packets per CPU second)`,
        value: read / one.process,
        unit: "×",
        goal: { value: 0.5, better: "higher" },
      },
      { name: `${p.name}: 2 data planes, process CPU`, value: two.process, unit: "ns/packet" },
      { name: `${p.name}: 2 data planes, main thread CPU`, value: two.main, unit: "ns/packet" },
      { name: `${p.name}: 2 data planes, busiest other thread CPU`, value: two.other, unit: "ns/packet" },
      {
        name: `${p.name}: speedup on 2 idle cores (1 thread ÷ max(busiest, process ÷ 2))`,
        value: speedup,
        unit: "×",
        goal: { value: 1.7, better: "higher" },
      },
      { name: `${p.name}: serial fraction (Amdahl, 2/speedup − 1)`, value: Math.max(0, 2 / speedup - 1), unit: "" },
      { name: `${p.name}: wall-clock speedup here (load-dependent)`, value: one.wall / two.wall, unit: "×" },
    );
  }
  return figures;
}

export const replayScaling: FigureScenario = {
  name: "replay-scaling",
  description:
    "strata run end to end on 1,000,000-frame captures of l2-exact, router-layered and vxlan, in CPU per packet: " +
    "over the data plane alone, and on 2 data planes (per thread, the speedup 2 idle cores would give, the serial " +
    "fraction)",
  figures: replayFigures,
};
