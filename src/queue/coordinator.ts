// `strata run --queue URL`: a replay whose chunks run on `strata worker`s anywhere (docs/scale-out.md). Everything a
// one-machine replay checks is checked first, with the same code and the same lines (the description, its rows on a
// data plane, the endpoints, the captures, --out); nothing is queued before. The inputs are read here and cut into
// chunks of CHUNK_PACKETS as --workers cuts them (src/run/chunk-runner.ts: the same parts, numbered the same); each
// chunk's packets go to Redis and a job names them. At most WINDOW chunks are out at once; their outputs are taken
// back in chunk order, each chunk once (a chunk run twice, after a worker was thought dead, is the same), written
// through Outputs into a stage beside --out, and moved into --out when the run is done (./stage.ts).

import { randomBytes } from "node:crypto";
import { closeSync, fstatSync, openSync, readSync, rmSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { Queue, QueueEvents } from "bullmq";
import type { Redis } from "ioredis";
import { compile } from "../control/compile.js";
import { parseSpec } from "../description/load.js";
import { readDescription } from "../description/read.js";
import { Engine } from "../engine/engine.js";
import { Outputs, outputFiles } from "../engine/outputs.js";
import { DELIVERED_DIR, LINKS_DIR } from "../engine/recordings.js";
import { addCounters, type Summary, summarize } from "../engine/summary.js";
import type { InputError } from "../errors.js";
import { OutDir } from "../out-dir.js";
import { CHUNK_PACKETS } from "../run/chunk-runner.js";
import { type Inputs, openInputs } from "../run/inputs.js";
import { loadUpdates, type PreparedUpdates, prepareUpdates, UpdateSchedule } from "../run/updates.js";
import type { ReplayOptions } from "../run/replay.js";
import { checkLimits, DEFAULT_RUNNER } from "../wasm/runner.js";
import { EXIT_BAD_INPUT, EXIT_INTERRUPTED } from "../cli/exit-codes.js";
import { type ChunkOutputs, decodeOutputs } from "./chunk-codec.js";
import { cutChunks } from "./cut.js";
import { underShared } from "./shared-input.js";
import { makeStage, moveInto } from "./stage.js";
import {
  CHUNK_ATTEMPTS,
  type ChunkDone,
  type ChunkJob,
  KEY_TTL_S,
  PROTOCOL,
  RUN_QUEUE_PREFIX,
  RUNS_KEY,
  runKeys,
  type RunSetup,
  sha256,
  STRATA_VERSION,
} from "./protocol.js";
import { client, type QueueAddress, reach, setPieces } from "./redis.js";

/** Chunks out on the queue at once, at most: what Redis holds (their packets and outputs) while the first runs. */
export const WINDOW = 16;
/**
 * Packets per chunk on the queue: eight of the threads' chunks (CHUNK_PACKETS), 131,072. A chunk's fixed cost (its
 * job's BullMQ commands, its keys, its events: about 60 Redis commands, a few ms of CPU in all) is then a few per
 * cent of what moving its packets costs (docs/scale-out.md); at 64-byte frames it holds about 12 MB each way, and
 * WINDOW of them fit in Redis's memory.
 */
export const QUEUE_CHUNK_PACKETS = 8 * CHUNK_PACKETS;
/** Milliseconds between the coordinator's looks that Redis answers. */
const WATCH_MS = 2000;
/** Milliseconds the clean-up at the end may wait for Redis. */
const CLEANUP_MS = 15_000;
/** Times the clean-up asks BullMQ to obliterate the run's queue. */
const OBLITERATE_TRIES = 4;

/** `strata run`'s options that a queued run takes (the others it refuses), and the queue's. */
export interface QueueRunOptions extends Pick<
  ReplayOptions,
  "spec" | "inputs" | "out" | "force" | "trace" | "tracePackets" | "hopLimit" | "copyLimit" | "updates"
> {
  readonly address: QueueAddress;
  /** --shared DIR: where workers read the one capture's byte ranges (when it is under it), and write outputs too large
   * for Redis. */
  readonly shared?: string;
  /** Test tuning: with --shared, outputs of more bytes go through a file there (default SHARED_OUTPUTS_FROM). */
  readonly sharedOutputsFrom?: number;
  /** Packets per chunk (QUEUE_CHUNK_PACKETS unless a test asks for small ones). */
  readonly chunkPackets?: number;
  /** Resolves when the run is to stop (Ctrl-C): its jobs are removed, --out is left as it was claimed. */
  readonly stop?: Promise<void>;
  /** From the queue's events: bytes of the inputs read, of all, and packets whose chunk is done. */
  readonly progress?: (done: number, total: number, packets: number) => void;
  /** Told the run's queue once its first job is on it. */
  readonly queued?: (queue: string) => void;
}

export interface QueueRunResult {
  readonly summary: Summary;
  readonly errors: readonly InputError[];
  readonly chunks: number;
  /** Bytes of the chunks' packets sent, and of their outputs taken back (docs/scale-out.md's model). */
  readonly sent: { readonly packets: number; readonly outputs: number };
  /** CPU ms the workers said they spent running the chunks taken (their engines only). */
  readonly workerCpuMs: number;
  readonly trace?: { readonly bytes: number; readonly packets: number };
}

/** Why a queued run stopped before its end: one line, and the exit code. */
export class QueueRunError extends Error {
  readonly code: number;
  constructor(message: string, code: number) {
    super(message);
    this.code = code;
  }
}

/** What a run checks before anything is queued, and holds to its end. */
interface Prepared {
  readonly setup: RunSetup;
  readonly engine: Engine;
  readonly inputs: Inputs;
  readonly inputFiles: readonly string[];
  readonly compiled: ReturnType<typeof compile>;
  /** --updates, checked as `strata run` checks them. */
  readonly updates?: PreparedUpdates;
}

/** The description, its rows on a data plane, the endpoints and the captures, as `strata run` checks them. */
function prepare(o: QueueRunOptions): Prepared {
  checkLimits(o);
  const description = readDescription(o.spec);
  const compiled = compile(parseSpec(description, o.spec));
  const hopLimit = o.hopLimit ?? DEFAULT_RUNNER.hopLimit;
  const copyLimit = o.copyLimit ?? DEFAULT_RUNNER.copyLimit;
  const engine = Engine.open({ compiled, endpoints: o.inputs.map((i) => i.endpoint), hopLimit, copyLimit });
  const files = o.inputs.map((i) => i.file);
  const endpoints = engine.endpoints.map((e) => e.text);
  const updates = o.updates === undefined ? undefined : prepareUpdates(loadUpdates(o.updates), compiled, endpoints);
  const inputs = openInputs(engine.endpoints, files, DEFAULT_RUNNER.batchPackets);
  const trace = o.trace === true || o.tracePackets !== undefined;
  const setup: RunSetup = {
    protocol: PROTOCOL,
    version: STRATA_VERSION,
    description,
    digest: sha256(description),
    spec: o.spec,
    endpoints,
    trace,
    ...(o.tracePackets !== undefined ? { tracePackets: o.tracePackets } : {}),
    hopLimit,
    copyLimit,
    // A path the workers can take as it is: not relative to where the coordinator was started.
    ...(o.shared !== undefined ? { shared: resolve(o.shared) } : {}),
    ...(o.sharedOutputsFrom !== undefined ? { sharedOutputsFrom: o.sharedOutputsFrom } : {}),
    ...(updates !== undefined ? { updates: { list: updates.list, descriptions: updates.descriptions } } : {}),
  };
  const read = [o.spec, ...files, ...(o.updates !== undefined ? [o.updates, ...(updates?.files ?? [])] : [])];
  return { setup, engine, inputs, inputFiles: read, compiled, ...(updates !== undefined ? { updates } : {}) };
}

/** Replays `o.inputs` through the workers of `o.address` into `o.out`; QueueRunError if the run cannot end. */
export async function runQueued(o: QueueRunOptions): Promise<QueueRunResult> {
  const p = prepare(o);
  try {
    const redis = client(o.address);
    try {
      await reach(redis, o.address);
      const claim = OutDir.claim(o.out, {
        command: "run",
        inputs: p.inputFiles,
        force: o.force === true,
        files: outputFiles(p.compiled, p.setup.trace),
        dirs: [LINKS_DIR, DELIVERED_DIR],
      });
      try {
        return await staged(o, p, redis);
      } finally {
        claim.release();
      }
    } finally {
      redis.disconnect();
    }
  } finally {
    p.inputs.close();
  }
}

/** The run, its outputs staged beside --out and moved into it at the end. */
async function staged(o: QueueRunOptions, p: Prepared, redis: Redis): Promise<QueueRunResult> {
  const stage = makeStage(o.out);
  try {
    const out = Outputs.open(stage, p.compiled, {
      command: "run",
      inputs: p.inputFiles,
      force: false,
      trace: p.setup.trace,
    });
    let result: QueueRunResult;
    try {
      result = await queued(o, p, redis, out);
    } finally {
      out.release();
    }
    moveInto(stage, o.out);
    return result;
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** A run's queue, its events and its keys in Redis; every wait on it ends when the run is stopped or Redis is gone. */
class RunQueue {
  readonly name = `${RUN_QUEUE_PREFIX}${randomBytes(8).toString("hex")}`;
  readonly keys = runKeys(this.name);
  readonly #redis: Redis;
  /** --shared, where outputs too large for Redis are. */
  readonly #shared: string | undefined;
  readonly #queue: Queue<ChunkJob, ChunkDone>;
  readonly #events: QueueEvents;
  /** Rejects when the run must stop: Ctrl-C, or Redis gone. */
  readonly #stopped: Promise<never>;
  #stop: (err: QueueRunError) => void = () => {};
  readonly #watch: NodeJS.Timeout;
  /** The last add(), settled or not: the clean-up waits for it, so that nothing is queued after it. */
  #adding: Promise<unknown> = Promise.resolve();
  /** Packets of each chunk queued and not yet done, by job id (for the progress). */
  readonly #packets = new Map<string, number>();
  /** The buffer outputs read from --shared are read into (#readOutputs). */
  #outputs = Buffer.alloc(0);

  constructor(o: QueueRunOptions, redis: Redis, onDone: (packets: number) => void) {
    this.#redis = redis;
    this.#shared = o.shared;
    this.#stopped = new Promise<never>((_, reject) => {
      this.#stop = reject;
    });
    this.#stopped.catch(() => {});
    void o.stop?.then(() =>
      this.#stop(
        new QueueRunError(
          "interrupted: the run's jobs are removed from the queue, --out is left empty",
          EXIT_INTERRUPTED,
        ),
      ),
    );
    const connection = o.address.options;
    this.#queue = new Queue<ChunkJob, ChunkDone>(this.name, { connection });
    this.#events = new QueueEvents(this.name, { connection });
    // Redis away a moment: they reconnect.
    this.#queue.on("error", () => {});
    this.#events.on("error", () => {});
    // Each chunk out waits on the events (job.waitUntilFinished): WINDOW listeners at once.
    this.#queue.setMaxListeners(2 * WINDOW + 10);
    this.#events.setMaxListeners(2 * WINDOW + 10);
    this.#events.on("completed", ({ jobId }) => {
      const n = this.#packets.get(jobId);
      this.#packets.delete(jobId);
      if (n !== undefined) onDone(n);
    });
    this.#watch = setInterval(() => {
      redis
        .ping()
        .catch((err: unknown) =>
          this.#stop(
            new QueueRunError(
              `--queue ${o.address.shown}: Redis went away: ${err instanceof Error ? err.message : String(err)} ` +
                "(the run stopped; --out holds nothing of it)",
              EXIT_BAD_INPUT,
            ),
          ),
        );
    }, WATCH_MS);
  }

  /** Stores the setup and names the run in RUNS_KEY: workers take its chunks from now on. */
  async open(setup: RunSetup): Promise<void> {
    await this.race(this.#events.waitUntilReady());
    await this.race(this.#redis.set(this.keys.setup, JSON.stringify(setup), "EX", KEY_TTL_S));
    await this.race(this.#redis.sadd(RUNS_KEY, this.name));
  }

  /** `p`, unless the run stops first. */
  race<T>(p: Promise<T>): Promise<T> {
    return Promise.race([p, this.#stopped]);
  }

  /** Queues chunk `data` with its packets; resolves once queued, to the promise of its result (QueueRunError if it
   * failed). */
  async add(data: ChunkJob, payload: Buffer | undefined): Promise<{ done: Promise<ChunkDone> }> {
    const jobId = `chunk-${data.chunk}`;
    this.#packets.set(jobId, data.packets);
    const adding = (async () => {
      // Set before add() resolves: the payload's buffer is reused, and the socket holds it (not copied) until sent.
      if (payload !== undefined) await setPieces(this.#redis, this.keys.packets(data.chunk), [payload], KEY_TTL_S);
      return this.#queue.add("chunk", data, { jobId, attempts: CHUNK_ATTEMPTS });
    })();
    this.#adding = adding.catch(() => {});
    const job = await this.race(adding);
    const done = job.waitUntilFinished(this.#events).then(
      (r) => r,
      (err: unknown) => {
        throw new QueueRunError(
          `chunk ${data.chunk} failed on a worker: ${err instanceof Error ? err.message : String(err)}`,
          EXIT_BAD_INPUT,
        );
      },
    );
    done.catch(() => {}); // taken, and its failure thrown, in chunk order
    return { done };
  }

  /** A done chunk's outputs, read back and deleted with its packets. */
  async take(done: ChunkDone): Promise<ChunkOutputs> {
    let bytes: Buffer | null = null;
    // The outputs fetched and the chunk's keys deleted in one round trip.
    const gone = [this.keys.packets(done.chunk), this.keys.outputs(done.chunk)] as const;
    if (done.key !== undefined) {
      const replies = await this.race(
        this.#redis
          .pipeline()
          .getBuffer(done.key)
          .del(...gone)
          .exec(),
      );
      const [err, got] = replies?.[0] ?? [new Error("no reply"), null];
      if (err !== null) throw err;
      bytes = got as Buffer | null;
    } else if (done.file !== undefined && this.#shared !== undefined) {
      // A name, never a path: a worker names no file outside --shared.
      if (basename(done.file) !== done.file || done.file.startsWith("."))
        throw new QueueRunError(`chunk ${done.chunk}'s outputs are named ${done.file}: not a file of --shared`, 2);
      const path = join(this.#shared, done.file);
      bytes = this.#readOutputs(path);
      rmSync(path, { force: true });
      await this.race(this.#redis.del(...gone));
    }
    if (bytes === null) throw new QueueRunError(`chunk ${done.chunk}'s outputs are gone from Redis`, EXIT_BAD_INPUT);
    return decodeOutputs(bytes);
  }

  /**
   * The file at `path`, read into a buffer that serves chunk after chunk (grown to the largest): valid until the next
   * chunk's are read. A new 10 MB buffer a chunk costs its pages' faults and the collector's work, more than the read.
   */
  #readOutputs(path: string): Buffer {
    const fd = openSync(path, "r");
    try {
      const size = fstatSync(fd).size;
      if (size > this.#outputs.length) this.#outputs = Buffer.allocUnsafeSlow(Math.max(size, 2 * this.#outputs.length));
      let at = 0;
      for (let n = 1; at < size && n > 0; at += n) n = readSync(fd, this.#outputs, at, size - at, at);
      return this.#outputs.subarray(0, at);
    } finally {
      closeSync(fd);
    }
  }

  /** Removes the run: its jobs (the queue obliterated), its keys, its name; waits CLEANUP_MS for Redis at most. */
  async close(chunks: number): Promise<void> {
    clearInterval(this.#watch);
    const k = this.keys;
    // The chunk being added when the run stopped is the one after the last queued.
    const keys = [k.setup, ...Array.from({ length: chunks + 1 }, (_, c) => [k.packets(c), k.outputs(c)]).flat()];
    const cleanup = (async () => {
      await this.#adding;
      // The run's name and keys first (two commands), then the queue (BullMQ's many): a cleanup cut short at
      // CLEANUP_MS, or a queue that will not go, leaves no setup for a worker to find.
      await this.#redis.srem(RUNS_KEY, this.name);
      for (let at = 0; at < keys.length; at += 1000) await this.#redis.del(...keys.slice(at, at + 1000));
      // BullMQ's obliterate pauses the queue, then refuses it if it finds it not paused: a refusal (swallowed below, as
      // any clean-up failure is) is tried again, which pauses it again.
      for (let tries = 1; ; tries++) {
        try {
          await this.#queue.obliterate({ force: true });
          return;
        } catch (err) {
          if (tries >= OBLITERATE_TRIES) throw err;
          await new Promise((r) => setTimeout(r, 100 * tries));
        }
      }
    })();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([cleanup.catch(() => {}), new Promise((r) => (timer = setTimeout(r, CLEANUP_MS)))]);
    clearTimeout(timer);
    await Promise.all([this.#queue.close(), this.#events.close()]).catch(() => {});
  }
}

/** The run on the queue: chunks out, outputs back in order into `out`, the summary written. */
async function queued(o: QueueRunOptions, p: Prepared, redis: Redis, out: Outputs): Promise<QueueRunResult> {
  const inputs = p.inputs;
  let donePackets = 0;
  const q = new RunQueue(o, redis, (n) => {
    donePackets += n;
    o.progress?.(inputs.bytesRead, inputs.totalBytes, donePackets);
  });
  let chunks = 0;
  try {
    await q.open(p.setup);
    o.queued?.(q.name);
    const started = process.hrtime.bigint();
    p.engine.connect();
    const sum = p.engine.counters();
    const pending = new Map<number, Promise<ChunkDone>>();
    let written = 0;
    const sent = { packets: 0, outputs: 0 };
    let workerCpuMs = 0;
    const writeNext = async (): Promise<void> => {
      const next = pending.get(written);
      if (next === undefined) throw new Error(`chunk ${written} was not queued`);
      const done = await q.race(next);
      pending.delete(written);
      const got = await q.take(done);
      sent.outputs += done.bytes;
      workerCpuMs += done.cpuMs;
      for (const r of got.records) out.recordings.write(r.recording, r.bytes, 0, r.bytes.length, r.crc);
      if (got.lines.packets.length > 0) out.trace?.append(got.lines.text, got.lines.packets, got.lines.bytes);
      addCounters(sum, got.counters);
      written++;
    };
    const files = o.inputs.map((i) => i.file);
    // With updates, a one-thread replay reads batches (cut at the updates' times), not blocks: so are the chunks cut.
    const schedule = p.updates === undefined ? undefined : new UpdateSchedule(p.updates, p.engine);
    const shared =
      o.shared !== undefined && files.length === 1 && schedule === undefined
        ? underShared(o.shared, files[0] ?? "")
        : undefined;
    await cutChunks(inputs, p.engine, o.chunkPackets ?? QUEUE_CHUNK_PACKETS, { shared, schedule }, async (c) => {
      const data: ChunkJob = {
        protocol: PROTOCOL,
        version: STRATA_VERSION,
        digest: p.setup.digest,
        chunk: chunks,
        first: c.first,
        packets: c.packets,
        ...(c.input !== undefined ? { input: c.input } : {}),
        sent: c.payload !== undefined,
        ...(schedule !== undefined ? { updatesBefore: c.updatesBefore } : {}),
      };
      sent.packets += c.payload?.length ?? 0;
      pending.set(chunks, (await q.add(data, c.payload)).done);
      chunks++;
      while (pending.size >= WINDOW) await writeNext();
    });
    while (written < chunks) await writeNext();
    const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
    const summary = out.finish({
      ...summarize(sum, p.engine.installed, inputs.stats, elapsed),
      spec: p.compiled.spec.file,
      ...(schedule !== undefined ? { updates: schedule.applied } : {}),
    });
    const trace = out.trace;
    return {
      summary,
      errors: inputs.errors,
      chunks,
      sent,
      workerCpuMs,
      ...(trace !== undefined ? { trace: { bytes: trace.bytes, packets: trace.lines } } : {}),
    };
  } finally {
    p.engine.disconnect();
    await q.close(chunks);
  }
}
