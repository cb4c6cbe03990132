// queue-replay (issue 34): one capture of 64-byte frames through the l2-exact switch three ways — one thread, --workers
// 2, and strata run --queue with two `strata worker` processes on a Redis of its own — on this machine's cores. Each
// run's wall time and CPU time (this process's; with the queue, the workers' and Redis's too, from /proc), Redis's
// commands, and the bytes sent: what docs/scale-out.md's model of N machines takes. `npm run bench:queue -- --packets
// N` sets the capture's size (the issue's figure is 10,000,000); npm run bench runs 1,000,000.

import { type ChildProcess, spawn } from "node:child_process";
import { cpus, loadavg, tmpdir } from "node:os";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { QUEUE_CHUNK_PACKETS, runQueued } from "../src/queue/coordinator.js";
import { parseQueueUrl } from "../src/queue/redis.js";
import { replay } from "../src/run/replay.js";
import { positive, readFlags, refuse } from "./args.js";
import { replayCapture } from "./dataplane.js";
import { l2ExactSpec } from "./descriptions.js";
import {
  MEASURED_FILE,
  type Measured,
  type QueueBench,
  type QueueBenchRow,
  type QueuePerChunk,
} from "./queue-model.js";
import { hasRedisServer, OwnRedis } from "./redis-server.js";
import type { Figure, FigureScenario } from "./scenario.js";
import { isScript } from "./script.js";

const CLI = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
/** Packets of npm run bench's run: the capture replay-file writes too. */
const DEFAULT_PACKETS = 1_000_000;
const PACKETS_MOST = 100_000_000;

/** CPU seconds (user and system) of process `pid` so far, from /proc. */
function processCpu(pid: number | undefined): number {
  if (pid === undefined) return 0;
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8")
    .replace(/^.*\) /, "")
    .split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime: fields 14 and 15, in clock ticks
}

const ownCpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/** A `strata worker` process, once it says it takes chunks; with this process's node flags (--cpu-prof: profiled). */
async function worker(url: string): Promise<ChildProcess> {
  const argv = [...process.execArgv, CLI, "worker", "--queue", url];
  const w = spawn(process.execPath, argv, { stdio: ["ignore", "ignore", "pipe"] });
  await new Promise<void>((resolve, reject) => {
    let said = "";
    w.stderr?.on("data", (d: Buffer) => {
      said += d.toString();
      if (said.includes("taking chunks")) resolve();
    });
    w.once("exit", () => reject(new Error(`strata worker ended: ${said}`)));
  });
  return w;
}

/** Stops worker `w` as Ctrl-C would (so that a profile it takes is written), killed if it has not ended in 10 s. */
async function stop(w: ChildProcess): Promise<void> {
  if (w.exitCode !== null || w.signalCode !== null) return;
  const ended = new Promise((resolve) => w.once("exit", resolve));
  w.kill("SIGTERM");
  const timer = setTimeout(() => w.kill("SIGKILL"), 10_000);
  await ended;
  clearTimeout(timer);
}

async function commands(redis: OwnRedis): Promise<number> {
  const c = redis.client();
  try {
    return Number(/total_commands_processed:(\d+)/.exec(await c.info("stats"))?.[1]);
  } finally {
    c.disconnect();
  }
}

