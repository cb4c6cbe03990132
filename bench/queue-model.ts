// docs/scale-out.md's model of N machines, from what bench/queue.ts measured (bench/queue-measured.json, written by
// `npm run bench:queue -- --packets 10000000 --write`): each stage's chunks per second — the workers (N cores), the
// coordinator's one thread, Redis's one thread, the link the chunk's bytes cross most — and the run's rate, the
// least of them. The docs' tables are this module's text (`node dist/bench/queue-model.js` prints them), and
// test/bench/queue-model.test.ts checks the docs hold them, made from the measured file.

import { readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { isScript } from "./script.js";

export interface QueueBenchRow {
  readonly way: string;
  readonly seconds: number;
  /** CPU seconds of every process the way uses (this one; the workers and Redis with the queue). */
  readonly cpuSeconds: number;
  readonly packetsPerSecond: number;
}

/** Per chunk of a queued run: the workers' engine CPU ms, all CPU ms, Redis commands, bytes sent each way. */
export interface QueuePerChunk {
  readonly engineMs: number;
  readonly cpuMs: number;
  readonly redisCommands: number;
  readonly packetBytes: number;
  readonly outputBytes: number;
  /** CPU ms per chunk the queued run took beyond the one-thread run's per chunk: the queue's overhead. */
  readonly overheadMs: number;
  /** CPU ms per chunk of the coordinator, of the two workers, and of Redis. */
  readonly coordinatorMs: number;
  readonly workersMs: number;
  readonly redisMs: number;
}

export interface QueueBench {
  readonly packets: number;
  /** The capture's size in bytes. */
  readonly captureBytes: number;
  readonly chunks: number;
  readonly rows: readonly QueueBenchRow[];
  /** The queued runs' figures per chunk: packets sent through Redis, and read from --shared. */
  readonly perChunk: { readonly redis: QueuePerChunk; readonly shared: QueuePerChunk };
}

const HERE = dirname(fileURLToPath(import.meta.url));
/** bench/queue-measured.json, found from this file in bench/ and in dist/bench/. */
export const MEASURED_FILE = join(
  HERE,
  basename(dirname(HERE)) === "dist" ? "../.." : "..",
  "bench/queue-measured.json",
);

/** What the model takes per chunk, for one way of moving a chunk's bytes. */
export interface ModelInputs {
  readonly packets: number;
  /** CPU ms of a worker core, of the coordinator, of Redis. */
  readonly w: number;
  readonly c: number;
  readonly r: number;
  /** Bytes the busiest link carries per chunk: Redis's (each byte in and out again), or the storage's. */
  readonly b: number;
  readonly link: string;
}

/** The bench's measurement, what the docs were made from. */
export interface Measured {
  readonly machine: string;
  readonly load: string;
  readonly bench: QueueBench;
}

export function readMeasured(file = MEASURED_FILE): Measured {
  return JSON.parse(readFileSync(file, "utf8")) as Measured;
}

/** The model's inputs: through Redis (packets and outputs cross Redis's link twice), or with --shared (the capture
 * read by the coordinator and the workers, the outputs written and read: all through the storage's link). */
export function modelInputs(b: QueueBench, way: "redis" | "shared"): ModelInputs {
  const c: QueuePerChunk = b.perChunk[way];
  const packets = b.packets / b.chunks;
  const base = { packets, w: c.workersMs / 2, c: c.coordinatorMs, r: c.redisMs };
  if (way === "redis") return { ...base, b: 2 * (c.packetBytes + c.outputBytes), link: "Redis's" };
  return { ...base, b: 2 * (b.captureBytes / b.chunks + c.outputBytes), link: "the storage's" };
}

const LINK_BYTES_PER_S = { "10 Gb/s": 1.25e9, "1 Gb/s": 1.25e8 } as const;
const fmt = (x: number, digits = 0): string =>
  x.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** Chunks per second each stage can take with `n` worker cores. */
export function stages(m: ModelInputs, n: number): { stage: string; chunksPerS: number }[] {
  return [
    { stage: "workers", chunksPerS: (1000 * n) / m.w },
    { stage: "the coordinator (one thread)", chunksPerS: 1000 / m.c },
    { stage: "Redis (one thread)", chunksPerS: m.r > 0 ? 1000 / m.r : Number.POSITIVE_INFINITY },
    ...Object.entries(LINK_BYTES_PER_S).map(([speed, bytes]) => ({
      stage: `${m.link} link, ${speed}`,
      chunksPerS: m.b > 0 ? bytes / m.b : Number.POSITIVE_INFINITY,
    })),
  ];
}

/** The model's table for one way: each stage's chunks/s at N = 1, 10, 100 worker cores, and the run's packets/s. */
export function modelTable(m: ModelInputs): string {
  const ns = [1, 10, 100];
  const cell = (x: number): string => (Number.isFinite(x) ? fmt(x) : "no limit");
  const rows = stages(m, 1).map(
    (s, k) => `| ${s.stage} | ${ns.map((n) => cell(stages(m, n)[k]?.chunksPerS ?? 0)).join(" | ")} |`,
  );
  const rate = (link: number): string =>
    ns
      .map((n) => {
        const all = stages(m, n).filter((s, k) => !s.stage.includes("link") || k === 3 + link);
        const least = all.reduce((a, s) => (s.chunksPerS < a.chunksPerS ? s : a));
        return `${fmt((least.chunksPerS * m.packets) / 1e6, 2)} M (${least.stage.replace(/ \(one thread\)|, .*/, "")})`;
      })
      .join(" | ");
  return [
    `Per chunk of ${fmt(m.packets)} packets: \`w\` = ${fmt(m.w, 1)} ms of a worker core, \`c\` = ${fmt(m.c, 1)} ms ` +
      `of the coordinator, \`r\` = ${fmt(m.r, 1)} ms of Redis, \`b\` = ${fmt(m.b / 1e6, 1)} MB through ${m.link} link.`,
    "",
    "| stage: chunks/s it can take | N = 1 | N = 10 | N = 100 |",
    "|---|---|---|---|",
    ...rows,
    `| **packets/s of the run, 10 Gb/s** (the stage that stops it) | ${rate(0)} |`,
    `| **packets/s of the run, 1 Gb/s** | ${rate(1)} |`,
  ].join("\n");
}

/** The docs' figures table: each way's packets/s and CPU, and the queue's costs per chunk. */
export function figuresTable(m: Measured): string {
  const b = m.bench;
  const rows = b.rows.map((r) => `| ${r.way} | ${fmt(r.packetsPerSecond)} | ${fmt(r.cpuSeconds, 2)} |`);
  const one = b.rows[0];
  const perChunkOne = one === undefined ? 0 : (1000 * one.cpuSeconds) / b.chunks;
  const chunk = (what: string, get: (c: QueuePerChunk) => string): string =>
    `| ${what} | ${get(b.perChunk.redis)} | ${get(b.perChunk.shared)} |`;
  return [
    `${fmt(b.packets)} packets of 64 bytes, ${fmt(b.chunks)} chunks; ${m.machine}; load average ${m.load}.`,
    "",
    "| way | packets/s (wall) | CPU, s (every process) |",
    "|---|---|---|",
    ...rows,
    "",
    `Per chunk (one thread spends ${fmt(perChunkOne, 1)} ms of CPU on a chunk's packets, writing included):`,
    "",
    "| | `--queue` | `--queue --shared` |",
    "|---|---|---|",
    chunk("a worker's run of the chunk (its packets read, run, outputs encoded), ms", (c) => fmt(c.engineMs, 1)),
    chunk("the two workers, all in, ms", (c) => fmt(c.workersMs, 1)),
    chunk("the coordinator, ms", (c) => fmt(c.coordinatorMs, 1)),
    chunk("Redis, ms", (c) => fmt(c.redisMs, 1)),
    chunk("Redis commands", (c) => fmt(c.redisCommands)),
    chunk("packets sent through Redis, MB", (c) => fmt(c.packetBytes / 1e6, 2)),
    chunk("outputs taken back, MB", (c) => fmt(c.outputBytes / 1e6, 2)),
    chunk("**CPU beyond one thread's, ms**", (c) => fmt(c.overheadMs, 1)),
    chunk("the same, as a share of one thread's", (c) => `${fmt((100 * c.overheadMs) / perChunkOne)} %`),
  ].join("\n");
}

/** Every table docs/scale-out.md holds from the measurement, in its order. */
export function docsTables(m: Measured): string[] {
  return [figuresTable(m), modelTable(modelInputs(m.bench, "redis")), modelTable(modelInputs(m.bench, "shared"))];
}

if (isScript(import.meta.url)) console.log(docsTables(readMeasured()).join("\n\n"));
