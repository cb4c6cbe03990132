// queue-replay (issue 34): one capture of 64-byte frames through the l2-exact switch three ways — one thread, --workers
// 2, and strata run --queue with two `strata worker` processes on a Redis of its own — on this machine's cores. Each
// run's wall time and CPU time (this process's; with the queue, the workers' and Redis's too, from /proc), Redis's
// commands, and the bytes sent: what docs/scale-out.md's model of N machines takes. `npm run bench:queue -- --packets
// N` sets the capture's size (the issue's figure is 10,000,000); npm run bench runs 1,000,000.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runQueued } from "../src/queue/coordinator.js";
import { parseQueueUrl } from "../src/queue/redis.js";
import { replay } from "../src/run/replay.js";
import { positive, readFlags, refuse } from "./args.js";
import { replayCapture } from "./dataplane.js";
import { l2ExactSpec } from "./descriptions.js";
import { hasRedisServer, OwnRedis } from "./redis-server.js";
import type { Figure, FigureScenario } from "./scenario.js";

const CLI = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
/** Packets of npm run bench's run: the capture replay-file writes too. */
const DEFAULT_PACKETS = 1_000_000;
const PACKETS_MOST = 100_000_000;

export interface QueueBenchRow {
  readonly way: string;
  readonly seconds: number;
  /** CPU seconds of every process the way uses (this one; the workers and Redis with the queue). */
  readonly cpuSeconds: number;
  readonly packetsPerSecond: number;
}

export interface QueueBench {
  readonly packets: number;
  readonly chunks: number;
  readonly rows: readonly QueueBenchRow[];
  /** Per chunk, with the queue: the workers' engine CPU ms, all CPU ms, Redis commands, bytes sent each way. */
  readonly perChunk: {
    readonly engineMs: number;
    readonly cpuMs: number;
    readonly redisCommands: number;
    readonly packetBytes: number;
    readonly outputBytes: number;
    /** CPU ms per chunk the queued run took beyond the one-thread run's per chunk: the queue's overhead. */
    readonly overheadMs: number;
    /** CPU ms per chunk of the coordinator, and of the two workers (Redis's is redisCpuSeconds). */
    readonly coordinatorMs: number;
    readonly workersMs: number;
  };
  readonly redisCpuSeconds: number;
}

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

/** A `strata worker` process, once it says it takes chunks. */
async function worker(url: string): Promise<ChildProcess> {
  const w = spawn(process.execPath, [CLI, "worker", "--queue", url], { stdio: ["ignore", "ignore", "pipe"] });
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
    const redisCpu0 = processCpu(redis.pid);
    const workersCpu = (): number => workers.reduce((s, w) => s + processCpu(w.pid), 0);
    const [own0, workers0] = [ownCpu(), workersCpu()];
    const commands0 = await commands(redis);
    let result: Awaited<ReturnType<typeof runQueued>> | undefined;
    const others = (): number => workersCpu() + processCpu(redis.pid);
    await timed(
      "--queue, 2 worker processes",
      async () => (result = await runQueued({ spec, inputs, out: out(), address })),
      others,
    );
    const chunks = result?.chunks ?? 1;
    const [ownUsed, workersUsed] = [ownCpu() - own0, workersCpu() - workers0];
    const [one, queued] = [rows[0], rows[2]];
    return {
      packets,
      chunks,
      rows,
      perChunk: {
        engineMs: (result?.workerCpuMs ?? 0) / chunks,
        cpuMs: ((queued?.cpuSeconds ?? 0) * 1000) / chunks,
        redisCommands: ((await commands(redis)) - commands0) / chunks,
        packetBytes: (result?.sent.packets ?? 0) / chunks,
        outputBytes: (result?.sent.outputs ?? 0) / chunks,
        overheadMs: (((queued?.cpuSeconds ?? 0) - (one?.cpuSeconds ?? 0)) * 1000) / chunks,
        coordinatorMs: (ownUsed * 1000) / chunks,
        workersMs: (workersUsed * 1000) / chunks,
      },
      redisCpuSeconds: processCpu(redis.pid) - redisCpu0,
    };
  } finally {
    for (const w of workers) w.kill("SIGKILL");
    await redis.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function figures(b: QueueBench): Figure[] {
  return [
    ...b.rows.flatMap((r) => [
      { name: `${r.way}: packets/s`, value: r.packetsPerSecond, unit: "packets/s" },
      { name: `${r.way}: CPU`, value: r.cpuSeconds, unit: "s" },
    ]),
    { name: "queue: chunks", value: b.chunks, unit: "chunks" },
    { name: "queue: engine CPU per chunk", value: b.perChunk.engineMs, unit: "ms" },
    { name: "queue: all CPU per chunk", value: b.perChunk.cpuMs, unit: "ms" },
    { name: "queue: overhead CPU per chunk", value: b.perChunk.overheadMs, unit: "ms" },
    { name: "queue: coordinator CPU per chunk", value: b.perChunk.coordinatorMs, unit: "ms" },
    { name: "queue: workers' CPU per chunk", value: b.perChunk.workersMs, unit: "ms" },
    { name: "queue: Redis commands per chunk", value: b.perChunk.redisCommands, unit: "commands" },
    { name: "queue: packet bytes per chunk", value: b.perChunk.packetBytes, unit: "bytes" },
    { name: "queue: output bytes per chunk", value: b.perChunk.outputBytes, unit: "bytes" },
    { name: "queue: Redis CPU", value: b.redisCpuSeconds, unit: "s" },
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
  const usage = "npm run bench:queue [-- --packets N] [-- --json]";
  const flags = readFlags({ options: { packets: { type: "string" }, json: { type: "boolean" } } });
  if (typeof flags === "string") return refuse("bench:queue", flags, usage);
  const packets = positive("--packets", flags.values.packets ?? `${DEFAULT_PACKETS}`, PACKETS_MOST, true);
  if (typeof packets === "string") return refuse("bench:queue", packets, usage);
  if (!hasRedisServer()) return refuse("bench:queue", "redis-server is not installed", usage);
  const b = await benchQueue(packets);
  if (flags.values.json === true) console.log(JSON.stringify(b));
  else for (const f of figures(b)) console.log(`${f.name.padEnd(40)} ${f.value.toFixed(2).padStart(14)} ${f.unit}`);
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) void main();