export async function benchQueue(packets: number): Promise<QueueBench> {
  const capture = replayCapture(packets);
  const dir = mkdtempSync(join(tmpdir(), "strata-bench-queue-"));
  const redis = new OwnRedis();
  const workers: ChildProcess[] = [];
  try {
    const spec = join(dir, "l2.yaml");
    writeFileSync(spec, l2ExactSpec());
    const inputs = [{ endpoint: "lan:feed", file: capture }];
    const rows: QueueBenchRow[] = [];
    const timed = async (way: string, run: () => unknown, others: () => number = () => 0): Promise<void> => {
      const [cpu0, other0, t0] = [ownCpu(), others(), process.hrtime.bigint()];
      await run();
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      const cpuSeconds = ownCpu() - cpu0 + others() - other0;
      rows.push({ way, seconds, cpuSeconds, packetsPerSecond: Math.round(packets / seconds) });
    };
    let n = 0;
    const out = (): string => join(dir, `out-${n++}`);
    await timed("one thread", () => replay({ spec, inputs, out: out(), workers: 1 }));
    await timed("--workers 2", () => replay({ spec, inputs, out: out(), workers: 2 }));
    await redis.start();
    workers.push(await worker(redis.url), await worker(redis.url));
    const address = parseQueueUrl(redis.url);
    // A first run warms the workers (their engines compiled once per run, their code cold): it is not counted.
    await runQueued({ spec, inputs, out: out(), address });
    const workersCpu = (): number => workers.reduce((s, w) => s + processCpu(w.pid), 0);
    const others = (): number => workersCpu() + processCpu(redis.pid);
    const queued = async (way: string, shared: string | undefined): Promise<QueuePerChunk> => {
      const [own0, workers0, redis0, commands0] = [
        ownCpu(),
        workersCpu(),
        processCpu(redis.pid),
        await commands(redis),
      ];
      let r: Awaited<ReturnType<typeof runQueued>> | undefined;
      const o = { spec, inputs, out: out(), address, ...(shared !== undefined ? { shared } : {}) };
      await timed(way, async () => (r = await runQueued(o)), others);
      const chunks = r?.chunks ?? 1;
      const perChunk = (seconds: number): number => (seconds * 1000) / chunks;
      const [one, row] = [rows[0], rows[rows.length - 1]];
      return {
        engineMs: (r?.workerCpuMs ?? 0) / chunks,
        cpuMs: perChunk(row?.cpuSeconds ?? 0),
        redisCommands: ((await commands(redis)) - commands0) / chunks,
        packetBytes: (r?.sent.packets ?? 0) / chunks,
        outputBytes: (r?.sent.outputs ?? 0) / chunks,
        overheadMs: perChunk((row?.cpuSeconds ?? 0) - (one?.cpuSeconds ?? 0)),
        coordinatorMs: perChunk(ownCpu() - own0),
        workersMs: perChunk(workersCpu() - workers0),
        redisMs: perChunk(processCpu(redis.pid) - redis0),
      };
    };
    const viaRedis = await queued("--queue, 2 worker processes", undefined);
    const viaShared = await queued("--queue --shared, 2 worker processes", dirname(capture));
    return {
      packets,
      captureBytes: statSync(capture).size,
      chunks: Math.ceil(packets / QUEUE_CHUNK_PACKETS),
      rows,
      perChunk: { redis: viaRedis, shared: viaShared },
    };
  } finally {
    await Promise.all(workers.map(stop));
    await redis.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function figures(b: QueueBench): Figure[] {
  const chunk = (what: string, c: QueuePerChunk): Figure[] => [
    { name: `${what}: a worker's CPU per chunk run`, value: c.engineMs, unit: "ms" },
    { name: `${what}: all CPU per chunk`, value: c.cpuMs, unit: "ms" },
    { name: `${what}: overhead CPU per chunk`, value: c.overheadMs, unit: "ms" },
    { name: `${what}: coordinator CPU per chunk`, value: c.coordinatorMs, unit: "ms" },
    { name: `${what}: workers' CPU per chunk`, value: c.workersMs, unit: "ms" },
    { name: `${what}: Redis CPU per chunk`, value: c.redisMs, unit: "ms" },
    { name: `${what}: Redis commands per chunk`, value: c.redisCommands, unit: "commands" },
    { name: `${what}: packet bytes per chunk`, value: c.packetBytes, unit: "bytes" },
    { name: `${what}: output bytes per chunk`, value: c.outputBytes, unit: "bytes" },
  ];
  return [
    ...b.rows.flatMap((r) => [
      { name: `${r.way}: packets/s`, value: r.packetsPerSecond, unit: "packets/s" },
      { name: `${r.way}: CPU`, value: r.cpuSeconds, unit: "s" },
    ]),
    { name: "queue: chunks", value: b.chunks, unit: "chunks" },
    ...chunk("queue", b.perChunk.redis),
    ...chunk("queue --shared", b.perChunk.shared),
  ];
}

export const queueReplay: FigureScenario = {
  name: "queue-replay",
  description:
    `${DEFAULT_PACKETS.toLocaleString("en-US")} 64-byte frames through the l2-exact switch on one thread, on 2 ` +
    "threads, and through strata run --queue with 2 worker processes on a Redis of its own (npm run bench:queue for " +
    "other sizes)",
  async figures() {
    if (!hasRedisServer()) {
      process.stderr.write("bench: queue-replay: left out: redis-server is not installed\n");
      return [];
    }
    return figures(await benchQueue(DEFAULT_PACKETS));
  },
};

async function main(): Promise<void> {
  const usage = "npm run bench:queue [-- --packets N] [-- --json] [-- --write] (--write: bench/queue-measured.json)";
  const flags = readFlags({
    options: { packets: { type: "string" }, json: { type: "boolean" }, write: { type: "boolean" } },
  });
  if (typeof flags === "string") return refuse("bench:queue", flags, usage);
  const packets = positive("--packets", flags.values.packets ?? `${DEFAULT_PACKETS}`, PACKETS_MOST, true);
  if (typeof packets === "string") return refuse("bench:queue", packets, usage);
  if (!hasRedisServer()) return refuse("bench:queue", "redis-server is not installed", usage);
  const load = (): string =>
    loadavg()
      .map((l) => l.toFixed(1))
      .join(" ");
  const before = load();
  const bench = await benchQueue(packets);
  const measured: Measured = {
    machine: `${cpus()[0]?.model ?? "a CPU"}, ${cpus().length} cores`,
    load: `${before} before, ${load()} after`,
    bench,
  };
  if (flags.values.write === true) writeFileSync(MEASURED_FILE, `${JSON.stringify(measured, null, 2)}\n`);
  if (flags.values.json === true) console.log(JSON.stringify(measured));
  else for (const f of figures(bench)) console.log(`${f.name.padEnd(40)} ${f.value.toFixed(2).padStart(14)} ${f.unit}`);
}

if (isScript(import.meta.url)) void main();
